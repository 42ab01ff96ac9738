"""Benchmark: `kweval evaluate --scheduler local:2` against `--jobs 2` on a 200k-review synthetic DNLP set (issue 14).

The dataset (`kweval synth --layout dnlp`, 10 movies × 20,000 reviews × 3
models, seed 0) is generated once into bench/out/ (shared with
bench_scale.py).  Each round runs, as whole processes, `--jobs 2` (two
forked processes) then `--scheduler local:2` (a dask LocalCluster of two
worker processes, each reading its own movie files), so a shared machine's
changing speed touches both alike.  Every output is compared byte for byte
with one process's (`--jobs 1`).

Printed: a Markdown section with the commands, the times, the ratio of the
best times and of each round, and the target (≤ 1.3×): met / not met.

Usage: python bench/bench_dask.py [--reviews 200000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import bench_scale  # noqa: E402

TARGET_RATIO = 1.3


def evaluate_cmd(folder: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "kweval", "evaluate", folder, "--out", str(out), "--quiet", *extra]


def run(reviews: int = 200_000, rounds: int = 3) -> dict:
    bench_scale.OUT.mkdir(parents=True, exist_ok=True)
    data = bench_scale.ensure_dataset("dnlp", reviews)
    outs = {name: bench_scale.OUT / f"dask_{name}.csv" for name in ("one", "jobs", "dask")}
    commands = {
        "one": evaluate_cmd(data["folder"], outs["one"], "--jobs", "1"),
        "jobs": evaluate_cmd(data["folder"], outs["jobs"], "--jobs", "2"),
        "dask": evaluate_cmd(data["folder"], outs["dask"], "--scheduler", "local:2"),
    }
    one = _checked(bench_scale.run_timed(commands["one"]), commands["one"])
    reference = outs["one"].read_bytes()
    times: dict[str, list[float]] = {"jobs": [], "dask": []}
    identical = True
    for _ in range(rounds):
        for name in ("jobs", "dask"):
            res = _checked(bench_scale.run_timed(commands[name]), commands[name])
            times[name].append(res["wall_s"])
            identical &= outs[name].read_bytes() == reference
    round_ratios = [d / j for j, d in zip(times["jobs"], times["dask"])]
    ratio = min(times["dask"]) / min(times["jobs"])
    return {
        "data": data,
        "reviews": reviews,
        "commands": {k: bench_scale._show(v) for k, v in commands.items()},
        "one_s": one["wall_s"],
        "times": times,
        "ratio": ratio,
        "round_ratios": round_ratios,
        "identical": identical,
        "met": ratio <= TARGET_RATIO and identical,
    }


def _checked(res: dict, cmd: list[str]) -> dict:
    if res["rc"] != 0:
        raise SystemExit(f"failed (exit {res['rc']}): {bench_scale._show(cmd)}\n{res['stderr']}")
    return res


def report(r: dict) -> str:
    t = r["times"]
    lines = [
        f"### `--scheduler local:2` vs `--jobs 2`, {r['reviews']:,d} synthetic reviews (DNLP layout, 10 movies × 3 "
        f"models)",
        "",
        f"Data: `{r['data']['cmd']}`.",
        "",
        "| command | best | all runs (s) |",
        "| --- | ---: | --- |",
        f"| `{r['commands']['one']}` | {r['one_s']:.2f} s | (reference output) |",
        f"| `{r['commands']['jobs']}` | {min(t['jobs']):.2f} s | {[round(x, 2) for x in t['jobs']]} |",
        f"| `{r['commands']['dask']}` | {min(t['dask']):.2f} s | {[round(x, 2) for x in t['dask']]} |",
        "",
        f"Ratio local:2 / jobs 2: **{r['ratio']:.2f}×** (best times); rounds "
        f"{[round(x, 2) for x in r['round_ratios']]}, "
        f"median {statistics.median(r['round_ratios']):.2f}×. Outputs byte-identical to one process: "
        f"{'yes' if r['identical'] else '**NO**'}.",
        "",
        f"Target ≤ {TARGET_RATIO}× with identical outputs: {'met' if r['met'] else '**NOT met**'}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(report(run(args.reviews, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
