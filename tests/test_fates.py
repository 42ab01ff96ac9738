"""Every prediction's and gold phrase's fate under a keyphrase preset (`kweval.keyphrase.fates`) adds up to the
preset's own per-document numbers: the explorer's marks and the Failures page's categories under a preset are the
decisions behind `kweval evaluate --protocol P --per-review`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.data.keyphrase import split_lines
from kweval.keyphrase.conventions import preset_settings
from kweval.keyphrase.dataset_protocol import collection_lists, protocol_scores
from kweval.keyphrase.fates import (
    REFERENCE,
    added_by_prefix,
    added_in_one_run,
    counted_by_prefix,
    counted_in_one_run,
    document_fates,
    gold_list,
    in_one_run,
    preset_failure_table,
    scored_run,
    taken_in_one_run,
)
from kweval.keyphrase.protocols import PROTOCOLS, make_protocol, prepare_document
from tests.helpers import SEMEVAL
from tests.test_page_headline import _collection

DATA = Path(__file__).parent / "data"
PRESETS = ["pke", "kpeval", "meng"]
HITS = ("hit", "hit_beyond_k")


def _vectors() -> list[dict]:
    """The hostile one-document inputs the tools' own code was run on (tests/data/protocols_vectors.json)."""
    return json.loads((DATA / "protocols_vectors.json").read_text())["vectors"]


def _check(preset: str, gold: list[str], predictions: list[str], text: str | None, k: int) -> None:
    """The fates of one document agree with the scorer's lists: the kept predictions are its scored list in order,
    the hits at k give its P@k, the counted gold its |G|, every hit finds one gold phrase and the present rule's
    split of the missed ones is its present count."""
    protocol = PROTOCOLS[preset]
    lists = prepare_document(protocol, gold, predictions, text)
    preds, golds = document_fates(protocol, gold_list(protocol, gold, text), predictions, k)
    assert [f.rank for f in preds] == list(range(len(predictions)))
    kept = [f for f in preds if f.position >= 0]
    quirk = preset == "kpeval" and (not predictions or not gold)  # KPEval reads [] as one empty phrase
    split = preset == "kpeval" and any(";" in p for p in [*predictions, *gold])  # one line, several phrases
    if not quirk and not split:
        assert [f.position for f in kept] == list(range(len(lists.matched)))
        assert [f.category in HITS for f in kept] == lists.matched
        assert len(golds) == lists.n_gold
        assert sum(f.category in ("found", "found_beyond_k") for f in golds) == sum(lists.matched)
        assert sum(f.category == "hit" for f in kept) == sum(lists.matched[:k])  # P@k's numerator
    assert all(f.category in ("invalid", "duplicate") for f in preds if f.position < 0)
    for f in golds:
        if f.category in ("found", "found_beyond_k"):
            finder = preds[f.gt_rank]
            assert finder.category in HITS and finder.gt_rank == f.rank
            assert (f.category == "found") == (finder.position < k) == (finder.category == "hit")
    if lists.present_matched is not None and not quirk and not split:
        assert sum(f.present is True for f in golds) == lists.n_present_gold
        missed = [f for f in golds if f.category.startswith("missed")]
        assert all(f.category == ("missed_present" if f.present else "missed_absent") for f in missed)
    if protocol.present_rule.startswith("none"):
        assert all(f.category in ("found", "found_beyond_k", "missed") for f in golds)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("vector", _vectors(), ids=lambda v: v["id"])
def test_fates_of_the_hostile_vectors_are_the_scorers_decisions(preset, vector):
    gold = split_lines(vector["key_file"])
    for k in (1, 2, 5):
        _check(preset, gold, list(vector["predictions"]), vector.get("text"), k)


def test_a_repeat_and_a_duplicate_gold_phrase_under_pke_and_meng():
    gold = ["neural networks", "neural network", "images"]
    preds = ["neural network", "Neural Networks", "images", "", "unk model", "neural network"]
    pke, pke_gold = document_fates(PROTOCOLS["pke"], gold_list(PROTOCOLS["pke"], gold, None), preds, 2)
    # pke keeps every prediction (no filter); a repeat stays in |P| but matches once; both gold copies count
    assert [(f.position, f.category) for f in pke] == [
        (0, "hit"),
        (1, "duplicate"),
        (2, "hit_beyond_k"),
        (3, "off_reference"),
        (4, "off_reference"),
        (5, "duplicate"),
    ]
    assert [f.category for f in pke_gold] == ["found", "missed", "found_beyond_k"]
    assert pke[0].other == "neural networks" and pke_gold[0].other == "neural network"
    assert "repeats gold ‘neural networks’" in pke_gold[1].detail
    meng, meng_gold = document_fates(
        PROTOCOLS["meng"], gold_list(PROTOCOLS["meng"], gold, "Neural networks."), preds, 2
    )
    # OpenNMT-kpg drops an empty prediction and one with the word 'unk' (invalid), and repeats (duplicate)
    assert [(f.position, f.category) for f in meng] == [
        (0, "hit"),
        (-1, "duplicate"),
        (1, "hit"),
        (-1, "invalid"),
        (-1, "invalid"),
        (-1, "duplicate"),
    ]
    assert [(f.category, f.present) for f in meng_gold] == [
        ("found", True),
        ("missed_present", True),
        ("found", False),
    ]


# hostile (gold, predictions, text) lists: repeats on both sides (as written, by stems, by '_' joins), invalid and
# empty phrases, empty lists, ';' inside a phrase, a repeat of an invalid prediction, a gold phrase matched twice
HOSTILE = [
    ([], [], None),
    ([], ["alpha", "alpha"], "alpha beta"),
    (["alpha"], [], "alpha"),
    (["", " ", "alpha", "alpha", "Alpha", "alphas"], ["", "alpha", "alpha", "ALPHA", "alphas", " "], "Alpha!"),
    (
        ["neural networks", "neural network", "images"],
        ["neural network", "Neural Networks", "images", "", "unk model", "neural network"],
        "Neural networks.",
    ),
    (["a b", "a_b", "a-b", "b; a", "a;b"], ["a_b", "a b", "a;b", "b", "a", ";", "a b c", "a_b"], "a b; a_b"),
    (["x"], ["<unk>", "<unk>", "unk", "x", "x y", "y x", "x"], "x y"),
    (
        ["deep learning", "learning", "deep"],
        ["deep learning model", "learning", "deep", "deep learning", "model"],
        "deep learning model",
    ),
]


def _hostile_cases() -> list[tuple[list[str], list[str], str | None]]:
    return [*HOSTILE, *((split_lines(v["key_file"]), list(v["predictions"]), v.get("text")) for v in _vectors())]


@pytest.mark.parametrize("preset", sorted(PROTOCOLS))
def test_the_one_run_reading_is_the_per_prefix_definition(preset):
    """The speed trick (`ONE_RUN`: one scorer run, each entry's source and the gold phrase it takes) reads what the
    scorer run on every prefix adds and what it on each pair finds, so every fate is the definition's, on hostile
    lists."""
    protocol = PROTOCOLS[preset]
    for gold, predictions, text in _hostile_cases():
        assert added_in_one_run(protocol, gold, predictions) == added_by_prefix(protocol, gold, predictions)
        assert counted_in_one_run(protocol, gold) == counted_by_prefix(protocol, gold)
        if not any(";" in phrase for phrase in [*gold, *predictions]):  # the pair by pair reading only for KPEval's ';'
            assert taken_in_one_run(protocol, gold, predictions) is not None
        read = in_one_run(protocol, gold, predictions)  # one run serves added, taken and the alone matches it shows
        assert read.added == added_by_prefix(protocol, gold, predictions)
        assert read.taken == taken_in_one_run(protocol, gold, predictions)
        for phrase, added, alone in zip(predictions, read.added, read.matches_alone):
            if alone is not None:  # the scorer on the phrase alone (`_alone`, the definition)
                assert alone == any(prepare_document(protocol, gold, [phrase], None).matched)
            else:  # read off runs for every phrase kept unmatched as one
                assert not added or any(added) or ";" in phrase and protocol.split == "semicolon"
        for k in (1, 3):
            fast = document_fates(protocol, gold_list(protocol, gold, text), predictions, k)
            slow = document_fates(protocol, gold_list(protocol, gold, text, REFERENCE), predictions, k, REFERENCE)
            assert fast == slow


# (preset, gold, predictions, the run's |G| sources, entry sources, |G| entries taken, no-repeat flags; then per
# prediction what it adds, the gold rank it takes (None: pair by pair), whether it matches alone (None: not read off
# runs: a hit, a dropped phrase, one of several pieces))
SHARED_READINGS = [
    # a ';' under KPEval: one phrase is two entries, so the gold each takes is read pair by pair
    ("kpeval", ["a", "b"], ["c", "a; b"], [0, 1], [0, 1, 1], [-1, 0, 1], [True] * 3, [[False], [True, True]], None,
     [False, None]),
    # KPEval's empty gold list is one empty gold phrase that no prefix holds (source -1), matching nothing here
    ("kpeval", [], ["a", "b"], [-1], [0, 1], [-1, -1], [True, True], [[False], [False]], [-1, -1], [False, False]),
    # ... and an empty prediction list one empty prediction that takes it, which no fate stands for
    ("kpeval", [], [], [-1], [-1], [0], [True], [], [], []),
    # a repeat OpenNMT-kpg drops adds nothing; 'c', after the first match, is read off a second run
    ("meng", ["b"], ["a", "a", "b", "c"], [0], [0, 2, 3], [-1, 0, -1], [True] * 3, [[False], [], [True], [False]],
     [-1, -1, 0, -1], [False, None, None, False]),
    # pke keeps a repeat in |P| (no-repeat False) and matches it nowhere; alone it matches (a second run of 'x', 'a')
    ("pke", ["a"], ["x", "a", "x", "a"], [0], [0, 1, 2, 3], [-1, 0, -1, -1], [True, True, False, False],
     [[False], [True], [False], [False]], [-1, 0, -1, -1], [False, None, False, True]),
]  # fmt: skip


@pytest.mark.parametrize("case", SHARED_READINGS, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_one_scorer_run_serves_added_taken_and_alone(case):
    """One run of the scorer per document × model (`scored_run`) holds what the three readings ask: the entries each
    prediction adds, the gold phrase each match takes, and the alone matches it proves (the rest off runs on the
    unmatched ones); the fates are the definitions' on the same lists."""
    preset, gold, predictions, gold_at, sources, taken, first, added, takes, alone = case
    protocol = PROTOCOLS[preset]
    run = scored_run(protocol, gold, predictions)
    assert (run.gold, run.sources, run.taken, run.first) == (gold_at, sources, taken, first)
    read = in_one_run(protocol, gold, predictions)
    assert (read.added, read.taken, read.matches_alone) == (added, takes, alone)
    assert read.added == added_by_prefix(protocol, gold, predictions)
    fast = document_fates(protocol, gold_list(protocol, gold, None), predictions, 2)
    assert fast == document_fates(protocol, gold_list(protocol, gold, None, REFERENCE), predictions, 2, REFERENCE)
    if preset == "pke":
        assert [f.category for f in fast[0]] == ["off_reference", "hit", "off_reference", "duplicate"]


def test_a_kept_repeat_is_read_alone_off_its_own_run():
    """A repeat the scorer keeps (pke's counting) takes no gold phrase in the list's run even before any match, yet
    alone it may match: under pke's conventions with KPEval's '_' repeats, 'a b' repeats 'a_b' (which matches
    nothing) and alone matches 'a b', a duplicate, not off-reference."""
    protocol = make_protocol({**preset_settings("pke"), "dedup_key": "joined"})
    read = in_one_run(protocol, ["a b"], ["a_b", "a b"])
    assert (read.added, read.matches_alone) == ([[False], [False]], [False, True])
    fates = document_fates(protocol, gold_list(protocol, ["a b"], None), ["a_b", "a b"], 2)[0]
    assert [f.category for f in fates] == ["off_reference", "duplicate"]


@pytest.mark.parametrize("preset", PRESETS)
def test_the_table_of_a_collection_adds_up_to_its_per_document_scores(tmp_path, preset):
    dataset = load_dataset(str(_collection(tmp_path)))
    _adds_up(dataset, preset, 3)


def _adds_up(dataset, preset: str, k: int) -> None:
    """The table is the definition's (the scorer on every prefix: `REFERENCE`); per document × model, the hits within
    k are the P@k numerator of `protocol_scores` (the CLI's values), the kept predictions its n_predictions, the gold
    rows its n_gold, found = hits."""
    table = preset_failure_table(dataset, preset, k)
    pd.testing.assert_frame_equal(table, preset_failure_table(dataset, preset, k, reading=REFERENCE))  # the trick
    scores = protocol_scores(dataset, preset, k).set_index(["movie", "review_id", "model"])
    key = ["movie", "review_id", "model"]

    def count(side: str, categories) -> pd.Series:
        rows = table[(table["side"] == side) & table["category"].isin(list(categories))]
        return rows.groupby(key).size().reindex(scores.index, fill_value=0)

    kept = table[(table["side"] == "prediction") & (table["position"] >= 0)].groupby(key).size()
    kept = kept.reindex(scores.index, fill_value=0)
    regular = scores["n_predictions"] == kept
    if preset != "kpeval":  # KPEval alone reads an empty list as one empty phrase, which no fate stands for
        assert regular.all()
    assert regular.sum() >= len(regular) - 2
    hits, found = count("prediction", ["hit"]), count("gt", ["found"])
    denominator = kept.clip(upper=k) if PROTOCOLS[preset].cutoff == "flexible" else pd.Series(k, index=kept.index)
    p_at_k = (hits / denominator.where(denominator > 0)).fillna(0.0)
    pd.testing.assert_series_equal(p_at_k[regular], scores[f"p@{k}"][regular], check_names=False, atol=1e-12)
    assert (hits == found).all()
    assert (count("prediction", HITS) == count("gt", ["found", "found_beyond_k"])).all()
    n_gold = table[table["side"] == "gt"].groupby(key).size().reindex(scores.index, fill_value=0)
    gold = {movie: collection_lists(dataset, movie)[0] for movie in scores.index.unique("movie")}
    with_gold = pd.Series([bool(gold[movie][doc]) for movie, doc, _ in scores.index], index=scores.index)
    assert (n_gold[with_gold] == scores["n_gold"][with_gold]).all()  # KPEval reads [] as one empty gold phrase
    assert (n_gold[~with_gold] == 0).all()
    assert not math.isnan(float(scores[f"p@{k}"].sum()))


@pytest.fixture(scope="module")
def semeval_runs(semeval_extracted):
    """(the `kweval extract` files by model, SemEval2017 loaded with them): read by each preset's test, loaded once."""
    files = {name: semeval_extracted(name) for name in ("yake", "firstphrases")}  # `kweval extract`, once a run
    return files, load_dataset(str(SEMEVAL), predictions={m: str(p) for m, p in files.items()})


@pytest.mark.keyphrase
@pytest.mark.parametrize("preset", PRESETS)
def test_semeval_fates_are_the_cli_per_document_numbers(tmp_path, capsys, semeval_runs, preset):
    from kweval.cli import main

    files, dataset = semeval_runs
    _adds_up(dataset, preset, 5)
    per_review = tmp_path / "per_review.csv"
    argv = ["evaluate", str(SEMEVAL), "--protocol", preset, "--per-review", str(per_review), "--out", "-"]
    assert main(argv + [a for m, p in files.items() for a in ("--predictions", f"{m}={p}")]) == 0
    capsys.readouterr()
    cli = pd.read_csv(per_review, dtype={"review_id": str}).set_index(["review_id", "model"])
    ours = protocol_scores(dataset, preset, 5).set_index(["review_id", "model"]).reindex(cli.index)
    for column in ("p@5", "r@5", "f1@5", "f1@M", "f1@O", "n_gold", "n_predictions"):
        pd.testing.assert_series_equal(ours[column], cli[column], check_names=False, atol=1e-6, check_dtype=False)


def test_kweval_failures_protocol_writes_the_presets_decisions(tmp_path, capsys):
    """`kweval failures DATA --protocol P` (the Failures page under P, from the command line); a usage error is one
    `kweval:` line, exit 2."""
    from kweval.cli import main
    from kweval.explain.failures import COLUMNS, failure_summary

    folder = _collection(tmp_path)
    out = tmp_path / "pke.csv"
    assert main(["failures", str(folder), "--protocol", "pke", "--k", "3", "--out", str(out)]) == 0
    expected = preset_failure_table(load_dataset(str(folder)), "pke", 3)[COLUMNS]
    written = pd.read_csv(out, dtype={"review_id": str}, keep_default_na=False)
    assert written["category"].tolist() == expected["category"].tolist()
    assert written["keyword"].tolist() == expected["keyword"].tolist()
    summary = tmp_path / "summary.csv"
    assert main(["failures", str(folder), "--protocol", "meng", "--summary", "--out", str(summary)]) == 0
    counts = pd.read_csv(summary)
    core = failure_summary(preset_failure_table(load_dataset(str(folder)), "meng", 5))
    assert counts["count"].sum() == core["count"].sum() > 0
    capsys.readouterr()
    assert main(["failures", "--protocol", "pke", "--out", str(tmp_path / "demo.csv")]) == 2  # the movie-level demo
    assert main(["failures", str(folder), "--protocol", "pke", "--match", "approx", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("kweval: ") for line in err), err
    assert "needs per-document ground truth" in err[0] and "--match and --semantic do not apply" in err[1]
