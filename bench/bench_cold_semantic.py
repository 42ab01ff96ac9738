"""Benchmark: a cold semantic evaluation of the whole DNLP data (issue 14: ≤ 60 s on 2 idle cores).

Cold: `kweval evaluate ../shared/data/dnlp/Dataset --semantic` as a whole process with an empty
embedding cache (KWEVAL_CACHE_DIR a new temporary folder): every distinct keyword is embedded and, for
the default ONNX backend, the model is exported first.  Warm: the same command again on that cache.
The two outputs must be byte-identical.  Prints a Markdown section with the commands, wall times, peak
RSS, the load average, and the target: met / not met.

Usage: python bench/bench_cold_semantic.py [--data PATH] [--backend auto]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_scale import _show, run_timed  # noqa: E402

DNLP = REPO.parent / "shared" / "data" / "dnlp" / "Dataset"
TARGET_S = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--backend", default="auto", help="--embedding-backend of the runs")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"bench_cold_semantic: skipped: {args.data} not found")
        return 0
    with tempfile.TemporaryDirectory(prefix="kweval_cold_") as tmp:
        os.environ["KWEVAL_CACHE_DIR"] = str(Path(tmp) / "cache")  # run_timed passes os.environ to the child
        load_before = os.getloadavg()[0]
        runs = {}
        for name in ("cold", "warm"):
            out = Path(tmp) / f"{name}.csv"
            cmd = [
                sys.executable,
                "-m",
                "kweval",
                "evaluate",
                str(args.data),
                "--semantic",
                "--embedding-backend",
                args.backend,
                "--quiet",
                "--out",
                str(out),
            ]
            res = run_timed(cmd)
            if res["rc"] != 0:
                print(f"bench_cold_semantic: {_show(cmd)} failed (exit {res['rc']}): {res['stderr']}")
                return 1
            runs[name] = (cmd, res, out)
        same = filecmp.cmp(runs["cold"][2], runs["warm"][2], shallow=False)
    cold = runs["cold"][1]["wall_s"]
    print("### Cold semantic evaluation of the DNLP data (9,362 reviews × 4 models)\n")
    print(f"Load average before: {load_before:.1f}; the cache folder is a new temporary one (KWEVAL_CACHE_DIR).\n")
    print("| run | command | wall | peak RSS |")
    print("| --- | --- | ---: | ---: |")
    for name, (cmd, res, _) in runs.items():
        print(
            f"| {name} | `KWEVAL_CACHE_DIR=EMPTY {_show(cmd)}` | {res['wall_s']:.1f} s | {res['peak_rss_mb']:.0f} MB |"
        )
    print(f"\nCold and warm outputs byte-identical: {'yes' if same else 'NO'}.")
    print(
        f"Target cold ≤ {TARGET_S:.0f} s on 2 idle cores: {cold:.1f} s, "
        f"{'met' if cold <= TARGET_S and same else 'not met'}."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
