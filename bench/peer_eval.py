"""Run pke's or KPEval's OWN evaluation code on a docsutf8 collection and JSONL predictions (for bench_keyphrase.py).

Nothing of the tools is copied here: this script imports them from their
checkouts (``--peers DIR`` holding ``boudinfl+pke`` and ``uclanlp+KPEval``) and
feeds them the files their own scripts read.

- pke: ``pke.utils.load_references(normalize_reference=True)`` stems the gold
  and the predictions; ``evaluate`` is the function of
  ``examples/benchmarking-models.py`` (taken from that file by name at run time).
- KPEval: ``metrics.exact_matching_metric.ExactMatchingMetric`` with the basic
  parameters of ``configs/sample_config_kp20k.gin`` and k = 5, 10, M, O; the
  ``metrics`` package is entered without its ``__init__`` (which imports every
  neural metric and their models).

Prints one JSON line per predictions file: {"model", "f1@5", "f1@10", "f1@M"}.
Needs, in the interpreter that runs it: nltk, numpy, scikit-learn, spacy (pke),
gin-config (KPEval).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
import tempfile
import types
from pathlib import Path


def read(data: Path, predictions: Path):
    docs = sorted(p.stem for p in (data / "docsutf8").glob("*.txt"))
    texts = {d: (data / "docsutf8" / f"{d}.txt").read_text(encoding="utf-8", errors="replace") for d in docs}
    keys = {}
    for d in docs:
        path = data / "keys" / f"{d}.key"
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []
        keys[d] = [line.strip() for line in lines if line.strip()]
    preds = {}
    for line in predictions.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        preds[obj["id"]] = obj["keyphrases"]
    return docs, texts, keys, preds


def run_pke(peers: Path, data: Path, prediction_files: list[Path]) -> None:
    sys.path.insert(0, str(peers / "boudinfl+pke"))
    import numpy as np
    from pke.utils import load_references

    source = (peers / "boudinfl+pke" / "examples" / "benchmarking-models.py").read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "evaluate")
    namespace: dict = {}
    exec(compile(ast.Module([node], []), "benchmarking-models.py", "exec"), namespace)
    evaluate = namespace["evaluate"]
    for path in prediction_files:
        docs, _texts, keys, preds = read(data, path)
        tmp = Path(tempfile.mkdtemp())
        (tmp / "refs.json").write_text(json.dumps({d: [[k] for k in keys[d]] for d in docs}))
        (tmp / "preds.json").write_text(json.dumps({d: [[k] for k in preds.get(d, [])] for d in docs}))
        refs = load_references(str(tmp / "refs.json"), normalize_reference=True, language="en")
        outs = load_references(str(tmp / "preds.json"), normalize_reference=True, language="en")
        result = {"model": path.stem}
        for cut in (5, 10, "M"):
            scores = []
            for d in docs:
                top = outs.get(d, [])
                try:
                    scores.append(evaluate(top if cut == "M" else top[:cut], refs[d]))
                except ZeroDivisionError:
                    scores.append((float("nan"),) * 3)
            result[f"f1@{cut}"] = float(np.nanmean(np.array(scores)[:, 2]))
        print(json.dumps(result))


def run_kpeval(peers: Path, data: Path, prediction_files: list[Path]) -> None:
    root = peers / "uclanlp+KPEval"
    sys.path.insert(0, str(root))
    import gin

    package = types.ModuleType("metrics")
    package.__path__ = [str(root / "metrics")]
    sys.modules["metrics"] = package
    package.KeyphraseMetric = importlib.import_module("metrics.metric").KeyphraseMetric
    exact = importlib.import_module("metrics.exact_matching_metric")
    gin.parse_config(
        "KeyphraseMetric.kp_sep = ';'\nKeyphraseMetric.title_sep = '[sep]'\n"
        "KeyphraseMetric.unk_word = '[unk]'\nKeyphraseMetric.invalidate_unk = True\n"
        "ExactMatchingMetric.k_list = [5, 10, 'M', 'O']\n"
    )
    for path in prediction_files:
        docs, texts, keys, preds = read(data, path)
        inputs = [" ".join(texts[d].splitlines()).strip() for d in docs]
        refs = [";".join(keys[d]) for d in docs]
        outs = [";".join(preds.get(d, [])) for d in docs]
        _per_doc, summary = exact.ExactMatchingMetric().evaluate(outs, refs, inputs)
        print(
            json.dumps(
                {"model": path.stem, **{f"f1@{k}": float(summary[f"macro_avg_f1@{k}_all"]) for k in (5, 10, "M")}}
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tool", choices=["pke", "kpeval"])
    parser.add_argument("--peers", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("predictions", type=Path, nargs="+")
    args = parser.parse_args()
    (run_pke if args.tool == "pke" else run_kpeval)(args.peers, args.data, args.predictions)


if __name__ == "__main__":
    main()
