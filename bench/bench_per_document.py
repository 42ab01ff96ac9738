"""Per-document ground truth at scale: `kweval synth --gt per-document`, then `kweval evaluate`, as whole processes.

Target (issue 12): 1M reviews × 3 models with each review's own unranked GT
evaluates within the 1M-review targets of movie-level GT: <= 60 s and <= 4 GB
peak RSS.  The dataset is generated once into bench/out/ (reused afterwards);
the timing and peak RSS are the `kweval evaluate` child's (bench_scale.run_timed).

    python bench/bench_per_document.py [--reviews 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_scale import MODELS, MOVIES, OUT, SEED, TARGETS, _show, run_timed  # noqa: E402


def ensure_per_document(reviews: int) -> tuple[Path, str, str]:
    """The synthetic per-document dataset (generated unless bench/out/ has it): folder, command, synth's log line."""
    folder = OUT / f"synth_perdoc_{reviews // 1000}k_m{MOVIES}_k{MODELS}_s{SEED}"
    marker = folder / ".complete"
    cmd = [
        sys.executable,
        "-m",
        "kweval",
        "synth",
        str(folder),
        "--movies",
        str(MOVIES),
        "--reviews-per-movie",
        str(reviews // MOVIES),
        "--models",
        str(MODELS),
        "--seed",
        str(SEED),
        "--gt",
        "per-document",
    ]
    if not marker.is_file():
        res = run_timed(cmd)
        if res["rc"] != 0:
            raise SystemExit(f"synth failed: {_show(cmd)}\n{res['stderr']}")
        marker.write_text(json.dumps({"log": res["stderr"].strip().splitlines()[-1]}))
    return folder, _show(cmd), json.loads(marker.read_text())["log"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    folder, synth_cmd, log = ensure_per_document(args.reviews)
    cmd = [sys.executable, "-m", "kweval", "evaluate", str(folder), "--out", str(OUT / "perdoc_summary.csv"), "--quiet"]
    runs = [run_timed(cmd) for _ in range(args.repeat)]
    failed = [r for r in runs if r["rc"] != 0]
    if failed:
        raise SystemExit(f"evaluate failed (exit {failed[0]['rc']}): {_show(cmd)}\n{failed[0]['stderr']}")
    best = min(r["wall_s"] for r in runs)
    rss = max(r["peak_rss_mb"] for r in runs)
    scale = args.reviews / 1_000_000
    t_target, m_target = TARGETS["time_1m_s"] * scale, TARGETS["rss_1m_mb"]
    print(f"## Per-document GT: {args.reviews:,d} reviews × {MODELS} models\n")
    print(f"`{synth_cmd}` ({log}), then `{_show(cmd)}`, best of {args.repeat}.\n")
    print("| measure | value | target | |")
    print("| --- | ---: | ---: | --- |")
    print(f"| evaluate wall time | {best:.1f} s | <= {t_target:.0f} s | {'met' if best <= t_target else 'not met'} |")
    print(f"| evaluate peak RSS | {rss:.0f} MB | <= {m_target:.0f} MB | {'met' if rss <= m_target else 'not met'} |")
    if args.reviews != 1_000_000:
        print(
            "\n(The targets are for 1M reviews; at other sizes the time target is scaled linearly, the memory one "
            "is not.)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
