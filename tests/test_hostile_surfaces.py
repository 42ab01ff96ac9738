"""The keyphrase surfaces under hostile input (issue 22): extract, CSV round trips, TREC export, --predictions,
--protocol options, messages.  Every input is built in tmp_path; each test fails without its fix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kweval.cli.dispatch import main
from kweval.cli.fast import fast_main

TEXTS = {
    "=cmd": (
        "Topic models are used for text mining. Latent Dirichlet allocation is a topic model.",
        ["topic models", "text mining"],
    ),
    "-neg": (
        "Neural networks learn representations. Deep learning uses neural networks.",
        ["neural networks", "deep learning"],
    ),
    "+plus": (
        "Keyphrase extraction finds phrases in documents using graph ranking.",
        ["keyphrase extraction", "graph ranking"],
    ),
    "plain": ("Graph ranking of keyphrase extraction in documents.", ["graph ranking", "documents"]),
}


def write_collection(root: Path, docs: dict[str, tuple[str, list[str]]]) -> Path:
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    for doc, (text, keys) in docs.items():
        (root / "docsutf8" / f"{doc}.txt").write_text(text, encoding="utf-8")
        (root / "keys" / f"{doc}.key").write_text("\n".join(keys) + "\n", encoding="utf-8")
    return root


def write_jsonl(path: Path, lines: list) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """`kweval ARGV` in this process: (exit status, stdout, stderr)."""
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def kweval_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("kweval:")]


# --- 1. extract: every document keeps its own line -------------------------------------------------------------


class HashEmbedder:
    """Deterministic vectors for KeyBERT without a model (its candidate selection and ranking are KeyBERT's own)."""

    def __call__(self, backend: str = "auto"):
        from keybert.backend import BaseEmbedder

        class Embedder(BaseEmbedder):
            def embed(self, documents, verbose: bool = False):
                rows = [np.random.default_rng(abs(hash(d)) % 2**32).normal(size=16) for d in documents]
                return np.array(rows).reshape(len(rows), 16)

        return Embedder()


@pytest.mark.parametrize("n_empty,n_full", [(2, 0), (64, 1), (3, 2)])
def test_keybert_extract_keeps_one_line_per_document_with_empty_documents(
    tmp_path, capsys, monkeypatch, n_empty, n_full
):
    """KeyBERT returns nothing for a batch without vocabulary: ids must neither shift nor vanish."""
    pytest.importorskip("keybert")
    from kweval.keyphrase import extract

    monkeypatch.setattr(extract, "store_embedder", HashEmbedder())
    docs = {f"e{i:03d}": ("" if i % 2 else "the of and", ["x"]) for i in range(n_empty)}
    docs.update({f"f{i:03d}": ("Graph neural networks learn molecular properties.", ["graph"]) for i in range(n_full)})
    root = write_collection(tmp_path / "c", docs)
    out = tmp_path / "kb.jsonl"
    status, _, err = run(capsys, "extract", str(root), "--extractor", "keybert", "--out", str(out))
    assert status == 0, err
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == sorted(docs)
    assert all(x["keyphrases"] == [] for x in lines if x["id"].startswith("e"))
    assert all(x["keyphrases"] for x in lines if x["id"].startswith("f"))
    assert f"{n_empty} document(s) without any keyphrase" in err


# --- 2. extract -> CSV -> evaluate ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["kweval", "pke"])
def test_extract_csv_round_trip_names_formula_like_ids(tmp_path, capsys, protocol):
    root = write_collection(tmp_path / "c", TEXTS)
    results = {}
    for suffix in (".csv", ".jsonl", ".parquet"):
        pred = tmp_path / f"fp{suffix}"
        assert run(capsys, "extract", str(root), "--extractor", "firstphrases", "--out", str(pred))[0] == 0
        status, out, err = run(
            capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"fp={pred}", "--format", "json"
        )
        assert status == 0 and "not in" not in err, err
        rows = json.loads(out)["rows"] if "rows" in json.loads(out) else json.loads(out)
        results[suffix] = rows
    assert "'=cmd" in (tmp_path / "fp.csv").read_text()  # the CSV is still guarded against formulas
    assert results[".csv"] == results[".jsonl"] == results[".parquet"]


def test_csv_guard_is_an_exact_inverse():
    import pandas as pd

    from kweval.data.formulas import unguard
    from kweval.io.report import neutralise_formulas

    cells = ["=cmd", "'=cmd", "''-x", "'quoted", "plain", "-", "@a", "\tx"]
    written = neutralise_formulas(pd.DataFrame({"c": cells}))["c"].tolist()
    assert all(w.lstrip("'")[:1] not in "=+-@\t\r" or w.startswith("'") for w in written)
    assert [unguard(w) for w in written] == cells


# --- 11. messages: one line per problem, user strings escaped -----------------------------------------------------

HOSTILE = "m\n kweval: forged \x1b[31m\u202e"


def test_hostile_model_and_id_are_escaped_one_line_each(tmp_path, capsys):
    root = write_collection(tmp_path / "c", TEXTS)
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": HOSTILE, "keyphrases": ["graph ranking"]}])
    missing = tmp_path / f"nope{HOSTILE}.jsonl"
    for protocol in ("kweval", "pke"):
        status, _, err = run(
            capsys,
            "evaluate",
            str(root),
            "--protocol",
            protocol,
            "--predictions",
            f"{HOSTILE}={pred}",
            "--predictions",
            f"x={missing}",
            "--models",
            HOSTILE,
        )
        assert "\x1b" not in err and "\u202e" not in err and "\udc80" not in err
        assert not any(line.startswith(" kweval: forged") for line in err.splitlines())
        assert "\\x1b[31m" in err and "\\u202e" in err and "\\n kweval: forged" in err
        assert all(line.startswith("kweval: ") or not line.strip() for line in err.splitlines()), err
    status, _, err = run(capsys, "evaluate", str(root), "--predictions", f"p={pred}", "--models", HOSTILE)
    assert status == 2 and len(kweval_lines(err)) == len(err.strip().splitlines()) and "\\u202e" in err


# --- 5, 6. --predictions names and unusable files ----------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["kweval", "pke", "kpeval", "meng"])
def test_same_predictions_name_twice_is_one_usage_line(tmp_path, capsys, protocol):
    root = write_collection(tmp_path / "c", TEXTS)
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": "plain", "keyphrases": ["graph ranking"]}])
    argv = ["evaluate", str(root), "--protocol", protocol, "--predictions", f"m={pred}", "--predictions", f"m={pred}"]
    for call in (lambda: fast_main(argv), lambda: main(argv)):
        status = call()
        err = capsys.readouterr().err
        if status is None:  # the fast parser hands the kweval preset to the full CLI
            continue
        assert status == 2 and kweval_lines(err) == [err.strip()] and "NAME m given more than once" in err


@pytest.mark.parametrize("protocol", ["kweval", "pke"])
def test_jsonl_without_usable_line_is_not_a_model_scoring_zero(tmp_path, capsys, protocol):
    root = write_collection(tmp_path / "c", TEXTS)
    good = write_jsonl(tmp_path / "good.jsonl", [{"id": "plain", "keyphrases": ["graph ranking", 7, None, "x"]}])
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"x": 1}, "not json", {"id": "plain", "keyphrases": "a"}])
    status, out, err = run(
        capsys,
        "evaluate",
        str(root),
        "--protocol",
        protocol,
        "--format",
        "json",
        "--predictions",
        f"good={good}",
        "--predictions",
        f"bad={bad}",
    )
    assert status == 0, err
    models = {row["model"] for row in json.loads(out)["rows"]}
    assert models == {"good"}
    assert "no usable predictions; model bad not evaluated" in err
    assert "2 keyphrase(s) that are not strings; dropped" in err
    status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"bad={bad}")
    assert status == 2 and "nothing could be evaluated" in err


# --- 7. every other option under --protocol pke|kpeval|meng: applied or refused ---------------------------------


@pytest.fixture()
def protocol_run(tmp_path, capsys):
    root = write_collection(tmp_path / "c", TEXTS)
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": "plain", "keyphrases": ["graph ranking", "x"]}])

    def call(*extra: str, protocol: str = "pke") -> tuple[int, str, str]:
        return run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"m={pred}", *extra)

    return call, tmp_path


@pytest.mark.parametrize("protocol", ["pke", "kpeval", "meng"])
def test_protocol_fail_under_gates(protocol_run, protocol):
    call, _ = protocol_run
    status, _, err = call("--fail-under", "f1@5=0.99", protocol=protocol)
    assert status == 1 and "m: f1@5 = " in err and "is below 0.99" in err
    assert call("--fail-under", "f1@5=0.01", protocol=protocol)[0] == 0
    status, _, err = call("--fail-under", "ndcg@5=0.1", protocol=protocol)
    assert status == 2 and "unknown metric 'ndcg@5'" in err


def test_protocol_per_review_writes_every_document(protocol_run):
    call, tmp = protocol_run
    status, _, err = call("--per-review", str(tmp / "per.csv"))
    assert status == 0, err
    import pandas as pd

    table = pd.read_csv(tmp / "per.csv", dtype={"review_id": str}, keep_default_na=False)
    assert sorted(table["review_id"]) == sorted(["'" + d if d[0] in "=+-" else d for d in TEXTS])
    assert table.loc[table["review_id"] == "plain", "f1@5"].item() == pytest.approx(2 * 0.5 * 0.5 / 1.0)


@pytest.mark.parametrize(
    "extra,said",
    [
        (["--models", "mm"], "unknown model(s): mm"),
        (["--movies", "zz"], "unknown movie(s): zz"),
        (["--aggregate", "micro"], "--aggregate:"),
        (["--aggregate", "macro"], "--aggregate:"),
        (["--match", "exact"], "--match:"),
        (["--semantic"], "--semantic:"),
        (["--legacy"], "--legacy:"),
        (["--sentiment"], "--sentiment:"),
        (["--gain", "exponential"], "--gain:"),
        (["--no-present"], "--no-present:"),
    ],
)
def test_protocol_refuses_what_it_cannot_apply_in_one_line(protocol_run, extra, said):
    call, _ = protocol_run
    status, out, err = call(*extra)
    assert status == 2 and out == "" and kweval_lines(err) == [err.strip()] and said in err


def test_protocol_applies_models_and_movies(protocol_run):
    call, _ = protocol_run
    status, out, err = call("--models", "m", "--movies", "c", "--format", "json")
    assert status == 0 and [r["model"] for r in json.loads(out)["rows"]] == ["m"], err


# --- 4. --protocol kweval: documents without predictions score 0 and are counted ----------------------------------


def test_kweval_protocol_does_not_reward_omission(tmp_path, capsys):
    docs = {f"d{i}": (f"alpha beta gamma {i}", ["alpha", "beta"]) for i in range(6)}
    root = write_collection(tmp_path / "c", docs)
    full = [{"id": f"d{i}", "keyphrases": ["alpha", "beta"] if i < 3 else ["x", "y"]} for i in range(6)]
    write_jsonl(tmp_path / "full.jsonl", full)
    write_jsonl(tmp_path / "part.jsonl", full[:3])  # the worst three left out

    def summary(name: str, *extra: str) -> dict:
        status, out, err = run(
            capsys, "evaluate", str(root), "--predictions", f"m={tmp_path / name}", "--format", "json", *extra
        )
        assert status == 0, err
        return next(r for r in json.loads(out)["rows"] if r["movie"] == "ALL"), err

    full_row, _ = summary("full.jsonl")
    part_row, err = summary("part.jsonl")
    assert (
        part_row["f1@5"] == pytest.approx(full_row["f1@5"]) == pytest.approx(0.5 * (2 * 0.4 / 1.4))
    )  # hard P@5 = 2/5, R = 1
    assert part_row["n_reviews"] == 6 and part_row["n_skipped"] == 0
    assert "3 of 6 document(s) without predictions (e.g. d3); each scores 0 and is counted" in err
    skipped, _ = summary("part.jsonl", "--missing", "skip")
    assert skipped["n_reviews"] == 3 and skipped["n_skipped"] == 3 and skipped["f1@5"] > full_row["f1@5"]
    status, _, err = run(
        capsys,
        "evaluate",
        str(root),
        "--protocol",
        "pke",
        "--predictions",
        f"m={tmp_path / 'part.jsonl'}",
        "--missing",
        "skip",
    )
    assert status == 2 and "--missing skip" in err


# --- 3. TREC export of a per-document collection -----------------------------------------------------------------


def _read_trec(path: Path, run: bool) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        qid, doc, value = (parts[0], parts[2], float(parts[4])) if run else (parts[0], parts[2], int(parts[3]))
        out.setdefault(qid, {})[doc] = value
    return out


def test_trec_export_of_a_collection_equals_kweval_per_document(tmp_path, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from kweval.data import load_dataset
    from kweval.evaluation.pipeline import EvalOptions, evaluate
    from kweval.io.export import query_id

    gold = {
        "a": ["topic models", "text mining", "latent dirichlet allocation", "gibbs sampling", "perplexity"],
        "b": ["neural networks", "deep learning"],
        "c": [
            "graph ranking",
            "keyphrase extraction",
            "textrank",
            "pagerank",
            "random walk",
            "stop words",
            "n grams",
            "part of speech",
            "noun phrases",
        ],
        "d": ["alpha"],
    }
    root = write_collection(tmp_path / "c", {d: (" ".join(g), g) for d, g in gold.items()})
    preds = [  # other documents' gold first: must not match, nor be named by their ids
        {
            "id": "a",
            "keyphrases": ["neural networks", "x", "text mining", "graph ranking", "topic models", "perplexity"],
        },
        {"id": "b", "keyphrases": ["textrank", "deep learning", "y", "neural networks"]},
        {"id": "c", "keyphrases": ["z", "alpha", "pagerank", "noun phrases", "topic models", "graph ranking"]},
    ]  # d: no predictions
    pred = write_jsonl(tmp_path / "p.jsonl", preds)
    status, _, err = run(capsys, "export", str(root), "--predictions", f"m={pred}", "--out", str(tmp_path / "trec"))
    assert status == 0, err
    qrels = _read_trec(tmp_path / "trec" / "qrels.txt", run=False)
    runs = _read_trec(tmp_path / "trec" / "run.m.txt", run=True)
    for doc, keys in gold.items():
        assert len(qrels[query_id("c", doc)]) == len(keys)  # its own gold only
        assert set(qrels[query_id("c", doc)].values()) == {1_000_000}  # unranked: every key graded 1
        named = {d for d in runs.get(query_id("c", doc), {}) if d.startswith("g")}
        assert named <= set(qrels[query_id("c", doc)])  # matched keywords named by this document's gold ids
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_5", "P_5"}).evaluate(runs)
    scores = evaluate(load_dataset(root, predictions={"m": pred}), EvalOptions(k=5)).scores.set_index("review_id")
    for doc in ("a", "b", "c"):
        assert got[query_id("c", doc)]["ndcg_cut_5"] == pytest.approx(scores.loc[doc, "ndcg@5"], abs=1e-9), doc
        assert got[query_id("c", doc)]["P_5"] == pytest.approx(scores.loc[doc, "p@5"], abs=1e-12), doc
    assert scores.loc["d", "ndcg@5"] == 0.0 and query_id("c", "d") not in runs  # no predictions: 0, not in the run


def test_trec_export_of_nothing_is_one_line_and_failure(tmp_path, capsys):
    root = write_collection(tmp_path / "c", TEXTS)  # a collection without predictions
    status, _, err = run(capsys, "export", str(root), "--out", str(tmp_path / "trec"))
    assert status != 0 and len(kweval_lines(err)) == 1 and "nothing could be evaluated" in err
    assert not (tmp_path / "trec" / "qrels.txt").exists()


# --- 9. a predictions table beside docsutf8/ ---------------------------------------------------------------------


@pytest.mark.parametrize("where", ["predictions.csv", "predictions.parquet", "predictions/firstphrases.jsonl"])
def test_predictions_table_beside_docsutf8_is_read_with_the_collection(tmp_path, capsys, where):
    root = write_collection(tmp_path / "c", TEXTS)
    reference = tmp_path / "fp.jsonl"
    assert run(capsys, "extract", str(root), "--extractor", "firstphrases", "--out", str(reference))[0] == 0
    beside = root / where
    beside.parent.mkdir(exist_ok=True)
    assert run(capsys, "extract", str(root), "--extractor", "firstphrases", "--out", str(beside))[0] == 0
    for protocol in ("kweval", "meng"):
        status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--format", "json")
        assert status == 0, err
        got = json.loads(out)["rows"]
        assert {r["model"] for r in got} == {"firstphrases"}  # a file of predictions/ is named by its file
        beside.rename(tmp_path / beside.name)  # the same predictions given with --predictions
        status, out, err = run(
            capsys,
            "evaluate",
            str(root),
            "--protocol",
            protocol,
            "--format",
            "json",
            "--predictions",
            f"firstphrases={reference}",
        )
        (tmp_path / beside.name).rename(beside)
        assert status == 0 and got == json.loads(out)["rows"], err


def test_predictions_jsonl_beside_docsutf8_is_no_model_named_predictions(tmp_path, capsys):
    root = write_collection(tmp_path / "c", TEXTS)
    assert (
        run(capsys, "extract", str(root), "--extractor", "firstphrases", "--out", str(root / "predictions.jsonl"))[0]
        == 0
    )
    for protocol in ("kweval", "meng"):
        status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--format", "json")
        assert status == 2 and out == "" and "predictions" not in out
        assert (
            "predictions.jsonl: a JSONL file is one model, named by its file: move it to predictions/<model>.jsonl"
            in err
        )


# --- 10. hostile file system and text ----------------------------------------------------------------------------


def _deny(monkeypatch, *suffixes: str) -> None:
    """Reading a file whose path ends in one of `suffixes` raises PermissionError, as chmod 000 does for a non-root
    user (tests run as root, where chmod 000 blocks nothing)."""
    import pandas as pd

    real_bytes, real_pickle = Path.read_bytes, pd.read_pickle

    def denied(path) -> bool:
        return str(path).endswith(suffixes)

    def read_bytes(self):
        if denied(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_bytes(self)

    def read_pickle(path, *args, **kwargs):
        if denied(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_pickle(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(pd, "read_pickle", read_pickle)


def test_lone_surrogates_in_jsonl_are_replaced_and_said(tmp_path, capsys):
    root = write_collection(tmp_path / "c", TEXTS)
    raw = (
        '{"id": "plain", "keyphrases": ["graph ranking", "bad \\udc80 phrase"]}\n{"id": "x\\ud800", "keyphrases": []}\n'
    )
    pred = tmp_path / "p.jsonl"
    pred.write_text(raw, encoding="utf-8")
    for protocol in ("kweval", "pke"):
        status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"m={pred}")
        assert status == 0 and "Traceback" not in err, err
        assert "2 string(s) with lone surrogates (not text); replaced by U+FFFD" in err
        assert "\udc80" not in err and "\ud800" not in err


@pytest.mark.parametrize("protocol", ["kweval", "meng"])
def test_hostile_collection_files_are_one_line_each_and_the_rest_evaluated(tmp_path, capsys, monkeypatch, protocol):
    import os

    root = write_collection(tmp_path / os.fsdecode(b"coll\xff"), TEXTS)
    (root / "docsutf8" / "dangling.txt").symlink_to(root / "nowhere.txt")
    (root / "docsutf8" / "loop.txt").symlink_to(root / "docsutf8" / "loop.txt")
    (root / "keys" / "folder.key").mkdir()
    bad = os.fsdecode(b"bad\xfename")
    (root / "docsutf8" / f"{bad}.txt").write_text("graph ranking here", encoding="utf-8")
    (root / "keys" / f"{bad}.key").write_text("graph ranking\n", encoding="utf-8")
    write_collection(tmp_path / "more", {"u": ("unreadable text", ["x"]), "v": ("graph ranking", ["graph ranking"])})
    for d in ("u", "v"):  # an unreadable document (u) and an unreadable key file (v) in a second copy
        (root / "docsutf8" / f"{d}.txt").write_bytes((tmp_path / "more" / "docsutf8" / f"{d}.txt").read_bytes())
        (root / "keys" / f"{d}.key").write_bytes((tmp_path / "more" / "keys" / f"{d}.key").read_bytes())
    _deny(monkeypatch, "docsutf8/u.txt", "keys/v.key")
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": "plain", "keyphrases": ["graph ranking"]}])
    status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"m={pred}")
    assert status == 0 and "Traceback" not in err and out, err
    lines = kweval_lines(err)
    assert len(lines) == len(err.strip().splitlines())  # nothing but one-line problems
    assert any("2 *.txt name(s) not a readable file" in line for line in lines)
    assert any("1 *.key name(s) not a readable file" in line and "folder.key" in line for line in lines)
    assert any("file name(s) not UTF-8" in line for line in lines)
    assert any("u.txt: unreadable document (Permission denied)" in line for line in lines)
    assert any("v.key: unreadable key file (Permission denied)" in line for line in lines)
    assert "\\udcff" in err or "\\udcfe" in err or "\ufffd" in err  # names shown escaped or replaced, never raw


def _dnlp(root: Path, movies: dict[str, list[str]], gt_cells: list[object]) -> Path:
    import pandas as pd

    (root / "Extracted_Keywords").mkdir(parents=True)
    for i, (movie, keywords) in enumerate(movies.items()):
        frame = pd.DataFrame(
            {
                "Movie_ID": [f"tt{i}"] * 2,
                "Review_ID": [f"{movie}-r1", f"{movie}-r2"],
                "Preprocessed_Review": ["a good film", "a bad film"],
                "keywords_base": [[(k, 0.9 - 0.1 * j) for j, k in enumerate(keywords)]] * 2,
            }
        )
        frame.to_pickle(root / "Extracted_Keywords" / f"kw_{movie}.pkl")
    rows = [(f"tt{i}", cell, 5, 0) for i in range(len(movies)) for cell in gt_cells]
    pd.DataFrame(rows, columns=["Movie_ID", "Keyword", "Helpful", "Not_Helpful"]).to_pickle(
        root / "keywords_ground_truth.pkl"
    )
    return root


def test_dnlp_unreadable_movie_file_and_list_gt_cells_are_said(tmp_path, capsys, monkeypatch):
    root = _dnlp(
        tmp_path / "Dataset",
        {"A": ["good film", "x"], "B": ["bad film"], "C": ["y"]},
        ["good film", ["bad", "film"], "bad film", 3],
    )
    _deny(monkeypatch, "kw_B.pkl")
    status, out, err = run(capsys, "evaluate", str(root), "--jobs", "1")
    assert status == 0, err
    lines = kweval_lines(err)
    assert any("kw_B.pkl: unreadable predictions file" in line for line in lines)
    assert any(
        "6 keyword cell(s) are not text (e.g. list ['bad', 'film']); those GT rows are dropped" in line
        for line in lines
    )
    movies = {line.split(",")[0] for line in out.splitlines()[1:]}
    assert movies == {"A", "C", "ALL"}


def test_tidy_unreadable_optional_reviews_table_is_one_line(tmp_path, capsys, monkeypatch):
    root = _dnlp(tmp_path / "Dataset", {"A": ["good film"]}, ["good film"])
    tidy = tmp_path / "tidy"
    assert run(capsys, "convert", str(root), str(tidy), "--format", "csv")[0] == 0
    _deny(monkeypatch, "reviews.csv")
    status, out, err = run(capsys, "evaluate", str(tidy))
    assert status == 0 and "reviews.csv" in err and "Traceback" not in err and "A,base" in out, err


@pytest.mark.parametrize("name", ["kweval.messages", "kweval.data.formulas"])
def test_docstring_examples_run(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted and result.failed == 0


def test_every_kweval_line_goes_through_the_one_escaping_function():
    """No module writes a `kweval:` line of its own with an f-string: they call kweval.messages (or problem_lines)."""
    import re

    from tests.helpers import REPO

    offenders = []
    for path in (REPO / "kweval").rglob("*.py"):
        if path.name == "messages.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(r"""(print|write)\(\s*f["']kweval: \{(?!shown\()""", line):
                offenders.append(f"{path.relative_to(REPO)}:{number}")
    assert offenders == []


def test_fast_path_escapes_hostile_ids_too(tmp_path, capsys):
    root = write_collection(tmp_path / "c", TEXTS)
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": HOSTILE, "keyphrases": ["graph ranking"]}])
    status = fast_main(["evaluate", str(root), "--protocol", "pke", "--predictions", f"m={pred}"])
    err = capsys.readouterr().err
    assert status == 0 and "\x1b" not in err and "\u202e" not in err and "\\x1b[31m" in err
    assert all(line.startswith("kweval: ") for line in err.splitlines())


@pytest.mark.parametrize("protocol,p5", [("pke", 0.5), ("kpeval", 0.2), ("meng", 1.0)])
def test_empty_string_prediction_in_parquet_follows_the_preset(tmp_path, capsys, protocol, p5):
    """Parquet keeps "" apart from a null keyword (an empty list): pke and KPEval count it in |P| (docs/protocols.md
    defect 1), as from JSONL; meng's validity filter drops it."""
    import pandas as pd

    root = write_collection(tmp_path / "c", {"d": ("we study topic models", ["topic models"])})
    rows = [("c", "d", "m", 0, "", 0.9), ("c", "d", "m", 1, "topic models", 0.8)]
    table = pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"])
    table.to_parquet(tmp_path / "p.parquet")
    write_jsonl(tmp_path / "p.jsonl", [{"id": "d", "keyphrases": ["", "topic models"]}])
    got = {}
    for suffix in ("parquet", "jsonl"):
        status, out, err = run(
            capsys,
            "evaluate",
            str(root),
            "--protocol",
            protocol,
            "--predictions",
            f"m={tmp_path / f'p.{suffix}'}",
            "--format",
            "json",
        )
        assert status == 0, err
        got[suffix] = json.loads(out)["rows"][0]
    assert got["parquet"] == got["jsonl"]
    assert got["parquet"]["p@5"] == pytest.approx(p5)  # pke: 1 / min(5, 2); kpeval: 1 / 5; meng: "" invalid, 1 / 1


@pytest.mark.parametrize("protocol", ["kweval", "meng"])
def test_lone_surrogates_in_the_meng_layout_are_replaced_and_ids_still_pair(tmp_path, capsys, protocol):
    data = tmp_path / "set.jsonl"
    data.write_text(
        '{"id": "a\\udc80", "title": "Topic models", "abstract": "We study topic models \\udcff.", '
        '"keywords": "topic models;x\\ud800"}\n{"id": "b", "title": "T", "abstract": "graph ranking", '
        '"keywords": ["graph ranking"]}\n',
        encoding="utf-8",
    )
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"id": "a\\udc80", "keyphrases": ["topic models"]}\n', encoding="utf-8")
    status, out, err = run(
        capsys, "evaluate", str(data), "--protocol", protocol, "--predictions", f"m={pred}", "--format", "json"
    )
    assert status == 0 and "Traceback" not in err, err
    assert "3 string(s) with lone surrogates (not text); replaced by U+FFFD" in err and "not in" not in err
    row = json.loads(out)["rows"][0]
    assert row["r@5"] == pytest.approx(0.25)  # a: 1 of 2 gold found; b: no predictions, 0 and counted
