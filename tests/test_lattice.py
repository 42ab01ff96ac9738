"""The protocol lattice (issue 27): every mixture of the presets' conventions is a protocol, and the vectorised
lattice gives `score_documents` + `summarize`'s numbers under any of them.

- Each convention has one definition (name, settings, a sentence each), and every preset is a combination of them.
- The kweval preset's conventions, scored by `score_documents`, give the pipeline's numbers (`kweval evaluate`) under
  every match mode: the kweval preset joins the same lattice as pke, KPEval and OpenNMT-kpg.
- `kweval.lattice.engine.Lattice` (the speed trick) equals `score_documents`/`summarize` (its plain definition)
  document by document under random protocols, on hostile small collections and on SemEval2017.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path

import pytest

from kweval.keyphrase.conventions import (
    BY_NAME,
    CONVENTIONS,
    NAMES,
    PRESETS,
    kweval_settings,
    parse_spec,
    preset_settings,
    presets_equal_to,
    spec_of,
)
from kweval.keyphrase.protocols import PROTOCOLS, Protocol, make_protocol, score_documents, summarize
from kweval.lattice.engine import Lattice, parse_metric
from tests.helpers import SEMEVAL

DATA = Path(__file__).parent / "data"
CUTOFFS = (5, 10, "M", "O")
METRICS = (
    [f"{m}@{c}" for c in CUTOFFS for m in ("p", "r", "f1")]
    + [f"{m}@{c}_present" for c in CUTOFFS for m in ("p", "r", "f1")]
    + ["r@50_absent", "r@M_absent"]
)


def test_one_definition_per_convention_and_protocol_fields_follow_it():
    fields = [f.name for f in dataclasses.fields(Protocol)]
    assert fields[3:] == list(NAMES)  # name, tool, defects, then one field per convention in CONVENTIONS' order
    for convention in CONVENTIONS:
        assert convention.label and convention.decides and len(convention.settings) >= 2
        assert all(sentence.strip() for sentence in convention.settings.values())
    for preset in PRESETS:
        assert PROTOCOLS[preset].settings() == preset_settings(preset)
        assert presets_equal_to(preset_settings(preset)) == [preset]


def test_every_preset_is_a_combination_of_settings_and_mixtures_are_protocols():
    mixed = parse_spec("kpeval,cutoff=pke,macro=mean_f1")
    assert mixed["cutoff"] == "flexible" and mixed["tokenizer"] == "space"
    assert presets_equal_to(mixed) == [] and spec_of(mixed) == "kpeval,cutoff=flexible,macro=mean_f1"
    assert make_protocol(mixed).name == "kpeval,cutoff=flexible,macro=mean_f1"
    for bad, said in [
        ("nope", "unknown preset"),
        ("pke,colour=red", "unknown convention"),
        ("pke,cutoff=sideways", "unknown setting"),
        ("pke,cutoff", "not CONVENTION=SETTING"),
    ]:
        with pytest.raises(ValueError, match=said):
            parse_spec(bad)


def test_kweval_match_modes_are_conventions():
    assert kweval_settings("stem") | {"stemming": "none", "matching": "exact"} == kweval_settings("exact")
    assert kweval_settings("approx")["matching"] == "approx"
    from kweval.evaluation.options import default_match
    from kweval.keyphrase.conventions import KWEVAL_MATCH

    assert KWEVAL_MATCH == default_match(per_document=True)  # the gap explains per-document data


def _edge():
    from kweval.data.keyphrase import read_documents

    collection = read_documents(DATA / "keyphrase_edge", [])
    lines = (DATA / "keyphrase_edge_predictions.jsonl").read_text().splitlines()
    return collection.gold, {o["id"]: o["keyphrases"] for o in map(json.loads, lines)}, dict(collection.texts)


_WORDS = ["topic", "models", "Topic", "model", "non-linear", "non linear", "a_b", "a b", "unk", "<unk>", "UNK"]
_WORDS += ["graph-based", "ranking", "ranks", "langevin,", "Langevin", "", " ", "alpha; beta", "x;y", "...", "News"]


def _hostile(seed: int, n: int = 12):
    """A collection built to separate the conventions: repeats, ';', empty and blank phrases, empty lists, case and
    punctuation variants, 'unk', documents without gold, with a blank text or without any."""
    rng = random.Random(seed)

    def phrase():
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))

    gold, predictions, texts = {}, {}, {}
    for i in range(n):
        doc = f"d{i}"
        gold[doc] = [] if i % 5 == 4 else [phrase() for _ in range(rng.randint(1, 6))]
        if i % 7 != 3:
            predictions[doc] = [] if i % 6 == 5 else [phrase() for _ in range(rng.randint(1, 12))]
        if i % 9 != 8:
            texts[doc] = " " if i % 8 == 7 else " ".join(phrase() for _ in range(12)) + " [sep] " + phrase()
    return gold, predictions, texts


def _random_settings(rng: random.Random) -> dict[str, str]:
    return {c.name: rng.choice(list(c.settings)) for c in CONVENTIONS}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _check_lattice(gold, predictions, texts, settings_list) -> None:
    lattice = Lattice(gold, predictions, texts)
    position = {d: i for i, d in enumerate(lattice.docs)}
    for settings in settings_list:
        protocol = make_protocol(settings)
        per_doc = score_documents(protocol, gold, predictions, texts, CUTOFFS)
        summary = summarize(protocol, per_doc)
        rows = [position[d] for d in per_doc["doc"]]
        for metric in METRICS:
            m = parse_metric(metric)
            assert _same(lattice.value(settings, m), summary[metric]), (protocol.name, metric)
            values = lattice.document_values(settings, m)
            assert all(_same(values[r], v) for r, v in zip(rows, per_doc[metric])), (protocol.name, metric)
            skipped = set(range(len(lattice.docs))) - set(rows)
            assert all(math.isnan(values[r]) for r in skipped)


@pytest.mark.parametrize("seed", range(4))
def test_lattice_equals_score_documents_on_hostile_collections(seed):
    rng = random.Random(seed)
    settings = [_random_settings(rng) for _ in range(60)] + [preset_settings(p) for p in PRESETS]
    _check_lattice(*_hostile(seed), settings)


def test_lattice_equals_score_documents_on_the_edge_collection():
    rng = random.Random(7)
    settings = [_random_settings(rng) for _ in range(80)] + [kweval_settings(m) for m in ("exact", "word", "stem")]
    _check_lattice(*_edge(), settings)


def test_inert_conventions_are_found_from_the_data():
    gold, predictions, texts = _edge()
    assert Lattice(gold, predictions, texts).inert == frozenset({"split"})  # d5 has no gold, d4 no predictions
    plain = {"a": ["x y"], "b": ["z"]}
    lattice = Lattice(plain, {"a": ["x"], "b": ["z"]}, {"a": "x y", "b": "z"})
    assert lattice.inert == frozenset({"split", "empty_list", "averaged"})
    assert Lattice(plain, {"a": ["x;y"]}, {"a": "x", "b": " "}).inert == frozenset()


def _write_collection(root: Path, gold, texts) -> None:
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    for doc, text in texts.items():
        (root / "docsutf8" / f"{doc}.txt").write_text(text, encoding="utf-8")
        (root / "keys" / f"{doc}.key").write_text("".join(f"{g}\n" for g in gold[doc]), encoding="utf-8")


def _pipeline_equals_kweval_settings(data: Path, predictions: Path, matches=("approx", "exact", "word", "stem")):
    """The kweval preset scored by `score_documents` gives `kweval evaluate`'s numbers (macro, per match mode)."""
    from kweval.data import load_dataset
    from kweval.data.keyphrase import read_documents
    from kweval.data.predictions import prediction_lists
    from kweval.evaluation.aggregate import aggregate
    from kweval.evaluation.pipeline import EvalOptions, evaluate

    documents = read_documents(data, [])
    lists = prediction_lists(predictions, "m", [])
    dataset = load_dataset(data, predictions={"m": str(predictions)})
    for match in matches:
        row = aggregate(evaluate(dataset, EvalOptions(k=7, match=match, keyphrase=True, present=True)), "macro")
        row = row.iloc[-1]
        protocol = make_protocol(kweval_settings(match))
        summary = summarize(protocol, score_documents(protocol, documents.gold, lists, documents.texts, (7, "M", "O")))
        assert row["n_reviews"] == summary["n_documents"]
        for column in ("f1@7", "r@7", "f1@M", "f1@O", "f1@7_present", "recall_present", "recall_absent"):
            expected = summary[parse_metric(column).name]  # NaN on both sides where undefined (no absent gold)
            assert row[column] == pytest.approx(expected, abs=1e-12, nan_ok=True), (match, column)


def test_kweval_preset_conventions_give_the_pipelines_numbers(tmp_path):
    _pipeline_equals_kweval_settings(DATA / "keyphrase_edge", DATA / "keyphrase_edge_predictions.jsonl")
    gold, predictions, texts = _hostile(3, 20)
    texts = {d: t for d, t in texts.items() if t.strip()}  # the reader keeps a text; a blank one is a document too
    texts["blank"], gold["blank"] = "  ", ["topic models"]
    _write_collection(tmp_path / "c", gold, texts)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": d, "keyphrases": p}) + "\n" for d, p in predictions.items()))
    _pipeline_equals_kweval_settings(tmp_path / "c", path)


@pytest.mark.keyphrase
def test_lattice_equals_score_documents_on_semeval2017(semeval_firstphrases):
    collection, predictions = semeval_firstphrases
    rng = random.Random(11)
    settings = [_random_settings(rng) for _ in range(8)] + [preset_settings(p) for p in PRESETS]
    _check_lattice(collection.gold, predictions, dict(collection.texts), settings)


@pytest.mark.keyphrase
def test_kweval_preset_equals_the_pipeline_on_semeval2017(tmp_path, semeval_firstphrases):
    collection, predictions = semeval_firstphrases
    path = tmp_path / "fp.jsonl"
    path.write_text("".join(json.dumps({"id": d, "keyphrases": p}) + "\n" for d, p in predictions.items()))
    _pipeline_equals_kweval_settings(SEMEVAL, path, ("approx", "stem"))


def test_convention_labels_are_what_the_explainer_prints():
    assert BY_NAME["cutoff"].sentence("flexible").startswith("P@k cut-off: min(k, |P|)")


def test_docs_table_of_conventions_is_the_code():
    from kweval.keyphrase import conventions_doc

    text = (Path(__file__).parents[1] / "docs" / "protocols.md").read_text(encoding="utf-8")
    assert conventions_doc.BEGIN in text and conventions_doc.END in text
    assert text == conventions_doc.with_table(text), (
        "docs/protocols.md is stale: run python -m kweval.keyphrase.conventions_doc docs/protocols.md"
    )
    for convention in CONVENTIONS:  # every setting's sentence is in the document, once per setting
        assert all(sentence.replace("|", "\\|") in text for sentence in convention.settings.values())
