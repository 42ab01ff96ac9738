"""Score direction travels with predictions (issue 23, item 1): JSONL lines and table columns carry it,
`kweval extract` writes it, every reader honours it; and the data's vocabulary (item 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kweval.cli.dispatch import main
from kweval.data import detect_layout, load_dataset
from kweval.data.vocabulary import DOCUMENT_WORDS, MOVIE_WORDS, vocabulary
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io import report
from tests.helpers import SEMEVAL

DOCS = {
    "d1": ("alpha beta gamma delta epsilon", ["alpha", "gamma"]),
    "d2": ("zeta eta theta iota kappa", ["theta", "zeta"]),
}
KEYS = {"d1": ["alpha", "beta", "gamma"], "d2": ["eta", "theta", "zeta"]}
SCORES = {"d1": [0.9, 0.1, 0.5], "d2": [0.2, 0.8, 0.3]}  # costs: the lowest is the best


def write_collection(root: Path) -> Path:
    for sub in ("docsutf8", "keys"):
        (root / sub).mkdir(parents=True)
    for doc, (text, keys) in DOCS.items():
        (root / "docsutf8" / f"{doc}.txt").write_text(text, encoding="utf-8")
        (root / "keys" / f"{doc}.key").write_text("\n".join(keys) + "\n", encoding="utf-8")
    return root


def write_jsonl(path: Path, as_confidence: bool = False, direction: str | None = None) -> Path:
    """The predictions as JSONL: the costs, or (`as_confidence`) the confidences 1 / (1 + cost) that docs/metrics.md
    §1 makes of a lower-is-better score."""
    lines = []
    for doc, keys in KEYS.items():
        scores = [1.0 / (1.0 + s) if as_confidence else s for s in SCORES[doc]]
        line: dict = {"id": doc, "keyphrases": keys, "scores": scores}
        if direction is not None:
            line["score_direction"] = direction
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def w_precision(root: Path, preds: Path) -> float:
    ds = load_dataset(root, predictions={"m": preds})
    summary = aggregate(evaluate(ds, EvalOptions(k=3, match="exact")))
    return float(summary[summary["movie"] == "ALL"]["w_precision"].iloc[0])


def test_jsonl_direction_is_read_and_honoured(tmp_path):
    """Costs declared lower weigh as their confidences 1/(1 + cost) read higher; undeclared, they weigh otherwise."""
    root = write_collection(tmp_path / "Toy")
    lower = write_jsonl(tmp_path / "lower.jsonl", direction="lower")
    negated = write_jsonl(tmp_path / "negated.jsonl", as_confidence=True)
    plain = write_jsonl(tmp_path / "plain.jsonl")
    ds = load_dataset(root, predictions={"m": lower})
    assert ds.score_directions() == {"m": "lower"} and ds.problems == []
    assert load_dataset(root, predictions={"m": plain}).score_directions() == {"m": "higher"}
    assert w_precision(root, lower) == pytest.approx(w_precision(root, negated))
    assert w_precision(root, lower) != pytest.approx(w_precision(root, plain))


def test_bad_and_contradicting_directions_are_reported(tmp_path):
    root = write_collection(tmp_path / "Toy")
    path = tmp_path / "mixed.jsonl"
    lines = [
        {"id": "d1", "keyphrases": ["alpha"], "score_direction": "Lower"},
        {"id": "d2", "keyphrases": ["zeta"], "score_direction": "higher"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ds = load_dataset(root, predictions={"m": path})
    assert ds.score_directions() == {"m": "lower"}  # the first line's, case and spaces ignored
    assert any("contradicts" in p.reason and "line 2" in p.source for p in ds.problems)
    path.write_text(json.dumps({"id": "d1", "keyphrases": ["alpha"], "score_direction": "best"}) + "\n")
    ds = load_dataset(root, predictions={"m": path})
    assert ds.score_directions() == {"m": "higher"}
    assert any("is not higher/lower" in p.reason for p in ds.problems)


def test_table_column_and_predictions_beside_docsutf8(tmp_path):
    """A predictions.csv with a score_direction column inside the collection: the folder stays a collection."""
    root = write_collection(tmp_path / "Toy")
    rows = ["movie,review_id,model,rank,keyword,score,score_direction"]
    for doc, keys in KEYS.items():
        rows += [f"Toy,{doc},yake,{r},{k},{s},lower" for r, (k, s) in enumerate(zip(keys, SCORES[doc]))]
    (root / "predictions.csv").write_text("\n".join(rows) + "\n")
    assert detect_layout(root) == "keyphrase"
    ds = load_dataset(root)
    assert ds.score_directions() == {"yake": "lower"}
    assert len(evaluate(ds, EvalOptions(k=3)).scores) == 2  # the GT is found: both documents evaluated
    negated = write_jsonl(tmp_path / "negated.jsonl", as_confidence=True)
    summary = aggregate(evaluate(ds, EvalOptions(k=3, match="exact")))
    assert float(summary["w_precision"].iloc[-1]) == pytest.approx(w_precision(root, negated))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_extract_writes_the_direction(tmp_path, suffix, capsys):
    root = write_collection(tmp_path / "Toy")
    out = tmp_path / f"yake{suffix}"
    assert main(["extract", str(root), "--extractor", "yake", "--out", str(out), "--top", "3"]) == 0
    if suffix == ".jsonl":
        assert all(json.loads(line)["score_direction"] == "lower" for line in out.read_text().splitlines())
    assert load_dataset(root, predictions={"yake": out}).score_directions() == {"yake": "lower"}


@pytest.mark.keyphrase
def test_semeval_yake_jsonl_gives_the_lower_number(tmp_path):
    """The issue's check: 40 SemEval2017 documents, YAKE's JSONL from `kweval extract`: w_precision 0.4408 (lower),
    not 0.4060 (the same file read as higher-is-better)."""
    root = tmp_path / "SemEval2017"
    for sub in ("docsutf8", "keys"):
        (root / sub).mkdir(parents=True)
    for doc in sorted(p.stem for p in (SEMEVAL / "docsutf8").glob("*.txt"))[:40]:
        shutil.copy(SEMEVAL / "docsutf8" / f"{doc}.txt", root / "docsutf8")
        shutil.copy(SEMEVAL / "keys" / f"{doc}.key", root / "keys")
    out = tmp_path / "yake.jsonl"
    assert main(["extract", str(root), "--extractor", "yake", "--out", str(out)]) == 0
    approx = EvalOptions(match="approx")  # the numbers were made under approx, then the default here
    ev = evaluate(load_dataset(root, predictions={"yake": out}), approx)
    assert aggregate(ev)["w_precision"].iloc[-1] == pytest.approx(0.4408, abs=5e-5)
    stripped = tmp_path / "stripped.jsonl"
    stripped.write_text(out.read_text().replace(', "score_direction": "lower"', ""))
    ev = evaluate(load_dataset(root, predictions={"yake": stripped}), approx)
    assert aggregate(ev)["w_precision"].iloc[-1] == pytest.approx(0.4060, abs=5e-5)


def test_vocabulary_follows_the_data(tmp_path, demo_dataset):
    root = write_collection(tmp_path / "Toy")
    docs = load_dataset(root, predictions={"m": write_jsonl(tmp_path / "m.jsonl")})
    assert vocabulary(docs) == DOCUMENT_WORDS and vocabulary(demo_dataset) == MOVIE_WORDS
    assert docs.unit_names() == ("Collection", "Document")
    assert DOCUMENT_WORDS.count(9362) == "9,362 documents" and MOVIE_WORDS.count(1, "movie") == "1 movie"
    assert DOCUMENT_WORDS.gt_position(3) == "in the GT" and MOVIE_WORDS.gt_position(3) == "GT rank 3"
    summary = aggregate(evaluate(docs, EvalOptions(k=3)))
    markdown = report.to_markdown(summary, words=vocabulary(docs))
    assert markdown.startswith("| collection | model | n\\_documents |")
    assert report.to_markdown(summary).startswith("| movie | model | n\\_reviews |")  # movie-level default unchanged
    latex = report.render(summary, "latex", {"aggregate": "macro"}, words=DOCUMENT_WORDS)
    assert "average over documents" in latex and "per collection in bold" in latex and "movie" not in latex.lower()
    assert report.to_csv(summary).startswith("movie,model,n_reviews")  # the stable schema
