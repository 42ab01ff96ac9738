"""Grounding and diversity on SemEval2017 with two extractors' predictions (YAKE, FirstPhrases: ~10,000 each).

Each step is a whole `kweval evaluate` process, timed in wall and CPU seconds (the machine may be shared: the
load average is printed beside every figure):

1. the lexical evaluation alone (the base the add-ons are measured against);
2. `--grounding` with an empty embedding store (cold: the model is loaded and every needed sentence, phrase and
   prediction is embedded and stored; the ONNX export is made once beforehand, as `kweval embed` would);
3. `--grounding` again (warm: every vector read from the store);
4. `--semantic` and `--semantic --diversity` (warm): what diversity adds to a semantic run;
5. `--grounding` cold and warm with a third "model" that gives each document the gold keyphrases of the next one
   (`other`): phrases nowhere in the text, as a hallucinating generator's, so every document's sentences and
   phrases are embedded (YAKE's and FirstPhrases' phrases are all present or supported by their own words, and
   need no embedding at all; SemEval2017's own gold is nearly all present too).

Budgets (issue 30): grounding ≤ 60 s cold and ≤ 5 s warm; diversity adds ≤ 10% to a semantic run.

    python bench/bench_grounding.py [--data DIR] [--predictions NAME=PATH ...] [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
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
DEFAULT_DATA = REPO.parent / "shared" / "data" / "keyphrase" / "SemEval2017"


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout) of `python -m kweval ARGS`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "kweval", *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"failed: kweval {' '.join(args)}\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def extracted(data: Path, folder: Path) -> list[str]:
    """--predictions of YAKE's and FirstPhrases' top 20 per document, written once into `folder`."""
    from kweval.data import read_per_document
    from kweval.keyphrase.extract import firstphrases_lists, yake_lists

    docs = read_per_document(data, [])
    ids, texts = list(docs.texts), list(docs.texts.values())
    specs = []
    for name, lists in (("yake", yake_lists(texts, 20)), ("firstphrases", firstphrases_lists(texts, 20))):
        path = folder / f"{name}.jsonl"
        if not path.exists():
            rows = [json.dumps({"id": d, "keyphrases": [p for p, _ in r]}) for d, r in zip(ids, lists)]
            path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        specs.append(f"{name}={path}")
    return specs


def other_file(data: Path, folder: Path) -> str:
    """--predictions giving each document the next document's gold keyphrases (a hallucinating model's stand-in)."""
    from kweval.data import read_per_document

    docs = read_per_document(data, [])
    ids = list(docs.texts)
    path = folder / "other.jsonl"
    rows = [
        json.dumps({"id": d, "keyphrases": list(docs.gold.get(ids[(i + 1) % len(ids)], []))}) for i, d in enumerate(ids)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return f"other={path}"


def line(label: str, wall: float, cpu: float, note: str = "") -> None:
    print(f"{label:<44} wall {wall:7.2f} s  CPU {cpu:7.2f} s  load {os.getloadavg()[0]:5.2f}{note}")


def best(args: list[str], env: dict[str, str], rounds: int) -> tuple[float, float]:
    """(wall, CPU) of the round with the least CPU."""
    return min((run(args, env)[:2] for _ in range(rounds)), key=lambda t: t[1])


def grades(stdout: str) -> None:
    for row in json.loads(stdout)["rows"]:
        if row["movie"] == "ALL":
            print(
                f"    {row['model']}: grounded_present {row['grounded_present']:.4f}, grounded_supported "
                f"{row['grounded_supported']:.4f}, unsupported {row['unsupported']:.4f}"
            )


@contextlib.contextmanager
def fresh_store():
    """The environment of a run with an empty embedding store in a temporary folder; the ONNX export is made in it
    once first (as `kweval embed` would: it is not the embedding a cold run measures)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=str(REPO), KWEVAL_CACHE_DIR=cache, HF_HUB_OFFLINE="1")
        warm_up = "from kweval.embeddings.semantic import embed_texts; embed_texts(['warm-up'])"
        subprocess.run([sys.executable, "-c", warm_up], env=env, check=True, capture_output=True)
        yield env


def extractors(base: list[str], rounds: int) -> None:
    """Steps 1-4: lexical, --grounding cold and warm, then diversity's share of a semantic run."""
    with fresh_store() as env:
        lexical = best(base, env, rounds)
        line("lexical (no add-on)", *lexical)
        cold = run([*base, "--grounding"], env)
        line("--grounding, empty store (cold)", *cold[:2], f"  grounding's own CPU {cold[1] - lexical[1]:.2f} s")
        warm = best([*base, "--grounding"], env, rounds)
        line("--grounding, warm", *warm, f"  grounding's own CPU {warm[1] - lexical[1]:.2f} s")
        grades(cold[2])
        run([*base, "--semantic", "--diversity"], env)  # fill the store with the keywords
        semantic = best([*base, "--semantic"], env, rounds)
        both = best([*base, "--semantic", "--diversity"], env, rounds)
        line("--semantic, warm", *semantic)
        line("--semantic --diversity, warm", *both, f"  diversity adds {both[1] / semantic[1] - 1:+.1%} CPU")
        print(
            f"ratios to the budgets (CPU): cold {cold[1] / 60:.2f} of 60 s, warm {warm[1] / 5:.2f} of 5 s, "
            f"diversity {(both[1] / semantic[1] - 1) / 0.10:.2f} of +10%"
        )


def with_other(base: list[str], other: str, rounds: int) -> None:
    """Step 5: another document's gold as a third model, whose phrases all reach the cosine test."""
    with fresh_store() as env:
        args = [*base, "--predictions", other, "--grounding"]
        cold = run(args, env)
        line("--grounding + other's gold, cold", *cold[:2], f"  ratio {cold[1] / 60:.2f} of 60 s")
        warm = best(args, env, rounds)
        line("--grounding + other's gold, warm", *warm, f"  ratio {warm[1] / 5:.2f} of 5 s")
        grades(cold[2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--predictions", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=2, help="warm rounds; the least CPU is reported (default 2)")
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"# {args.data} not found: nothing to measure")
        return 0
    out = REPO / "bench" / "out" / "grounding"
    out.mkdir(parents=True, exist_ok=True)
    specs = args.predictions or extracted(args.data, out)
    base = ["evaluate", str(args.data), *(a for s in specs for a in ("--predictions", s)), "--format", "json"]
    print(f"# data {args.data}; predictions {', '.join(specs)}")
    print(f"# command: python bench/bench_grounding.py --rounds {args.rounds}; kweval {' '.join(base)} [options]")
    extractors(base, args.rounds)
    with_other(base, other_file(args.data, out), args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
