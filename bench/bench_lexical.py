"""Benchmark: `kweval evaluate` on the DNLP data vs the notebooks' own loop (issue 2).

Both run as whole processes (interpreter start, imports, reading the pickles,
evaluating, writing):

    python bench/notebook_loop.py DATASET
    python -m kweval evaluate DATASET --out /dev/null
    python -m kweval evaluate DATASET --out /dev/null --jobs 1

kweval shares the movies out over the CPU cores by default; --jobs 1 holds it
to one process.  The commands take turns in rounds (the notebook loop once,
then each kweval command twice), so that a shared machine's changing speed
touches all of them alike.  Printed: the ratio notebook / kweval of the best
times (target: at least 15×) and the median of the rounds' own ratios.

kweval's bytecode is written first (python -m compileall kweval) when
PYTHONDONTWRITEBYTECODE keeps this environment from caching it, as an
installed package would have it.

Usage: python bench/bench_lexical.py [--data DATASET] [--repeat 3 (rounds)] [--no-compile]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = str(REPO.parent / "shared" / "data" / "dnlp" / "Dataset")  # ../shared beside the checkout
TARGET_RATIO = 15.0


def run_timed(cmd: list[str], cwd: Path = REPO) -> dict:
    """Run `cmd` as a child process: wall seconds, peak RSS (MB) of that child, exit status, stderr tail."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, env=dict(os.environ, HF_HUB_OFFLINE="1")
        )
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own usage; ru_maxrss is in KB on Linux
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    return {
        "wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "rc": proc.returncode,
        "stderr": stderr.decode(errors="replace")[-2000:],
    }


def best_of(cmd: list[str], repeat: int) -> dict:
    return summarize(cmd, [run_timed(cmd) for _ in range(repeat)])


def summarize(cmd: list[str], runs: list[dict]) -> dict:
    """The best run of `cmd` with every run's wall time and the largest peak RSS; exits if a run failed."""
    failed = [r for r in runs if r["rc"] != 0]
    if failed:
        raise SystemExit(f"command failed (exit {failed[0]['rc']}): {' '.join(cmd)}\n{failed[0]['stderr']}")
    best = min(runs, key=lambda r: r["wall_s"])
    return {**best, "all_s": [round(r["wall_s"], 3) for r in runs], "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}


def in_rounds(
    cmds: dict[str, list[str]], per_round: dict[str, int], rounds: int
) -> tuple[dict[str, dict], list[dict[str, float]]]:
    """Time the commands taking turns, `per_round[name]` runs of each in every round.

    Returns each command's summary over all rounds and, per round, each
    command's best wall time in that round.
    """
    runs: dict[str, list[dict]] = {name: [] for name in cmds}
    round_best: list[dict[str, float]] = []
    for _ in range(rounds):
        this_round = {}
        for name, cmd in cmds.items():
            timed = [run_timed(cmd) for _ in range(per_round[name])]
            runs[name] += timed
            this_round[name] = min(r["wall_s"] for r in timed)
        round_best.append(this_round)
    return {name: summarize(cmds[name], runs[name]) for name in cmds}, round_best


def compile_bytecode() -> bool:
    """Write kweval's bytecode (what any installed package has) if this environment does not.

    With PYTHONDONTWRITEBYTECODE set, an editable install recompiles kweval's
    sources (~20 ms) in every process; pandas and numpy have their bytecode from
    pip.  Returns whether it compiled anything.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return False
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "kweval"],
        cwd=REPO,
        check=False,
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""),
    )
    return True


def run(data: str = DEFAULT_DATASET, repeat: int = 3, compile: bool = True, with_fuller: bool = True) -> dict:
    """Time the three commands in `repeat` rounds; `with_fuller` adds one run of the informational fuller notebook
    loop."""
    py = sys.executable
    compiled = compile_bytecode() if compile else False
    notebook_cmd = [py, "bench/notebook_loop.py", data]
    kweval_cmd = [py, "-m", "kweval", "evaluate", data, "--out", "/dev/null"]
    one_process_cmd = kweval_cmd + ["--jobs", "1"]
    cmds = {"notebook": notebook_cmd, "kweval": kweval_cmd, "one_process": one_process_cmd}
    timed, rounds = in_rounds(cmds, {"notebook": 1, "kweval": 2, "one_process": 2}, repeat)
    notebook, kweval, one_process = timed["notebook"], timed["kweval"], timed["one_process"]
    ratio = notebook["wall_s"] / kweval["wall_s"]
    round_ratios = [r["notebook"] / r["kweval"] for r in rounds]
    round_ratios_one = [r["notebook"] / r["one_process"] for r in rounds]
    from kweval.data import movie_file_sizes
    from kweval.scale import parallel

    sizes = movie_file_sizes(data)
    jobs = parallel.auto_jobs(list(sizes.values())) if sizes else 1
    # for information only (not the issue-2 baseline): seed 001's loop with its per-review weighted P/R/F1 too
    fuller_cmd = notebook_cmd + ["--per-review-weighted"]
    fuller = best_of(fuller_cmd, 1) if with_fuller else None
    return {
        "fuller_cmd": " ".join(["python"] + fuller_cmd[1:]),
        "fuller": fuller,
        "name": "lexical",
        "data": data,
        "repeat": repeat,
        "notebook_cmd": " ".join(["python"] + notebook_cmd[1:]),
        "kweval_cmd": " ".join(["python"] + kweval_cmd[1:]),
        "notebook": notebook,
        "kweval": kweval,
        "ratio": ratio,
        "round_ratios": [round(r, 2) for r in round_ratios],
        "median_round_ratio": statistics.median(round_ratios),
        "round_ratios_one_process": [round(r, 2) for r in round_ratios_one],
        "median_round_ratio_one_process": statistics.median(round_ratios_one),
        "one_process_cmd": " ".join(["python"] + one_process_cmd[1:]),
        "one_process": one_process,
        "jobs": jobs,
        "bytecode_compiled": compiled,
        "target_ratio": TARGET_RATIO,
        "met": ratio >= TARGET_RATIO,
    }


def report(result: dict) -> str:
    nb, kw = result["notebook"], result["kweval"]
    return "\n".join(
        [
            f"$ {result['notebook_cmd']}",
            f"  notebook loop: best {nb['wall_s']:.2f} s of {nb['all_s']}, peak RSS {nb['peak_rss_mb']:.0f} MB",
            f"$ {result['kweval_cmd']}",
            f"  kweval evaluate: best {kw['wall_s']:.3f} s of {kw['all_s']}, peak RSS {kw['peak_rss_mb']:.0f} MB",
            f"ratio (notebook / kweval, whole process, best of each): {result['ratio']:.1f}x "
            f"(target >= {result['target_ratio']:.0f}x: {'met' if result['met'] else 'NOT met'}); "
            f"per round {result['round_ratios']}, median {result['median_round_ratio']:.1f}x",
            f"$ {result['one_process_cmd']}   # one process, no workers",
            f"  kweval evaluate --jobs 1: best {result['one_process']['wall_s']:.3f} s of "
            f"{result['one_process']['all_s']}, "
            f"{nb['wall_s'] / result['one_process']['wall_s']:.1f}x; per round {result['round_ratios_one_process']}, "
            f"median {result['median_round_ratio_one_process']:.1f}x",
        ]
        + (
            [
                f"$ {result['fuller_cmd']}   # information only, not the issue-2 baseline",
                f"  notebook loop incl. seed 001's per-review weighted P/R/F1: {result['fuller']['wall_s']:.2f} s "
                f"(1 run), "
                f"{result['fuller']['wall_s'] / kw['wall_s']:.1f}x kweval's time",
            ]
            if result.get("fuller")
            else []
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATASET)
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds: each runs the notebook loop once and each kweval command twice"
    )
    parser.add_argument("--no-compile", action="store_true", help="do not write kweval's bytecode first")
    parser.add_argument(
        "--no-fuller",
        action="store_true",
        help="skip the informational run with seed 001's per-review weighted metrics",
    )
    args = parser.parse_args(argv)
    print(report(run(args.data, args.repeat, compile=not args.no_compile, with_fuller=not args.no_fuller)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
