#!/usr/bin/env bash
# The browser tests with both cores busy (issue 29): two busy-loop processes beside `pytest -m browser`, RUNS times in
# a row (default 3); each run's result, its time and the load average before and after are printed, and its whole
# output kept in artifacts/browser_under_load_RUN.log.
#   bash scripts/browser_under_load.sh [RUNS] [extra pytest arguments, e.g. -n 2]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"; shift || true
busy=()
for _ in 1 2; do .venv/bin/python -c "while True: pass" & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT
status=0
for run in $(seq 1 "$runs"); do
  echo "run $run: load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s)
  mkdir -p artifacts
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m pytest -q -m browser -p no:cacheprovider "$@" \
    > "artifacts/browser_under_load_$run.log" 2>&1
  rc=$?
  grep -E "^(FAILED|ERROR)|passed|failed" "artifacts/browser_under_load_$run.log" | tail -5
  echo "run $run: exit $rc in $(( $(date +%s) - start )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$rc" -eq 0 ] || status=1
done
exit $status
