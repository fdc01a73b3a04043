#!/usr/bin/env bash
# action.yml, step "Install driftaudit": the binary given in `driftaudit:`,
# else this action's source built once with cargo into the runner's tool
# cache (keyed by the source's commit). Writes `driftaudit=PATH` to $GITHUB_OUTPUT.
set -euo pipefail
if [ -n "${INPUT_DRIFTAUDIT:-}" ]; then
  bin=$INPUT_DRIFTAUDIT
  case $bin in */*) ;; *) bin=$(command -v "$bin" || true) ;; esac
  [ -n "$bin" ] && [ -x "$bin" ] || { echo "::error title=driftaudit::\`$INPUT_DRIFTAUDIT\` is not an executable"; exit 2; }
else
  src=${GITHUB_ACTION_PATH:?}
  rev=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo local)
  root=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/driftaudit/$rev
  bin=$root/bin/driftaudit
  if [ ! -x "$bin" ]; then
    command -v cargo >/dev/null || { echo "::error title=driftaudit::no cargo on this runner: give \`driftaudit:\` a binary, or set up Rust first"; exit 2; }
    cargo install --locked --quiet --path "$src" --root "$root"
  fi
fi
"$bin" --version
echo "driftaudit=$bin" >> "${GITHUB_OUTPUT:?}"
