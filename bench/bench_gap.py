"""The protocol lattice and `kweval gap` (issue 27), as whole processes: time, CPU time and peak RSS against targets.

1. the whole lattice for one model on SemEval2017: every combination of the settings the presets use, for every
   key metric (F1@5, F1@10, F1@M, F1@O, their present forms, R@50 absent): target <= 10 s;
2. a gap between two presets (`kweval gap --from P --to Q`): target <= 3 s; the largest decomposition
   (kweval → kpeval on F1@5 present: ten differing conventions move it) and pke → kpeval on F1@5;
3. a KP20k-sized collection (SemEval2017's documents repeated under new ids to 20,000, the predictions likewise):
   the gap kweval → kpeval on F1@5 present, target <= 60 s and <= 2 GB.

YAKE's predictions come from `kweval extract` (once, into bench/out/).  The machine is shared: wall time follows its
load, so CPU time (user + system of the child) is printed beside it, with `uptime`'s load.

    python bench/bench_gap.py [--data ../shared/data/keyphrase/SemEval2017] [--documents 20000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_scale import OUT, _show, run_timed  # noqa: E402

TARGETS = {"lattice": (10.0, None), "gap": (3.0, None), "large": (60.0, 2048.0)}
LATTICE = """
import sys, time
from pathlib import Path
from kweval.data.keyphrase import read_documents
from kweval.data.predictions import prediction_lists
from kweval.lattice.engine import Lattice, parse_metric
from kweval.lattice.explain import KEY_METRICS
from kweval.lattice.search import candidates, search_space
docs = read_documents(Path(sys.argv[1]), [])
lattice = Lattice(docs.gold, prediction_lists(Path(sys.argv[2]), "yake", []), docs.texts)
n = sum(len(candidates(lattice, parse_metric(m), search_space())) for m in KEY_METRICS)
print(n, "values")
"""


def _predictions(data: Path) -> Path:
    """YAKE's top 20 on `data` (`kweval extract`, made once)."""
    path = OUT / "bench_gap_yake.jsonl"
    if not path.is_file():
        cmd = [sys.executable, "-m", "kweval", "extract", str(data), "--extractor", "yake", "--out", str(path)]
        if run_timed(cmd)["rc"] != 0:
            raise SystemExit(f"extract failed: {_show(cmd)}")
    return path


def _large(data: Path, predictions: Path, documents: int) -> tuple[Path, Path]:
    """`data`'s documents (and `predictions`) repeated under new ids to `documents` documents (made once)."""
    folder = OUT / f"semeval_x{documents}"
    target = OUT / f"semeval_x{documents}_yake.jsonl"
    if (folder / ".complete").is_file() and target.is_file():
        return folder, target
    for sub in ("docsutf8", "keys"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    ids = sorted(p.stem for p in (data / "docsutf8").glob("*.txt"))
    lists = {o["id"]: o for o in map(json.loads, predictions.read_text().splitlines())}
    lines = []
    for i in range(documents):
        doc = ids[i % len(ids)]
        new = f"r{i // len(ids):03d}_{doc}"
        (folder / "docsutf8" / f"{new}.txt").write_bytes((data / "docsutf8" / f"{doc}.txt").read_bytes())
        (folder / "keys" / f"{new}.key").write_bytes((data / "keys" / f"{doc}.key").read_bytes())
        if doc in lists:
            lines.append(json.dumps({**lists[doc], "id": new}))
    target.write_text("\n".join(lines) + "\n")
    (folder / ".complete").write_text("")
    return folder, target


def _best(cmd: list[str], repeat: int) -> dict:
    runs = [run_timed(cmd) for _ in range(repeat)]
    failed = [r for r in runs if r["rc"] != 0]
    if failed:
        raise SystemExit(f"failed (exit {failed[0]['rc']}): {_show(cmd)}\n{failed[0]['stderr']}")
    return min(runs, key=lambda r: r["wall_s"])


def _row(name: str, what: str, run: dict, target: tuple[float, float | None]) -> str:
    seconds, memory = target
    met = run["cpu_s"] <= seconds and (memory is None or run["peak_rss_mb"] <= memory)
    goal = f"<= {seconds:.0f} s" + (f", <= {memory / 1024:.0f} GB" if memory else "")
    return (
        f"| {name} | {what} | {run['wall_s']:.2f} | {run['cpu_s']:.2f} | {run['cpu_s'] / seconds:.2f} | "
        f"{run['peak_rss_mb']:.0f} | {goal} | {'met (CPU)' if met else 'not met'} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "keyphrase" / "SemEval2017")
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    if not (args.data / "docsutf8").is_dir():
        print(f"SemEval2017 not found at {args.data}; skipped")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    yake = _predictions(args.data)
    large, large_yake = _large(args.data, yake, args.documents)
    gap = [sys.executable, "-m", "kweval", "gap"]
    runs = [
        ("lattice", "whole lattice, every key metric", [sys.executable, "-c", LATTICE, str(args.data), str(yake)]),
        ("gap", "kweval → kpeval, F1@5 present", [*gap, str(args.data), "--predictions", f"yake={yake}"]),
        ("gap", "pke → kpeval, F1@5", [*gap, str(args.data), "--predictions", f"yake={yake}"]),
        ("large", f"{args.documents:,} documents: kweval → kpeval, F1@5 present", [*gap, str(large)]),
    ]
    runs[1][2].extend(["--from", "kweval", "--to", "kpeval", "--metric", "f1@5_present"])
    runs[2][2].extend(["--from", "pke", "--to", "kpeval", "--metric", "f1@5"])
    runs[3][2].extend(["--predictions", f"yake={large_yake}", "--from", "kweval", "--to", "kpeval"])
    runs[3][2].extend(["--metric", "f1@5_present"])
    print(f"## The protocol lattice and kweval gap (load average before: {os.getloadavg()[0]:.2f})\n")
    print("| target | run | wall s | CPU s | CPU / target | peak RSS MB | target | |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    commands = []
    for name, what, cmd in runs:
        print(_row(name, what, _best(cmd, args.repeat), TARGETS[name]), flush=True)
        commands.append(_show(cmd) if cmd[1] != "-c" else f"python -c LATTICE {cmd[3]} {cmd[4]} (bench/bench_gap.py)")
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (2 cores); best of {args.repeat}. Commands:\n")
    print("\n".join(f"- `{c}`" for c in commands))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
