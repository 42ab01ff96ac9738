#!/usr/bin/env bash
# `make test`'s two pytest runs, at the same time (issue 29): the browser tests mostly wait on a server and chromium,
# so run one after the other a quarter of the two cores idled; beside the rest they fill that time.
# - the browser tests (-m browser, BROWSER_JOBS processes) run in the background; their whole output goes to
#   artifacts/browser_tests.log and is printed after the rest's, so neither output is interleaved with the other;
# - the rest (-m "not browser", TEST_JOBS processes, one OpenBLAS thread each) print as they run;
# - the exit status is nonzero when either run failed (each one's status is printed last).
# Each run keeps its own pytest cache (the browser run's in .pytest_cache/browser), so `--lf` works for both.
#   TEST_JOBS=2 BROWSER_JOBS=2 bash scripts/test_phases.sh [extra pytest arguments for both runs]
set -uo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p artifacts
log=artifacts/browser_tests.log
start=$(date +%s)
.venv/bin/python -m pytest -q -m browser -n "${BROWSER_JOBS:-2}" -o cache_dir=.pytest_cache/browser "$@" \
  > "$log" 2>&1 &
browser=$!
trap 'kill "$browser" 2>/dev/null' EXIT
OPENBLAS_NUM_THREADS=1 .venv/bin/python -m pytest -q -m "not browser" -n "${TEST_JOBS:-2}" "$@"
rest=$?
echo "== the rest (-m \"not browser\"): exit $rest after $(( $(date +%s) - start )) s; the browser tests, run beside them:"
wait "$browser"
browser_status=$?
trap - EXIT
cat "$log"
echo "== browser tests (-m browser, output above, kept in $log): exit $browser_status after $(( $(date +%s) - start )) s"
echo "== the rest (-m \"not browser\"): exit $rest"
[ "$rest" -eq 0 ] && [ "$browser_status" -eq 0 ]
