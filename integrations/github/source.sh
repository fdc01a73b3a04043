#!/usr/bin/env bash
# action.yml, step "Locate the source build": where the build of this
# action's source goes in the runner's tool cache, and its actions-cache key.
# Prints `dir=PATH` and `key=KEY` (the step appends them to $GITHUB_OUTPUT;
# install.sh reads `dir=`). The revision is the source's git commit when the
# action is a git checkout, else (a downloaded action has no .git) a hash of
# the files the build reads (Cargo.toml's `include`); the key adds the
# runner's OS and architecture and Cargo.lock's hash.
set -euo pipefail
src=${GITHUB_ACTION_PATH:?}
cd "$src"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  rev=$(git rev-parse HEAD)
else
  rev=$({ find Cargo.toml Cargo.lock build.rs src policies templates scripts/gen-fleet-sysctl.txt -type f 2>/dev/null || true; } \
    | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -c1-40)
fi
lock=$(sha256sum Cargo.lock | cut -c1-16)
echo "dir=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}/driftaudit/src-$rev"
echo "key=driftaudit-build-$(uname -s)-$(uname -m)-$rev-$lock"
