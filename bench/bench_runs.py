"""Run history on DNLP (9,362 reviews × 4 models): what recording adds, what comparing two runs costs, and the
History page with 50 recorded runs, warm.

1. `kweval evaluate DATA --out /dev/null --quiet` against the same with `--record=RUNS`, taking turns; the medians of
   wall and CPU time (the processes' own, children included) and their differences, and the bytes one run adds.
2. `kweval runs compare A B --model base` as a process (imports included), and `compare_runs` in-process (cold:
   first in the process; warm: the bootstrap draws kept).
3. The History page (AppTest) on the DNLP data with 50 runs in the store: the first run of the script and the
   next ones (warm: the loaders, the reference and the comparison cached), medians.

Every figure says the load (`os.getloadavg`) beside it: on a shared machine compare the ratios.

    python bench/bench_runs.py [--data $KWEVAL_SHARED/data/dnlp/Dataset] [--repeat 3] [--runs 50]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _timed(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the child) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed: {result.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _env() -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bench_record(data: str, repeat: int, folder: Path) -> Path:
    """Recording's cost and size; returns the store (two runs: match approx, then exact)."""
    store = folder / "runs.sqlite"
    base = [sys.executable, "-m", "kweval", "evaluate", data, "--out", os.devnull, "--quiet"]
    plain, recorded = [], []
    sizes = []
    for i in range(repeat):
        plain.append(_timed(base))
        before = _size(folder)
        recorded.append(_timed([*base, f"--record={store}", "--run-name", f"bench {i}"]))
        sizes.append(_size(folder) - before)
    _timed([*base, "--match", "exact", f"--record={store}", "--run-name", "exact"])
    wall_p, cpu_p = (statistics.median(x) for x in zip(*plain))
    wall_r, cpu_r = (statistics.median(x) for x in zip(*recorded))
    print(f"$ {' '.join(base[2:])}  [--record=RUNS]   ({repeat} turns each, {_load()})")
    print(f"  evaluate          wall {wall_p:.2f} s  CPU {cpu_p:.2f} s")
    print(f"  evaluate --record wall {wall_r:.2f} s  CPU {cpu_r:.2f} s")
    print(
        f"  recording adds    wall {wall_r - wall_p:+.2f} s  CPU {cpu_r - cpu_p:+.2f} s  (ratio {wall_r / wall_p:.2f})"
    )
    print(f"  one run on disk   {statistics.median(sizes) / 1e6:.2f} MB (database rows + Parquet table)")
    return store


def bench_compare(store: Path, repeat: int) -> None:
    from kweval.runs import RunStore, compare_runs

    argv = [
        sys.executable,
        "-m",
        "kweval",
        "runs",
        "compare",
        "bench 0",
        "exact",
        "--model",
        "base",
        "--runs",
        str(store),
    ]
    times = [_timed(argv) for _ in range(repeat)]
    wall, cpu = (statistics.median(x) for x in zip(*times))
    print(f"$ kweval runs compare 'bench 0' exact --model base   ({repeat} runs, {_load()})")
    print(f"  process           wall {wall:.2f} s  CPU {cpu:.2f} s (imports included)")
    runs = RunStore(store)
    a, b = runs.get("bench 0"), runs.get("exact")
    for label in ("cold", "warm"):
        start, cpu0 = time.perf_counter(), time.process_time()
        compare_runs(runs, a, b, model="base")
        print(
            f"  compare_runs {label}  wall {time.perf_counter() - start:.2f} s  CPU {time.process_time() - cpu0:.2f} s"
        )


def bench_history(store: Path, data: str, n_runs: int, repeat: int, folder: Path) -> None:
    """The History page with `n_runs` runs: copies of the recorded ones under other names and k (marks on the
    time axis), then AppTest runs of the page."""
    from dataclasses import replace

    from streamlit.testing.v1 import AppTest

    from kweval.runs import RunStore

    many = folder / "many.sqlite"
    shutil.copy(store, many)
    shutil.copytree(store.with_name(store.name + "-scores"), many.with_name(many.name + "-scores"))
    runs = RunStore(many)
    first = runs.runs()[0]
    tables = runs.scores(first)
    summary = runs.summary([first.id]).drop(columns="run_id")
    import uuid
    from datetime import UTC, datetime, timedelta

    existing = len(runs.runs())
    for i in range(n_runs - existing):
        when = datetime.now(UTC) + timedelta(minutes=i + 1)
        info = replace(
            first,
            id=uuid.uuid4().hex[:12],
            name=f"copy {i}",
            time=when.isoformat(),
            options={**first.options, "k": 5 + (i // 10)},
        )
        runs.add(info, tables, summary)
    os.environ["KWEVAL_RUNS"], os.environ["KWEVAL_DATA"] = str(many), data
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.run()  # the app opens the Summary (the evaluation is then cached, as on a server already in use)
    at.query_params["model"] = "base"
    times = []
    for i in range(repeat + 1):
        start = time.perf_counter()
        (at.switch_page("pages/history.py") if i == 0 else at).run()
        times.append(time.perf_counter() - start)
    assert not at.exception, [e.message for e in at.exception]
    shown = next(c.value for c in at.caption if "runs recorded in" in c.value)
    print(f"History page (AppTest, pages/history.py) with {len(runs.runs())} DNLP runs ({_load()})")
    print(f"  {shown.split(' (')[0]}")
    print(f"  first run {times[0]:.2f} s; warm runs median {statistics.median(times[1:]):.2f} s ({repeat} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DNLP))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    print(f"$ python bench/bench_runs.py --data {args.data} --repeat {args.repeat} --runs {args.runs}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = bench_record(args.data, args.repeat, folder)
        bench_compare(store, args.repeat)
        bench_history(store, args.data, args.runs, args.repeat, folder)


if __name__ == "__main__":
    main()
