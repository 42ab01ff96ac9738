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
    parser.add_argument(
        "--predictions",
        type=Path,
        nargs=2,
        metavar="JSONL",
        help="two models' predictions (default: yake and firstphrases, extracted now)",
    )
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
            timed(
                [
                    sys.executable,
                    "-m",
                    "kweval",
                    "extract",
                    str(args.data),
                    "--extractor",
                    path.stem,
                    "--out",
                    str(path),
                ],
                env,
            )

    pred_args = [a for p in predictions for a in ("--predictions", f"{p.stem}={p}")]
    # kweval's own caches (the Porter stems) start empty: the first round is cold, the later ones warm.
    env = {**env, "KWEVAL_CACHE_DIR": tempfile.mkdtemp(prefix="bench_keyphrase_cache_")}
    commands = {}
    for tool in ("kpeval", "pke"):
        commands[f"kweval --protocol {tool}"] = [
            sys.executable,
            "-m",
            "kweval",
            "evaluate",
            str(args.data),
            "--protocol",
            tool,
            *pred_args,
            "--format",
            "json",
            "--quiet",
        ]
        commands[f"{tool} (own code)"] = [
            args.peer_python,
            str(REPO / "bench" / "peer_eval.py"),
            tool,
            "--peers",
            str(args.peers),
            "--data",
            str(args.data),
            *map(str, predictions),
        ]
    times: dict[str, list[float]] = {name: [] for name in commands}
    numbers: dict[str, dict] = {}
    for _ in range(args.rounds):
        for name, cmd in commands.items():
            elapsed, stdout = timed(cmd, env)
            times[name].append(elapsed)
            numbers[name] = kweval_numbers(stdout) if name.startswith("kweval") else peer_numbers(stdout)

    print("## Keyphrase protocols: kweval vs the peer tools' own evaluation code\n")
    print(
        f"`python bench/bench_keyphrase.py --rounds {args.rounds}` on {args.data.name} "
        f"({', '.join(p.stem for p in predictions)} predictions); whole processes, best of {args.rounds} rounds "
        "(kweval's first round starts with an empty stem cache: 'cold').\n"
    )
    print("| command | best s | first (cold) s |")
    print("| --- | ---: | ---: |")
    for name, values in times.items():
        print(f"| {name} | {min(values):.3f} | {values[0]:.3f} |")
    print()
    print("| tool | ratio (peer best / kweval best) | ratio, kweval cold | F1@5/10/M equal | target | |")
    print("| --- | ---: | ---: | --- | --- | --- |")
    for tool in ("kpeval", "pke"):
        ours, theirs = numbers[f"kweval --protocol {tool}"], numbers[f"{tool} (own code)"]
        agree = all(abs(ours[m][c] - theirs[m][c]) < 1e-9 for m in theirs for c in theirs[m])
        peer = min(times[f"{tool} (own code)"])
        ratio = peer / min(times[f"kweval --protocol {tool}"])
        cold = peer / times[f"kweval --protocol {tool}"][0]
        met = ratio >= 10 and agree
        print(
            f"| {tool} | {ratio:.1f}x | {cold:.1f}x | {agree} | >= 10x, equal numbers | {'met' if met else 'not met'} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
