#!/usr/bin/env bash
# Every test, as `make test` runs them: the browser tests (marker `browser`) in BROWSER_JOBS processes BESIDE the
# others in TEST_JOBS processes, two pytest runs at once.  The browser tests mostly wait on a Streamlit server and
# chromium (about a third of a core each), so run after the others they left the cores idle for minutes; they wait
# for conditions with generous deadlines (tests/browser.py), never for a fixed time, so a busy machine only slows
# them.  The browser run's output is kept in artifacts/browser_tests.log and printed after the other run's; the
# exit status is non-zero when either run fails.
#   bash scripts/run_tests.sh [TEST_JOBS] [BROWSER_JOBS]
set -uo pipefail
cd "$(dirname "$0")/.."
test_jobs="${1:-2}"
browser_jobs="${2:-2}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p artifacts
log=artifacts/browser_tests.log
start=$(date +%s)
.venv/bin/python -m pytest -q -m browser -n "$browser_jobs" -p no:cacheprovider > "$log" 2>&1 &
browser=$!
trap 'kill "$browser" 2>/dev/null' INT TERM
.venv/bin/python -m pytest -q -m "not browser" -n "$test_jobs"
rest=$?
echo "the tests but the browser ones: exit $rest after $(( $(date +%s) - start )) s; waiting for the browser tests"
wait "$browser"
browser_rc=$?
echo "--- the browser tests (pytest -q -m browser -n $browser_jobs; artifacts/browser_tests.log) ---"
cat "$log"
echo "the browser tests: exit $browser_rc after $(( $(date +%s) - start )) s in all"
[ "$rest" -eq 0 ] && [ "$browser_rc" -eq 0 ]
