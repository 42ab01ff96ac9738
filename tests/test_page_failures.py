"""The Failures page and the explorer's failure views (AppTest): counts from the core, segment and slice links that
open the explorer filtered, unmatched keywords with their category, the whole GT list with marks.  Each page opens as a
link straight into it (`tests.apptest.run`'s `direct`), as the links it draws open."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from dashboard.escape import esc
from dashboard.svg_charts import CHART_CLASS
from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain.failures import failure_summary, failure_table, reviews_with
from kweval.stats.slices import worst_slices
from tests.apptest import DATA, DATASETS, XSS, run, texts
from tests.helpers import DNLP

MATCHING = re.compile(r"(\d+) (?:review|document)\(s\) match")
# a Failures chart's segment: its link, model, category and count (dashboard/svg_charts.py `_segment`)
SEGMENT = re.compile(
    r'<a href="([^"]+)"><g class="kw-bar kw-segment" data-model="([^"]*)" data-category="(\w+)" data-count="(\d+)"'
)
LINK = re.compile(r"\[([^\]]*?) \(([\d,]+) (?:keyword|GT keyword)s?\)\]\((\./explorer\?[^)]+)\)")


def _params(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def _links(at) -> list[tuple[str, int, dict[str, str]]]:
    return [(m[1], int(m[2].replace(",", "")), _params(m[3])) for m in LINK.finditer(texts(at))]


@pytest.mark.parametrize("data", DATA)
def test_failures_page_counts_are_the_cores(monkeypatch, cores, data):
    ds = cores[data]
    ev = evaluate(ds, EvalOptions(k=5))
    counts = failure_summary(failure_table(ds, ev), by=["model"]).set_index(["model", "side", "category"])["count"]
    at = run(monkeypatch, DATASETS[data], {"movie": "ALL"}, "pages/failures.py", direct=True)
    assert at.title[0].value == "Why did my model fail?"
    svgs = [m.value for m in at.markdown if CHART_CLASS in m.value]
    assert len(svgs) == 2  # predicted keywords, GT keywords
    shown = texts(at)
    for model in ev.models:
        shown_name = model.replace("_", "\\_")  # Markdown-escaped
        assert f"**{shown_name}**: " in shown and "% of its keywords are hits" in shown
    links = _links(at)
    assert links and {p["category"] for _, _, p in links} >= {"hit", "off_reference"}
    for _, n, p in links:
        side = "gt" if p["category"] in ("found", "found_beyond_k", "missed_present", "missed_absent") else "prediction"
        assert n == counts[(p["model"], side, p["category"])], p
        assert p["hl"] == p["model"] and p["movie"] == "ALL"
    segments = [(side, m) for side, svg in zip(("prediction", "gt"), svgs) for m in SEGMENT.finditer(svg)]
    assert len(segments) == len(links)  # a segment in the chart for each link below it, and the same link
    for side, m in segments:
        href, model, category, n = html.unescape(m[1]), html.unescape(m[2]), m[3], int(m[4])
        query = _params(href)
        assert n == counts[(model, side, category)], href
        assert (query["model"], query["category"], query["hl"], query["movie"]) == (model, category, model, "ALL")


def test_a_segment_link_opens_the_explorer_filtered(monkeypatch, demo_dataset):
    ev = evaluate(demo_dataset, EvalOptions(k=5))
    table = failure_table(demo_dataset, ev)
    at = run(monkeypatch, None, {"movie": "ALL"}, "pages/failures.py", direct=True)
    _, _, params = next(link for link in _links(at) if link[2]["category"] == "near_lexical")
    want = reviews_with(table, "near_lexical", params["model"])
    explorer = run(monkeypatch, None, params, "pages/explorer.py", direct=True)
    shown = texts(explorer)
    assert int(MATCHING.search(shown)[1]) == len(want) > 0
    assert "Filtered:" in shown and "near \\(another match mode\\)" in shown
    # each shown card names a filtered review, and its unmatched near keyword says which GT keyword is near
    for review in want["review_id"].head(3):
        assert f"Review {review}" in shown
    assert 'class="kw-category kw-near_lexical"' in shown
    near = table[(table["category"] == "near_lexical") & (table["model"] == params["model"])].iloc[0]
    assert str(near["detail"]).split("‘")[0] in shown  # the mode that would match, e.g. "word: GT ‘…’"
    explorer.button(key="clear_failure_filter").click().run()
    assert "category" not in explorer.query_params
    assert int(MATCHING.search(texts(explorer))[1]) == len(ev.scores[["movie", "review_id"]].drop_duplicates())


def test_the_explorer_refuses_a_bad_category(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL", "category": XSS}, "pages/explorer.py", direct=True)
    out = texts(at)
    assert "unknown category" in out and "<img" not in out
    assert int(MATCHING.search(out)[1]) == 180  # not filtered


def test_slices_link_to_the_explorer_on_the_slice(monkeypatch, demo_dataset):
    ev = evaluate(demo_dataset, EvalOptions(k=5))
    at = run(monkeypatch, None, {"movie": "ALL", "model": "yake"}, "pages/failures.py", direct=True)
    frame = next(d.value for d in at.dataframe if "slice" in d.value.columns)
    assert len(frame) >= 1 and (frame["ci_low"] <= frame["value"]).all() and (frame["value"] <= frame["ci_high"]).all()
    want = worst_slices(ev, demo_dataset, "yake", "ndcg@5", n_boot=1000).iloc[1:]
    assert frame["slice"].tolist() == want["slice"].tolist()
    row = frame.iloc[0]
    params = _params(row["open"])
    assert params["slice"] == row["slice"] and params["model"] == "yake"
    explorer = run(monkeypatch, None, params, "pages/explorer.py", direct=True)
    assert int(MATCHING.search(texts(explorer))[1]) == int(row["n_reviews"])


def test_whole_gt_list_with_marks(monkeypatch, demo_dataset):
    ev = evaluate(demo_dataset, EvalOptions(k=5))
    table = failure_table(demo_dataset, ev)
    gt = table[(table["side"] == "gt") & (table["model"] == "keybert")]
    found = gt[gt["category"] == "found"].iloc[0]
    rows = gt[(gt["movie"] == found["movie"]) & (gt["review_id"] == found["review_id"])]
    at = run(
        monkeypatch,
        None,
        {"movie": found["movie"], "review": found["review_id"], "hl": "keybert"},
        "pages/explorer.py",
    )
    at.toggle[0].set_value(True).run()
    body = at.html[-1].proto.body
    assert body.count("<li") == len(rows)
    assert body.count("✓") - body.count("✓ found") == (rows["category"].isin(["found", "found_beyond_k"])).sum()
    assert f'✓ <span style="opacity:0.7">{int(found["position"])}.</span> {found["keyword"]}' in body  # ranked


def _collection(root: Path) -> Path:
    docs = {
        "d1": ("Graph ranking of keyphrase extraction in documents.", ["keyphrase extraction", "neural nets"]),
        "d2": ("Topic models of text collections.", ["topic models", "text mining"]),
    }
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    for doc, (text, keys) in docs.items():
        (root / "docsutf8" / f"{doc}.txt").write_text(text, encoding="utf-8")
        (root / "keys" / f"{doc}.key").write_text("\n".join(keys) + "\n", encoding="utf-8")
    lines = [
        {"id": "d1", "keyphrases": ["keyphrase extraction", "graph ranking", "keyphrase extraction", ""]},
        {"id": "d2", "keyphrases": ["text", "topic model"]},
    ]
    (root / "predictions").mkdir()  # one file per model, named by its file (kweval.data.beside)
    (root / "predictions" / "extractor.jsonl").write_text(
        "\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8"
    )
    return root


def test_per_document_collection(monkeypatch, tmp_path):
    root = _collection(tmp_path / "c")
    ds = load_dataset(root)
    ev = evaluate(ds, EvalOptions(k=5, keyphrase=True))
    counts = failure_summary(failure_table(ds, ev), by=["model"]).set_index(["category"])["count"]
    assert counts["duplicate"] == 1 and counts["invalid"] == 1 and counts["hit"] >= 1
    at = run(monkeypatch, root, {"movie": "ALL"}, "pages/failures.py", direct=True)
    links = {p["category"]: n for _, n, p in _links(at)}
    assert links == {c: int(n) for c, n in counts.items() if n > 0}
    assert links["duplicate"] == 1 and links["invalid"] == 1 and links["missed_absent"] > 0
    movie = str(ds.reviews["movie"].iloc[0])
    explorer = run(monkeypatch, root, {"movie": movie, "review": "d1"}, "pages/explorer.py", direct=True)
    explorer.toggle[0].set_value(True).run()
    body = explorer.html[-1].proto.body
    assert "✓ keyphrase extraction" in body and "○ neural nets" in body  # a set: no ranks
    assert not re.search(r"<li[^>]*>[✓●○] <span", body)


@pytest.mark.dnlp
def test_dnlp_failures_page(monkeypatch):
    at = run(monkeypatch, DNLP, {"movie": "SW_Episode6", "models": "base,sentiment"}, "pages/failures.py", direct=True)
    links = _links(at)
    assert {p["model"] for _, _, p in links} == {"base", "sentiment"}
    assert any(p["category"] == "missed_absent" and n > 0 for _, n, p in links)


@pytest.mark.keyphrase
def test_semeval_failures_page_and_unranked_gt(monkeypatch, tmp_path):
    """SemEval2017 (30 documents copied with their keys, word-run predictions beside them): the page's counts are
    the core's, and a document's whole GT list is a set (no ranks)."""
    import shutil

    from tests.helpers import SEMEVAL

    root = tmp_path / "semeval"
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    lines = []
    for doc in sorted((SEMEVAL / "docsutf8").glob("*.txt"))[:30]:
        shutil.copy(doc, root / "docsutf8" / doc.name)
        shutil.copy(SEMEVAL / "keys" / f"{doc.stem}.key", root / "keys" / f"{doc.stem}.key")
        words = doc.read_text(encoding="utf-8").split()
        lines.append(json.dumps({"id": doc.stem, "keyphrases": [" ".join(words[j : j + 2]) for j in range(0, 30, 3)]}))
    (root / "predictions").mkdir()
    (root / "predictions" / "extractor.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = load_dataset(root)
    ev = evaluate(ds, EvalOptions(k=5, keyphrase=True, present=True))
    table = failure_table(ds, ev)
    counts = failure_summary(table, by=["model"]).set_index("category")["count"]
    at = run(monkeypatch, root, {"movie": "ALL"}, "pages/failures.py", direct=True)
    assert "Collection" in texts(at) or "collection" in texts(at)
    links = {p["category"]: n for _, n, p in _links(at)}
    assert links == {c: int(n) for c, n in counts.items() if n > 0}
    found = table[(table["side"] == "gt") & (table["category"] == "found")].iloc[0]
    explorer = run(
        monkeypatch, root, {"movie": str(found["movie"]), "review": str(found["review_id"])}, "pages/explorer.py"
    )
    explorer.toggle[0].set_value(True).run()
    body = explorer.html[-1].proto.body
    assert f"✓ {esc(found['keyword'])}" in body and not re.search(r"<li[^>]*>[✓●○] <span", body)
