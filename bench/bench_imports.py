"""What one new Python process pays to import kweval's stack (the CLI, pandas, streamlit, torch,
sentence-transformers) when its bytecode may not be cached (PYTHONDONTWRITEBYTECODE set, as in this CI's
environment: every process compiles every module it imports again) against when it is (the Makefile unexports
the variable, so the first process writes the venv's bytecode and the rest read it).

The tests start dozens of such processes (test workers, Streamlit servers, CLI runs, Dask workers), so the
difference is paid dozens of times by `make test`.  The cached side is warmed once first (its bytecode written);
then the two sides alternate, CPU seconds of each child (user + system).  The uncached side reads its bytecode
from an empty PYTHONPYCACHEPREFIX: a venv whose processes never wrote any, as in a fresh CI clone.

Usage: python bench/bench_imports.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STACK = "import kweval.cli, pandas, streamlit, torch, sentence_transformers"


def _child_cpu(dont_write: bool) -> tuple[float, float]:
    """(CPU s, wall s) of one fresh interpreter importing `STACK`: with PYTHONDONTWRITEBYTECODE and no bytecode to
    read (an empty cache prefix), or reading and writing the venv's own."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory() as empty:
        if dont_write:
            env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=empty)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", STACK], cwd=ROOT, env=env, check=True)
        wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the two sides, alternating")
    args = parser.parse_args()
    warm_cpu, _ = _child_cpu(dont_write=False)
    print(f"first process, writing the bytecode: {warm_cpu:.1f} s CPU")
    rows: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeat):
        for dont_write in (True, False):
            cpu, wall = _child_cpu(dont_write)
            rows[dont_write].append(cpu)
            side = "PYTHONDONTWRITEBYTECODE=1" if dont_write else "bytecode cached"
            print(f"{side:26s} {cpu:6.1f} s CPU {wall:6.1f} s wall")
    fresh, cached = min(rows[True]), min(rows[False])
    print(f"least CPU per process: compiled every time {fresh:.1f} s, cached {cached:.1f} s", end="; ")
    print(f"ratio {fresh / cached:.1f}x")


if __name__ == "__main__":
    main()
