#!/usr/bin/env bash
# action.yml, step "Audit the snapshots": `check --fleet` (or `merge` of
# shard reports) to a fleet JSON report, then SARIF and the job summary
# from that report with `driftaudit merge`. Inputs arrive as INPUT_* (the
# action's inputs); outputs go to $GITHUB_OUTPUT. Exit status: 0, or 2
# when driftaudit could not run; findings are the `exit-code` output.
set -euo pipefail
da=${DRIFTAUDIT:?driftaudit binary}
out=${GITHUB_OUTPUT:?}
report=${INPUT_REPORT:-driftaudit-report.json}
sarif=${INPUT_SARIF:-driftaudit.sarif}

rc=0
if [ -n "${INPUT_REPORTS:-}" ]; then
  # merge shard reports: every line a glob
  files=()
  while IFS= read -r pattern; do
    [ -n "$pattern" ] || continue
    # shellcheck disable=SC2206  # the glob is meant to expand
    matched=($pattern)
    [ -e "${matched[0]}" ] || { echo "::error title=driftaudit::no report matches \`$pattern\`"; exit 2; }
    files+=("${matched[@]}")
  done <<< "$INPUT_REPORTS"
  "$da" merge "${files[@]}" > "$report.tmp" || rc=$?
else
  args=(check --fleet "${INPUT_SNAPSHOTS:-snapshots}" --fail-on "${INPUT_FAIL_ON:-high}" --format json)
  while IFS= read -r p; do
    [ -z "$p" ] || args+=(--policy "$p")
  done <<< "${INPUT_POLICY:-}"
  [ "${INPUT_NO_BUILTIN:-false}" != true ] || args+=(--no-builtin)
  [ -z "${INPUT_SHARD:-}" ] || args+=(--shard "$INPUT_SHARD")
  [ -z "${INPUT_CHANGED_SINCE:-}" ] || args+=(--changed-since "$INPUT_CHANGED_SINCE")
  read -r -a extra <<< "${INPUT_ARGS:-}"
  args+=("${extra[@]}")
  "$da" "${args[@]}" > "$report.tmp" || rc=$?
fi
# 2: could not audit (driftaudit said why on stderr)
[ "$rc" -le 1 ] || { rm -f "$report.tmp"; exit "$rc"; }
mv "$report.tmp" "$report"

upload=${INPUT_UPLOAD:-auto}
if [ -n "${INPUT_SHARD:-}" ]; then
  # one shard: only its JSON report, for the merge job (merge refuses a
  # shard alone, and a partial upload would close other hosts' alerts)
  sarif=""
  upload=false
else
  "$da" merge "$report" --format sarif > "$sarif" || [ $? -eq 1 ]
  if [ "${INPUT_SUMMARY:-true}" = true ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    "$da" merge "$report" --format markdown >> "$GITHUB_STEP_SUMMARY" || [ $? -eq 1 ]
  fi
  if [ "$upload" = auto ]; then
    upload=true
    [ -z "${INPUT_CHANGED_SINCE:-}" ] || upload=false
  fi
fi
read -r hosts failing < <(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["fleet"]; print(f["hosts"], f["hosts_failing_at_threshold"])' "$report")
{
  echo "exit-code=$rc"
  echo "report=$report"
  echo "sarif=$sarif"
  echo "upload=$upload"
  echo "hosts=$hosts"
  echo "hosts-failing=$failing"
} >> "$out"
echo "driftaudit: $hosts host(s) audited, $failing with findings at or above ${INPUT_FAIL_ON:-high}"
