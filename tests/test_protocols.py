"""Protocol presets reproduce pke's, KPEval's and OpenNMT-kpg's own numbers.

The reference vectors in tests/data/protocols_reference.json were obtained by
running each tool's evaluation code (see docs/protocols.md, "How the reference
numbers were made") on the same inputs: the small hostile collection
tests/data/keyphrase_edge (duplicates, punctuation, stemming variants, an empty
prediction list, an empty gold list, the word 'unk', 'a_b' vs 'a b') and
SemEval2017 with kweval's FirstPhrases predictions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kweval.data.keyphrase import read_documents
from kweval.keyphrase.protocols import PROTOCOLS, phrase_words, prf_at, score_documents, summarize

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "protocols_reference.json").read_text())


@pytest.fixture(scope="module")
def edge():
    collection = read_documents(DATA / "keyphrase_edge", [])
    lines = (DATA / "keyphrase_edge_predictions.jsonl").read_text().splitlines()
    predictions = {o["id"]: o["keyphrases"] for o in map(json.loads, lines)}
    return collection, predictions


def _per_doc(name, edge):
    collection, predictions = edge
    return score_documents(PROTOCOLS[name], collection.gold, predictions, collection.texts)


def test_edge_collection_reads_empty_gold_and_language(edge):
    collection, predictions = edge
    assert collection.doc_ids == ("d1", "d2", "d3", "d4", "d5", "d6")
    assert collection.gold["d5"] == [] and collection.language == "en"
    assert predictions["d4"] == []


@pytest.mark.parametrize("column", ["f1@5", "f1@10", "f1@M"])
def test_pke_per_document_equals_pke(edge, column):
    got = _per_doc("pke", edge)[column]
    for value, expected in zip(got, REFERENCE["edge"]["pke"][column]):
        if expected is None:  # pke raised ZeroDivisionError (no predictions / no gold); kweval scores 0
            assert value == 0.0
        else:
            assert value == pytest.approx(expected, abs=1e-12)


def test_kpeval_per_document_and_macro_equal_kpeval(edge):
    per_doc = _per_doc("kpeval", edge)
    for column, expected in REFERENCE["edge"]["kpeval"].items():
        np.testing.assert_allclose(per_doc[column], expected, atol=1e-12, err_msg=column)
    summary = summarize(PROTOCOLS["kpeval"], per_doc)
    for column, expected in REFERENCE["edge"]["kpeval_summary"].items():
        assert summary[column] == pytest.approx(expected, abs=1e-12), column


def test_meng_per_document_and_macro_equal_opennmt_kpg(edge):
    per_doc = _per_doc("meng", edge)
    for column, expected in REFERENCE["edge"]["meng"].items():
        np.testing.assert_allclose(per_doc[column], expected, atol=1e-12, err_msg=column)
    summary = summarize(PROTOCOLS["meng"], per_doc)
    for column, expected in REFERENCE["edge"]["meng_summary"].items():
        assert summary[column] == pytest.approx(expected, abs=1e-12), column


def test_presets_disagree_where_their_conventions_differ(edge):
    """d1 has 'neural network' twice among the gold: pke and meng count it in |G|, KPEval does not."""
    f1 = {name: _per_doc(name, edge)["f1@M"][0] for name in ("pke", "kpeval", "meng")}
    assert f1["kpeval"] == pytest.approx(0.5)
    assert f1["pke"] != pytest.approx(f1["meng"])  # pke keeps the repeated prediction in |P|
    # d6: 'graph based ranking' equals gold 'graph-based ranking' only under meng's \W split
    assert phrase_words(PROTOCOLS["meng"], "graph based ranking") == phrase_words(
        PROTOCOLS["meng"], "Graph-based ranking"
    )
    assert phrase_words(PROTOCOLS["kpeval"], "graph based ranking") != phrase_words(
        PROTOCOLS["kpeval"], "Graph-based ranking"
    )


def test_kpeval_defects_reproduced():
    kpeval = PROTOCOLS["kpeval"]
    # punctuation stays on words: 'langevin,' is not 'langevin'
    assert phrase_words(kpeval, "langevin,") != phrase_words(kpeval, "langevin")
    # the validity filter is off: a prediction with a bare comma still counts in |P| (hard cut-off ÷ k anyway)
    per_doc = score_documents(kpeval, {"d": ["a"]}, {"d": [",", "a"]}, None, cutoffs=("M",))
    assert per_doc["p@M"][0] == pytest.approx(0.5)
    meng = score_documents(PROTOCOLS["meng"], {"d": ["a"]}, {"d": ["unk model", "a"]}, None, cutoffs=("M",))
    assert meng["p@M"][0] == pytest.approx(1.0)  # 'unk model' dropped as invalid


@pytest.mark.parametrize(
    ("name", "expected_p"),
    [("kweval", 1 / 5), ("kpeval", 1 / 5), ("pke", 1 / 2), ("meng", 1 / 2)],
)
def test_hard_and_flexible_cutoff(name, expected_p):
    """Two predictions, one right, at k=5: hard divides by 5, flexible by 2."""
    p, r, f1 = prf_at(PROTOCOLS[name], np.array([True, False]), 4, 5)
    assert p == pytest.approx(expected_p) and r == pytest.approx(0.25)
    assert f1 == pytest.approx(2 * p * r / (p + r))


def test_macro_f1_mean_of_f1_versus_f1_of_means():
    per_doc = {
        "doc": np.array(["a", "b"], dtype=object),
        "p@5": np.array([1.0, 0.0]),
        "r@5": np.array([1.0, 0.0]),
        "f1@5": np.array([1.0, 0.0]),
    }
    assert summarize(PROTOCOLS["meng"], per_doc)["f1@5"] == pytest.approx(0.5)
    per_doc["r@5"] = np.array([0.5, 0.5])
    assert summarize(PROTOCOLS["kpeval"], per_doc)["f1@5"] == pytest.approx(0.5)  # F1(0.5, 0.5)
    assert summarize(PROTOCOLS["pke"], per_doc)["f1@5"] == pytest.approx(0.5)  # mean of the stored F1s


def test_every_preset_describes_every_convention():
    for protocol in PROTOCOLS.values():
        card = protocol.as_dict()
        assert all(value not in ("", None) for key, value in card.items() if key != "defects"), protocol.name
    assert {"kweval", "pke", "kpeval", "meng"} == set(PROTOCOLS)


@pytest.mark.keyphrase
@pytest.mark.parametrize("name", ["pke", "kpeval", "meng"])
def test_semeval2017_firstphrases_equals_each_tool(name, semeval_firstphrases):
    collection, predictions = semeval_firstphrases
    summary = summarize(
        PROTOCOLS[name], score_documents(PROTOCOLS[name], collection.gold, predictions, collection.texts)
    )
    for column, expected in REFERENCE["semeval2017_firstphrases"][name].items():
        assert not math.isnan(summary[column])
        assert summary[column] == pytest.approx(expected, abs=1e-12), column


def _main(*argv, capsys):
    from kweval.cli import main

    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_protocol_json_carries_card_and_tool_numbers(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    lines = (DATA / "keyphrase_edge_predictions.jsonl").read_text().splitlines()
    bad.write_text("\n".join(lines + ["{not json", '{"id": "d1"}']) + "\n")
    status, out, err = _main(
        "evaluate",
        str(DATA / "keyphrase_edge"),
        "--protocol",
        "kpeval",
        "--predictions",
        f"edge={bad}",
        "--format",
        "json",
        capsys=capsys,
    )
    assert status == 0
    bad_lines = [line for line in err.splitlines() if "bad.jsonl" in line]  # the data reader's messages
    assert len(bad_lines) == 2 and "bad.jsonl: line 7: not JSON" in err and "bad.jsonl: line 8: `keyphrases`" in err
    assert "Traceback" not in err
    result = json.loads(out)
    card = result["meta"]["protocol"]
    assert (
        card["preset"] == "kpeval"
        and card["cutoff"] == "hard (÷ k)"
        and card["aggregation"].startswith("macro: F1 of mean P")
    )
    assert len(card["dataset_sha256"]) == 64 and card["defects_reproduced"]
    row = result["rows"][0]
    for column, expected in REFERENCE["edge"]["kpeval_summary"].items():
        assert row[column] == pytest.approx(expected, abs=1e-6), column


def test_cli_protocol_csv_sidecar_and_tidy_predictions(tmp_path, capsys):
    tidy = tmp_path / "predictions.csv"
    rows = ["movie,review_id,model,rank,keyword,score"]
    for obj in map(json.loads, (DATA / "keyphrase_edge_predictions.jsonl").read_text().splitlines()):
        rows += [f'keyphrase_edge,{obj["id"]},m,{r},"{k}",1' for r, k in enumerate(obj["keyphrases"])]
    tidy.write_text("\n".join(rows) + "\n")
    out = tmp_path / "summary.csv"
    status, _, err = _main(
        "evaluate",
        str(DATA / "keyphrase_edge"),
        "--protocol",
        "meng",
        "--predictions",
        f"m={tidy}",
        "--out",
        str(out),
        capsys=capsys,
    )
    assert status == 0, err
    card = json.loads((tmp_path / "summary.csv.protocol.json").read_text())
    assert card["preset"] == "meng" and card["cutoff"].startswith("flexible")
    import pandas as pd

    row = pd.read_csv(out).iloc[0]
    assert row["f1@5"] == pytest.approx(REFERENCE["edge"]["meng_summary"]["f1@5"], abs=1e-6)


def test_cli_protocol_needs_per_document_data(capsys):
    status, _, err = _main("evaluate", "--protocol", "pke", capsys=capsys)
    assert status == 2 and "needs per-document ground truth" in err


def test_cli_extract_firstphrases_writes_ranked_jsonl(tmp_path, capsys):
    out = tmp_path / "fp.jsonl"
    status, _, err = _main(
        "extract",
        str(DATA / "keyphrase_edge"),
        "--extractor",
        "firstphrases",
        "--top",
        "3",
        "--out",
        str(out),
        capsys=capsys,
    )
    assert status == 0, err
    lists = {o["id"]: o["keyphrases"] for o in map(json.loads, out.read_text().splitlines())}
    assert lists["d1"] == ["Neural networks learn", "neural network", "trained"]  # runs of non-stop words, max 3
    assert all(len(v) <= 3 for v in lists.values()) and set(lists) == {f"d{i}" for i in range(1, 7)}


# ------------------------------------------------------------------ the light --protocol path

_EDGE_ARGS = [
    "evaluate",
    str(DATA / "keyphrase_edge"),
    "--protocol",
    "kpeval",
    "--predictions",
    f"edge={DATA / 'keyphrase_edge_predictions.jsonl'}",
]


def _python(code: str, cache: Path) -> str:
    import os
    import subprocess
    import sys

    env = {**os.environ, "KWEVAL_CACHE_DIR": str(cache), "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_protocol_command_loads_neither_pandas_numpy_nor_nltk_package(tmp_path):
    """Cold (no stem cache) and warm: the process never imports pandas, numpy, scipy or NLTK's package."""
    code = (
        "import sys, json\nfrom kweval.cli.fast import fast_main\n"
        f"status = fast_main({_EDGE_ARGS + ['--format', 'json', '--out', str(tmp_path / 'out.json')]!r})\n"
        "print(json.dumps([status, sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'numpy', "
        "'scipy', 'nltk'))]))"
    )
    for _ in ("cold", "warm"):
        status, loaded = json.loads(_python(code, tmp_path / "cache"))
        assert status == 0 and loaded == []
    assert list((tmp_path / "cache" / "stems").glob("porter-nltk-*.json"))
    row = json.loads((tmp_path / "out.json").read_text())["rows"][0]
    for column, expected in REFERENCE["edge"]["kpeval_summary"].items():
        assert row[column] == pytest.approx(expected, abs=1e-6), column


def test_light_porter_equals_nltk_and_nltk_still_imports_whole(tmp_path):
    words = ["running", "Langevin,", "generalizations", "flies", "dying", "sky", "relational", "ponies", "ÉTÉ", "x"]
    code = (
        "import json\nfrom kweval.text.stemming import load_porter\n"
        f"light = [load_porter()(w) for w in {words!r}]\n"
        "from nltk.stem.porter import PorterStemmer\nimport nltk\n"
        f"full = [PorterStemmer().stem(w) for w in {words!r}]\n"
        "print(json.dumps([light, full, hasattr(nltk, 'word_tokenize')]))"
    )
    light, full, whole = json.loads(_python(code, tmp_path))
    assert light == full and whole


def test_damaged_stem_cache_is_ignored_and_rewritten(tmp_path):
    from kweval.text.stemming import PorterCache

    path = tmp_path / "stems.json"
    path.write_text('{"running": 5, "truncated')
    cache = PorterCache(path)
    assert cache.stems == {} and cache.stem("running") == "run"
    cache.save()
    assert json.loads(path.read_text()) == {"running": "run"}
    unwritable = PorterCache(tmp_path / "file.txt" / "stems.json")
    (tmp_path / "file.txt").write_text("not a folder")
    assert unwritable.stem("flies") == "fli"
    unwritable.save()  # a failed write only costs the next run time


@pytest.mark.parametrize("fmt", ["json", "markdown", "csv"])
def test_light_path_writes_what_the_full_cli_writes(fmt, tmp_path, capsys):
    from kweval.cli.fast import fast_main

    full = tmp_path / f"full.{fmt}"
    light = tmp_path / f"light.{fmt}"
    assert _main(*_EDGE_ARGS, "--format", fmt, "--k", "3", "--out", str(full), capsys=capsys)[0] == 0
    assert fast_main(_EDGE_ARGS + ["--format", fmt, "--k", "3", "--out", str(light)]) == 0
    assert light.read_text() == full.read_text()


def test_light_path_leaves_what_it_does_not_know_to_the_full_cli():
    from kweval.cli.fast import DEFAULT_K, fast_main
    from kweval.evaluation.pipeline import EvalOptions

    assert DEFAULT_K == EvalOptions().k
    assert fast_main(_EDGE_ARGS + ["--match", "word"]) is None
    assert fast_main(_EDGE_ARGS + ["--k", "0"]) is None
    assert fast_main(_EDGE_ARGS + ["--help"]) is None
    assert fast_main(["evaluate", "--protocol", "kweval"]) is None
    assert fast_main(["convert", "x"]) is None


def test_card_hash_is_one_definition_stated_on_the_card(tmp_path, capsys):
    import hashlib

    from kweval.io.card import HASH_OF, dataset_hash, files_hash

    for folder in ("keys", "docsutf8"):
        (tmp_path / folder).mkdir()
    (tmp_path / "keys" / "a.key").write_bytes(b"x\n")
    (tmp_path / "docsutf8" / "a.txt").write_bytes(b"text")
    (tmp_path / "notes.bin").write_bytes(b"not read")  # no input of the layout: not hashed
    by_hand = hashlib.sha256(b"docsutf8/a.txt\0text" + b"keys/a.key\0x\n").hexdigest()
    files = [tmp_path / "keys" / "a.key", tmp_path / "docsutf8" / "a.txt"]
    assert dataset_hash(tmp_path) == files_hash(files, tmp_path) == by_hand
    status, out, _ = _main(*_EDGE_ARGS, "--format", "json", capsys=capsys)
    card = json.loads(out)["meta"]["protocol"]
    assert status == 0 and card["dataset_sha256_of"] == HASH_OF and "content_hash" in HASH_OF


def test_the_evaluation_card_names_what_semantic_and_sentiment_numbers_depend_on():
    from kweval.evaluation.pipeline import EvalOptions
    from kweval.io.card import card_line, evaluation_card

    plain = evaluation_card(EvalOptions(k=3), "data", "abc", aggregation="macro")
    assert "semantic" not in plain and "sentiment" not in plain and plain["k"] == 3
    card = evaluation_card(
        EvalOptions(semantic=True, sentiment=True, threshold=0.8, embedding_backend="torch"),
        "data",
        "abc",
        aggregation="micro",
    )
    assert card["semantic"].startswith("cosine of all-MiniLM-L6-v2 embeddings (torch, fp32), τ = 0.8")
    assert card["sentiment"].startswith("VADER")
    assert "τ = 0.8" in card_line(card) and card["aggregation"].startswith("micro")
