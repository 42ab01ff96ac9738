"""kweval's protocol presets vs pke's and KPEval's own evaluation code, as whole processes, side by side.

On a docsutf8 collection (default ../shared/data/keyphrase/SemEval2017) with
two extractors' predictions (JSONL; made with `kweval extract` when not
given), each round runs, in turn:

    kweval evaluate DATA --protocol kpeval --predictions a=A --predictions b=B
    python bench/peer_eval.py kpeval A B        (KPEval's ExactMatchingMetric)
    kweval evaluate DATA --protocol pke ...
    python bench/peer_eval.py pke A B           (pke's load_references + evaluate)

and prints the best wall time of each, the ratios, and whether the F1@5/10/M
numbers agree.  The peer tools live outside the repository: ``--peers DIR``
(or KWEVAL_PEERS) holding checkouts named ``boudinfl+pke`` and
``uclanlp+KPEval``, and ``--peer-python`` an interpreter with their
dependencies (nltk, numpy, scikit-learn, spacy, gin-config).  Without them the
bench says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "keyphrase" / "SemEval2017"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def kweval_numbers(stdout: str) -> dict[str, dict[str, float]]:
    rows = json.loads(stdout)["rows"]
    return {r["model"]: {k: r[k] for k in ("f1@5", "f1@10", "f1@M")} for r in rows}


def peer_numbers(stdout: str) -> dict[str, dict[str, float]]:
    out = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            out[obj.pop("model")] = obj
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--peers", type=Path, default=Path(os.environ.get("KWEVAL_PEERS", REPO.parent / "peers")))
    parser.add_argument("--peer-python", default=os.environ.get("KWEVAL_PEER_PYTHON", sys.executable))
    parser.add_argument("--predictions", type=Path, nargs=2, metavar="JSONL", help="two models' predictions (default: yake and firstphrases, extracted now)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    missing = [p for p in (args.data, args.peers / "boudinfl+pke", args.peers / "uclanlp+KPEval") if not p.is_dir()]
    if missing:
        print(f"bench_keyphrase: skipped: not found: {', '.join(map(str, missing))} (see --help)")
        return 0
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    predictions = args.predictions
    if predictions is None:
        tmp = Path(tempfile.mkdtemp(prefix="bench_keyphrase_"))
        predictions = [tmp / "yake.jsonl", tmp / "firstphrases.jsonl"]
        for path in predictions:
            timed([sys.executable, "-m", "kweval", "extract", str(args.data), "--extractor", path.stem, "--out", str(path)], env)

    pred_args = [a for p in predictions for a in ("--predictions", f"{p.stem}={p}")]
    commands = {}
    for tool in ("kpeval", "pke"):
        commands[f"kweval --protocol {tool}"] = [sys.executable, "-m", "kweval", "evaluate", str(args.data), "--protocol", tool, *pred_args, "--format", "json", "--quiet"]
        commands[f"{tool} (own code)"] = [args.peer_python, str(REPO / "bench" / "peer_eval.py"), tool, "--peers", str(args.peers), "--data", str(args.data), *map(str, predictions)]
    best: dict[str, float] = {}
    numbers: dict[str, dict] = {}
    for _ in range(args.rounds):
        for name, cmd in commands.items():
            elapsed, stdout = timed(cmd, env)
            best[name] = min(best.get(name, float("inf")), elapsed)
            numbers[name] = kweval_numbers(stdout) if name.startswith("kweval") else peer_numbers(stdout)

    print(f"data: {args.data} | predictions: {', '.join(p.stem for p in predictions)} | best of {args.rounds} rounds, whole processes")
    print(f"{'command':<26} {'seconds':>8}")
    for name, seconds in best.items():
        print(f"{name:<26} {seconds:8.2f}")
    for tool in ("kpeval", "pke"):
        ours, theirs = numbers[f"kweval --protocol {tool}"], numbers[f"{tool} (own code)"]
        agree = all(abs(ours[m][c] - theirs[m][c]) < 1e-9 for m in theirs for c in theirs[m])
        ratio = best[f"{tool} (own code)"] / best[f"kweval --protocol {tool}"]
        print(f"{tool}: {ratio:.1f}x faster (target >= 10x); F1@5/10/M equal: {agree}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
