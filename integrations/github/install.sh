#!/usr/bin/env bash
# action.yml, step "Install driftaudit". Writes `driftaudit=PATH` to
# $GITHUB_OUTPUT, and `built=true` when it ran cargo (the next step saves
# the build to the actions cache). What `driftaudit:` gives:
# - a path ending in `.deb` (scripts/package's package, e.g. an artifact of
#   an earlier job): unpacked with `dpkg-deb -x` into the runner's tool cache
#   under the .deb's sha256, and its usr/bin/driftaudit used; nothing built;
# - any other path or a name on PATH: that binary;
# - nothing: this action's source built once with `cargo install` into the
#   tool cache under the source's revision (`source.sh` names the directory;
#   action.yml restores it from the actions cache first, so a new runner
#   does not rebuild).
set -euo pipefail
fail() { echo "::error title=driftaudit::$*"; exit 2; }
cache=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/driftaudit
built=false
case ${INPUT_DRIFTAUDIT:-} in
  *.deb)
    deb=$INPUT_DRIFTAUDIT
    [ -f "$deb" ] || fail "\`$deb\` is not a file"
    command -v dpkg-deb >/dev/null || fail "\`$deb\` is a .deb and this runner has no dpkg-deb to unpack it: give \`driftaudit:\` a binary, or leave it empty to build from source"
    sha=$(sha256sum "$deb" | cut -d' ' -f1)
    root=$cache/deb-$sha
    bin=$root/usr/bin/driftaudit
    if [ ! -x "$bin" ]; then
      mkdir -p "$cache"
      tmp=$(mktemp -d "$root.XXXXXX")
      dpkg-deb -x "$deb" "$tmp" || { rm -rf "$tmp"; fail "\`$deb\`: dpkg-deb -x failed (not a Debian package?)"; }
      [ -f "$tmp/usr/bin/driftaudit" ] && [ -x "$tmp/usr/bin/driftaudit" ] \
        || { rm -rf "$tmp"; fail "\`$deb\` holds no usr/bin/driftaudit (is it the driftaudit package?)"; }
      # a finished tree only: a runner killed mid-unpack leaves no half tree under the key
      rm -rf "$root"
      mv "$tmp" "$root"
    fi
    ;;
  ?*)
    bin=$INPUT_DRIFTAUDIT
    case $bin in */*) ;; *) bin=$(command -v "$bin" || true) ;; esac
    [ -n "$bin" ] && [ -x "$bin" ] || fail "\`$INPUT_DRIFTAUDIT\` is not an executable"
    ;;
  *)
    src=${GITHUB_ACTION_PATH:?}
    root=${DRIFTAUDIT_BUILD_DIR:-$(bash "$src/integrations/github/source.sh" | sed -n "s/^dir=//p")}
    bin=$root/bin/driftaudit
    if [ ! -x "$bin" ]; then
      command -v cargo >/dev/null || fail "no cargo on this runner: give \`driftaudit:\` a binary or a .deb, or set up Rust first"
      cargo install --locked --quiet --path "$src" --root "$root"
      built=true
    fi
    ;;
esac
"$bin" --version
{ echo "driftaudit=$bin"; echo "built=$built"; } >> "${GITHUB_OUTPUT:?}"
