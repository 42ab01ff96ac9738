"""`kweval gap` (issue 27): a metric's gap between two protocols decomposed into their conventions, and the
protocols behind a reported number.

- The endpoints are `kweval evaluate --protocol P`'s numbers (the kweval preset's: `kweval evaluate`'s), for every
  pair of presets and every key metric both report; the contributions sum to the gap (1e-12), swapping the
  protocols negates them exactly, a convention that changes nothing contributes 0.
- Shapley values equal their plain definition (the mean marginal contribution over every order of the players).
- The reported-number search finds pke's conventions behind pke's own F1@10.
- Bad input: one `kweval:` line, exit 2.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

from kweval.cli.dispatch import main
from kweval.keyphrase.conventions import PRESETS, preset_settings
from kweval.lattice.engine import Lattice
from kweval.lattice.explain import KEY_METRICS, Collection, explain_gap, explain_reported
from kweval.lattice.gap import protocol_gap
from kweval.lattice.shapley import shapley, subset_values
from tests.helpers import SEMEVAL

DATA = Path(__file__).parent / "data"
EDGE = DATA / "keyphrase_edge"
EDGE_PREDICTIONS = DATA / "keyphrase_edge_predictions.jsonl"


def test_shapley_equals_the_mean_marginal_contribution_over_every_order():
    rng = random.Random(3)
    for n in range(1, 6):
        table = [rng.random() for _ in range(1 << n)]
        fast = shapley(table, n)
        plain = [0.0] * n
        orders = list(itertools.permutations(range(n)))
        for order in orders:
            mask = 0
            for player in order:
                plain[player] += (table[mask | 1 << player] - table[mask]) / len(orders)
                mask |= 1 << player
        assert fast == pytest.approx(plain, abs=1e-12)
        assert math.fsum(fast) == pytest.approx(table[-1] - table[0], abs=1e-12)
    assert subset_values(2, lambda moved: float(sum(moved) + len(moved))) == [0.0, 1.0, 2.0, 3.0]


def _cli(*argv: str, capsys) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _evaluate_rows(data: Path, predictions: dict[str, Path], protocol: str, k: int, capsys) -> dict[str, dict]:
    """{model: the ALL row (kweval) or the row (a preset)} of `kweval evaluate --format json`."""
    argv = ["evaluate", str(data), "--k", str(k), "--format", "json", "--quiet"]
    argv += ["--protocol", protocol] if protocol != "kweval" else []
    for name, path in predictions.items():
        argv += ["--predictions", f"{name}={path}"]
    status, out, _ = _cli(*argv, capsys=capsys)
    assert status == 0
    return {row["model"]: row for row in json.loads(out)["rows"] if row["movie"] in ("ALL",) or protocol != "kweval"}


_PIPELINE_NAMES = {"r@M_present": "recall_present", "r@M_absent": "recall_absent"}


def _reported_by_evaluate(data: Path, predictions: dict[str, Path], capsys) -> dict[str, dict[str, dict]]:
    """{preset: {model: {metric: value}}} of the key metrics each preset's `kweval evaluate` prints (--k 5 and 10)."""
    out: dict[str, dict[str, dict]] = {}
    for preset in PRESETS:
        for k in (5, 10):
            for model, row in _evaluate_rows(data, predictions, preset, k, capsys).items():
                values = out.setdefault(preset, {}).setdefault(model, {})
                for metric in KEY_METRICS:
                    column = _PIPELINE_NAMES.get(metric, metric)
                    if column in row and row[column] is not None:
                        values[metric] = row[column]
    return out


def _check_every_pair(collection: Collection, printed: dict[str, dict[str, dict]]) -> int:
    """Every ordered pair of presets, every key metric both print: endpoints, sum, swap.  Returns the gaps checked."""
    checked = 0
    for model in collection.predictions:
        for start, end in itertools.combinations(PRESETS, 2):
            for metric in KEY_METRICS:
                if metric not in printed[start][model] or metric not in printed[end][model]:
                    continue
                gap = explain_gap(collection, model, metric, start, end)
                back = explain_gap(collection, model, metric, end, start)
                assert gap["from"]["value"] == pytest.approx(printed[start][model][metric], abs=1e-12)
                assert gap["to"]["value"] == pytest.approx(printed[end][model][metric], abs=1e-12)
                shares = [f["contribution"] for f in gap["factors"]]
                assert abs(math.fsum(shares) - gap["gap"]) <= 1e-12, (start, end, metric)
                assert [f["contribution"] for f in back["factors"]] == [-c for c in shares]
                assert back["gap"] == -gap["gap"]
                checked += 1
    return checked


def _collection(data: Path, predictions: dict[str, Path]) -> Collection:
    from kweval.data.keyphrase import read_documents
    from kweval.data.predictions import prediction_lists
    from kweval.lattice.explain import collection_of_documents

    documents = read_documents(data, [])
    return collection_of_documents(documents, {m: prediction_lists(p, m, []) for m, p in predictions.items()})


def test_every_preset_pair_on_the_edge_collection(capsys):
    predictions = {"edge": EDGE_PREDICTIONS}
    printed = _reported_by_evaluate(EDGE, predictions, capsys)
    assert _check_every_pair(_collection(EDGE, predictions), printed) >= 20


def test_a_convention_that_changes_nothing_contributes_zero():
    gold = {"a": ["topic models", "graph"], "b": ["neural networks"]}
    predictions = {"a": ["topic model", "graph", "x"], "b": ["neural network"]}
    lattice = Lattice(gold, predictions, {"a": "topic models and a graph", "b": "neural networks"})
    start = preset_settings("kpeval")
    end = {**preset_settings("meng"), "split": "as_given"}
    gap = protocol_gap(lattice, "f1@5", start, end, ("kpeval", "meng*"), "m")
    shares = {f.factor: f.contribution for f in gap.factors}
    assert shares["split"] == 0.0 and shares["empty_list"] == 0.0  # no ';', no empty list: 0 by the data
    assert shares["present_rule"] == 0.0  # cannot move F1@5
    assert gap.gap != 0 and math.fsum(shares.values()) == pytest.approx(gap.gap, abs=1e-12)
    assert "change nothing here" in gap.sentence


def _json(*argv: str, capsys) -> dict:
    status, out, err = _cli(*argv, "--format", "json", capsys=capsys)
    assert status == 0, err
    return json.loads(out)


def test_cli_gap_json_keys_and_text(tmp_path, capsys):
    base = ["gap", str(EDGE), "--predictions", f"edge={EDGE_PREDICTIONS}", "--from", "pke", "--to", "kpeval"]
    result = _json(*base, capsys=capsys)
    assert {"model", "metric", "from", "to", "gap", "factors", "documents", "sentence"} <= set(result)
    assert set(result["from"]) == {"protocol", "value"} and result["from"]["protocol"] == "pke"
    assert all(set(f) == {"factor", "from", "to", "contribution"} for f in result["factors"])
    assert result["documents"] and {"id", "from", "to", "change", "convention"} <= set(result["documents"][0])
    status, out, _ = _cli(*base, "--metric", "f1@M", capsys=capsys)
    assert status == 0 and out.startswith("kpeval's F1@M") and "what the settings mean" in out
    out_file = tmp_path / "gap.md"
    assert _cli(*base, "--format", "markdown", "--out", str(out_file), capsys=capsys)[0] == 0
    assert out_file.read_text().startswith("### F1@5 of edge: pke → kpeval")
    mixed = _json(*base[:-4], "--from", "kpeval,cutoff=pke", "--to", "kpeval", capsys=capsys)
    assert mixed["from"]["protocol"] == "kpeval,cutoff=flexible" and [f["factor"] for f in mixed["factors"]] == [
        "cutoff"
    ]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--from", "pkee", "--to", "meng"], "unknown preset 'pkee'"),
        (["--from", "pke,colour=red", "--to", "meng"], "unknown convention 'colour'"),
        (["--from", "pke,cutoff=sideways", "--to", "meng"], "unknown setting 'sideways'"),
        (["--from", "pke", "--to", "meng", "--model", "nobody"], "unknown model 'nobody'"),
        (["--from", "pke", "--to", "meng", "--metric", "ndcg@5"], "no protocol metric"),
        (["--from", "pke", "--to", "meng", "--metric", "f1@5_present"], "not reported under pke"),
        (["--reported", "f1@10"], "expected METRIC=VALUE"),
        (["--reported", "f1@10=high"], "not a number"),
        (["--reported", "f1@10=250"], "no metric value"),
        (["--from", "pke"], "give --from P and --to Q"),
        (["--from", "pke", "--to", "meng", "--reported", "f1@5=0.1"], "ask one question"),
        (["--from", "pke", "--to", "meng", "--k", "7"], "--k applies to --reported"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(extra, said, capsys):
    status, out, err = _cli("gap", str(EDGE), "--predictions", f"edge={EDGE_PREDICTIONS}", *extra, capsys=capsys)
    lines = [line for line in err.splitlines() if line.startswith("kweval:")]
    assert status == 2 and said in err and "Traceback" not in err and out == ""
    assert len([line for line in lines if said in line]) == 1


def test_movie_level_data_says_the_explainer_needs_per_document_ground_truth(capsys):
    status, _, err = _cli("gap", "--from", "pke", "--to", "meng", capsys=capsys)  # the embedded demo
    assert status == 2 and "needs per-document ground truth" in err and err.count("\n") == 1


def test_reported_search_on_the_edge_collection_finds_the_presets(capsys):
    collection = _collection(EDGE, {"edge": EDGE_PREDICTIONS})
    lattice = collection.lattice("edge")
    from kweval.lattice.engine import parse_metric

    for preset in ("pke", "kpeval", "meng"):
        value = lattice.value(preset_settings(preset), parse_metric("f1@M"))
        result = explain_reported(collection, "edge", f"f1@M={value:.4f}")
        assert any(preset in g["presets"] for g in result["groups"]), preset
        assert all(abs(m["value"] - value) <= 5e-5 + 1e-12 for m in result["matches"])
    none = explain_reported(collection, "edge", "f1@M=0.999999")
    assert none["matches"] == [] and none["closest"]
    status, out, _ = _cli(
        "gap", str(EDGE), "--predictions", f"edge={EDGE_PREDICTIONS}", "--reported", "f1@M=0.999999", capsys=capsys
    )
    assert status == 0 and out.startswith("No combination of the presets' conventions gives F1@M = 0.999999")


@pytest.fixture(scope="module")
def semeval_predictions(semeval_extracted):
    return {extractor: semeval_extracted(extractor) for extractor in ("firstphrases", "yake")}  # `kweval extract`'s


@pytest.mark.keyphrase
@pytest.mark.slow  # YAKE's predictions (`semeval_extracted`) under every preset at two cut-offs
def test_every_preset_pair_on_semeval2017_with_yake_and_firstphrases(semeval_predictions, capsys):
    printed = _reported_by_evaluate(SEMEVAL, semeval_predictions, capsys)
    assert _check_every_pair(_collection(SEMEVAL, semeval_predictions), printed) >= 2 * 20


@pytest.mark.keyphrase
@pytest.mark.slow
def test_reported_search_finds_pke_behind_pkes_own_f1_at_10(semeval_predictions, capsys):
    row = _evaluate_rows(SEMEVAL, {"yake": semeval_predictions["yake"]}, "pke", 10, capsys)["yake"]
    reported = f"f1@10={row['f1@10']:.4f}"  # pke's own number for YAKE (the preset equals pke's code)
    status, out, err = _cli(
        "gap", str(SEMEVAL), "--predictions", f"yake={semeval_predictions['yake']}", "--reported", reported,
        "--format", "json", capsys=capsys,
    )  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    pke = preset_settings("pke")
    assert any(m["presets"] == ["pke"] for m in result["matches"])
    assert any(all(pke[n] == v for n, v in m["conventions"].items()) for m in result["matches"])


def test_card_and_preset_report_say_what_the_other_presets_give(tmp_path, capsys):
    """`kweval evaluate --protocol P`'s card and `kweval report --protocol P`'s page: one line per key metric with
    every other preset's value and the gap, the values those presets' own runs print."""
    predictions = {"edge": EDGE_PREDICTIONS}
    printed = _reported_by_evaluate(EDGE, predictions, capsys)
    status, out, _ = _cli(
        "evaluate", str(EDGE), "--protocol", "meng", "--predictions", f"edge={EDGE_PREDICTIONS}", "--format", "json",
        "--quiet", capsys=capsys,
    )  # fmt: skip
    card = json.loads(out)["meta"]["protocol"]
    lines = card["other_presets"]
    assert status == 0 and "kweval gap" in card["other_presets_note"]
    assert [line.split(" ")[0] for line in lines] == ["F1@5", "F1@10", "F1@M", "F1@O"] + ["F1@5", "F1@10"] + [
        "F1@M",
        "F1@O",
        "R@50",
    ]
    f1_5 = lines[0]
    meng, kpeval = printed["meng"]["edge"]["f1@5"], printed["kpeval"]["edge"]["f1@5"]
    assert f1_5.startswith(f"F1@5 {meng:.4f} under meng; kweval (stem) ")
    assert f"kpeval {kpeval:.4f} ({kpeval - meng:+.4f})" in f1_5
    page = tmp_path / "report.html"
    second = tmp_path / "second.jsonl"
    second.write_text(EDGE_PREDICTIONS.read_text().replace("TextRank", "PageRank"))
    args = ["report", str(EDGE), "--protocol", "meng", "--predictions", f"edge={EDGE_PREDICTIONS}"]
    args += ["--predictions", f"second={second}", "--out", str(page), "--resamples", "50"]
    assert main(args) == 0
    html = page.read_text(encoding="utf-8")
    assert "The same predictions under the other presets" in html and f"edge: F1@5 {meng:.4f} under meng" in html


def _documented_gap_runs() -> list[tuple[list[str], str]]:
    """(arguments, output) of every `kweval gap` example in docs/protocols.md with its output beside it."""
    import re
    import shlex

    from tests.helpers import REPO

    text = (REPO / "docs" / "protocols.md").read_text(encoding="utf-8")
    runs = []
    for command, output in re.findall(
        r"```bash\n(?:[^`\n][^\n]*\n)*?(kweval gap [^\n]+)\n```\n\n```text\n(.*?)```", text, re.S
    ):
        runs.append((shlex.split(command)[1:], output))
    for command, output in re.findall(r"```text\n\$ (kweval gap [^\n]+)\n(.*?)```", text, re.S):
        runs.append((shlex.split(command)[1:], output))
    return runs


def test_the_documented_examples_are_found():
    runs = _documented_gap_runs()
    assert len(runs) >= 4 and any("--reported" in args for args, _ in runs)


@pytest.mark.keyphrase
@pytest.mark.slow
def test_the_documented_examples_are_what_kweval_gap_prints(semeval_predictions, capsys):
    """docs/protocols.md's worked example on SemEval2017 with YAKE: each command's output as the CLI prints it."""
    for args, documented in _documented_gap_runs():
        argv = [str(SEMEVAL) if a == "SemEval2017/" else a for a in args]
        argv = [f"yake={semeval_predictions['yake']}" if a == "yake=yake.jsonl" else a for a in argv]
        status, out, err = _cli(*argv, capsys=capsys)
        assert status == 0, err
        assert out == documented, args


def test_a_tidy_folder_with_per_document_ground_truth_names_its_collection(tmp_path, capsys):
    folder = tmp_path / "synth"
    assert main(["synth", str(folder), "--movies", "2", "--reviews-per-movie", "30", "--gt", "per-document"]) == 0
    capsys.readouterr()
    base = ["gap", str(folder), "--model", "base", "--from", "pke", "--to", "kpeval"]
    status, _, err = _cli(*base, capsys=capsys)
    assert status == 2 and "--movie: choose one collection of movie000, movie001" in err
    result = _json(*base, "--movie", "movie001", capsys=capsys)
    assert result["collection"] == "movie001" and result["n_documents"] == 30
    assert abs(math.fsum(f["contribution"] for f in result["factors"]) - result["gap"]) <= 1e-12
