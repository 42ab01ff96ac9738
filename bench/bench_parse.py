"""Reading raw LLM responses: 100,000 `{"id", "response"}` lines through the parser, against the 10 s budget.

The responses are the rule table's examples (kweval.data.response_rules.RULES, every format the parser reads)
repeated with their document ids varied; each round reads the whole file as `--predictions NAME=PATH` does
(`kweval.data.predictions.jsonl_read`: JSON decoding, parsing, the tally), in this process, and then runs
`kweval parse FILE --out OUT` as a whole process.  CPU time is reported beside wall time (the machine may be
shared) with the load average; the ratio is to the budget.

    python bench/bench_parse.py [--n 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BUDGET_S = 10.0


def write_responses(path: Path, n: int) -> None:
    """`n` lines cycling through every rule's example, each its own document id."""
    from kweval.data.response_rules import RULES

    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps({"id": f"d{i}", "response": RULES[i % len(RULES)].example}) + "\n")


def read_in_process(path: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, the count line) of reading the file as --predictions does."""
    from kweval.data.predictions import jsonl_read

    problems: list = []
    wall, cpu = time.perf_counter(), time.process_time()
    rows, _ = jsonl_read(path, "llm", problems)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    counts = next(p.reason for p in problems if "raw response(s)" in p.reason)
    return wall, cpu, f"{len(rows):,} rows; {counts}"


def parse_process(path: Path, out: Path) -> tuple[float, float]:
    """(wall s, CPU s of the child) of `kweval parse PATH --out OUT` as a whole process."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kweval", "parse", str(path), "--out", str(out)], capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="responses (default 100,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best is reported (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "responses.jsonl", Path(tmp) / "lists.jsonl"
        write_responses(path, args.n)
        print(f"# {args.n:,} responses, {path.stat().st_size / 1e6:.1f} MB; load average {os.getloadavg()}")
        print(f"# command: python bench/bench_parse.py --n {args.n} --rounds {args.rounds}")
        best_in, best_cli = None, None
        for _ in range(args.rounds):
            wall, cpu, said = read_in_process(path)
            best_in = min(best_in or (wall, cpu), (wall, cpu), key=lambda t: t[1])
            cli = parse_process(path, out)
            best_cli = min(best_cli or cli, cli, key=lambda t: t[1])
        assert best_in is not None and best_cli is not None
        print(f"read as --predictions (in process): wall {best_in[0]:.2f} s, CPU {best_in[1]:.2f} s ({said})")
        print(f"kweval parse (whole process):       wall {best_cli[0]:.2f} s, CPU {best_cli[1]:.2f} s")
        print(
            f"ratio to the {BUDGET_S:g} s budget (CPU): in process {best_in[1] / BUDGET_S:.2f}, "
            f"whole process {best_cli[1] / BUDGET_S:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
