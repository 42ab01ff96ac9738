"""The data's words on every surface (issue 28, item 5): on a per-document collection no page says "review" or "movie"
(AppTest: every page, its states that show more, every label, help, option, header and chart text), nor the HTML
reports.  The collections' own texts are scrubbed of the two words first, so what is found is kweval's, not the data's.
Code (`n_reviews`, `--per-review`: the stable names of columns and options; fenced commands) are names, not words."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from kweval.cli import main
from tests.apptest import run, visible_text
from tests.helpers import SEMEVAL

WORDS = re.compile(r"\b(reviews?|movies?)\b", re.IGNORECASE)
EDGE = Path(__file__).parent / "data" / "keyphrase_edge"


def _scrubbed(source: Path, folder: Path, limit: int | None = None) -> Path:
    """A copy of the collection `source` (its first `limit` documents) without the words "review" and "movie" in its
    texts and keys, with two simple models' predictions in predictions/."""
    (folder / "docsutf8").mkdir(parents=True)
    (folder / "keys").mkdir()
    (folder / "predictions").mkdir()
    lines: dict[str, list[str]] = {"first": [], "pairs": []}
    for doc in sorted((source / "docsutf8").glob("*.txt"))[:limit]:
        text = re.sub(r"(?i)review|movie", "survey", doc.read_text(encoding="utf-8"))
        keys = re.sub(r"(?i)review|movie", "survey", (source / "keys" / f"{doc.stem}.key").read_text(encoding="utf-8"))
        (folder / "docsutf8" / doc.name).write_text(text, encoding="utf-8")
        (folder / "keys" / f"{doc.stem}.key").write_text(keys, encoding="utf-8")
        words = text.split()
        lines["first"].append(json.dumps({"id": doc.stem, "keyphrases": words[:8]}))
        pairs = [" ".join(words[i : i + 2]) for i in range(0, 24, 3)] + [k for k in keys.splitlines()[:1] if k]
        lines["pairs"].append(json.dumps({"id": doc.stem, "keyphrases": pairs}))
    for model, rows in lines.items():
        (folder / "predictions" / f"{model}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def _found(texts: list[tuple[str, str]]) -> list[str]:
    """Each "review"/"movie" in `texts` (code spans left out), with where it is and its context."""
    out = []
    for where, text in texts:
        text = re.sub(r"```[\s\S]*?```|`[^`\n]*`", " ", text)  # fenced code, and code spans within a line
        for m in WORDS.finditer(text):
            out.append(f"{where}: …{text[max(0, m.start() - 60) : m.end() + 30]}…")
    return out


# every page, and the states of a page that show more than its first view
VIEWS = [
    ("summary", {}, None),
    ("summary", {"protocol": "pke"}, None),
    ("summary", {"protocol": "kpeval", "sem": "0"}, None),
    ("explorer", {}, None),
    ("explorer", {"review": "FIRST"}, "toggles"),
    ("ndcg", {}, None),
    ("compare", {}, None),
    ("compare", {"protocol": "meng"}, None),
    ("failures", {}, None),
    ("data", {}, None),
    ("parity", {}, None),
]


def _walk(monkeypatch, folder: Path) -> list[str]:
    first = sorted((folder / "docsutf8").glob("*.txt"))[0].stem
    found = []
    for page, params, then in VIEWS:
        params = {k: (first if v == "FIRST" else v) for k, v in params.items()}
        at = run(monkeypatch, folder, {"movie": "ALL", **params}, None if page == "summary" else f"pages/{page}.py")
        if then == "toggles":  # the document's whole GT list and the judged metrics
            for toggle in at.toggle:
                toggle.set_value(True)
            at.run()
        assert not at.exception, [e.message for e in at.exception]
        if page == "summary" and not params:
            at.button(key="build_report").click().run()  # the report of the view, built on the page
            assert not at.exception
            found += _found([("summary report", _report_text(at.session_state["summary_report"][1].decode()))])
        found += _found([(f"{page} {params}{where}", text) for where, text in visible_text(at)])
    return found


def _report_text(page: str) -> str:
    """What a reader of an HTML report sees: its text and tooltips (no script, no style, no code)."""
    page = re.sub(r"<(script|style|code)\b.*?</\1>", " ", page, flags=re.S)
    titles = " ".join(re.findall(r'title="([^"]*)"', page))
    return html.unescape(re.sub(r"<[^>]+>", " ", page) + " " + titles)


def _reports(folder: Path, tmp_path: Path) -> list[str]:
    found = []
    for name, extra in (("kweval", []), ("pke", ["--protocol", "pke"])):
        out = tmp_path / f"{name}.html"
        assert main(["report", str(folder), "--out", str(out), "--quiet", *extra]) == 0
        found += _found([(f"{name} report", _report_text(out.read_text(encoding="utf-8")))])
    return found


@pytest.mark.slow  # every page and its downloads (~8 s)
def test_no_page_of_a_small_collection_says_review_or_movie(monkeypatch, tmp_path):
    folder = _scrubbed(EDGE, tmp_path / "Edge")
    found = _walk(monkeypatch, folder) + _reports(folder, tmp_path)
    assert not found, "\n".join(found)


@pytest.mark.keyphrase
@pytest.mark.slow  # every page and its downloads on 493 documents (~12 s)
def test_no_page_of_semeval2017_says_review_or_movie(monkeypatch, tmp_path):
    """On the real collection's first 100 documents: the words a page says follow the data's kind, not its size (all
    493 made each of the 13 views evaluate 5x more for the same texts)."""
    folder = _scrubbed(SEMEVAL, tmp_path / "SemEval2017", limit=100)
    found = _walk(monkeypatch, folder) + _reports(folder, tmp_path)
    assert not found, "\n".join(found)


def test_the_walk_would_see_the_words():
    """The walker is what the tests rest on: it reads labels, help, options, headers, chart texts and tooltips."""
    texts = [("x", "Model B (scatter, per movie, reviews)"), ("y", "`n_reviews` and `--per-review` are names")]
    assert len(_found(texts)) == 2
    assert _found([("r", _report_text('<th title="reviews of the movie">x</th><code>movie</code>'))])


def test_say_keeps_code_and_quotes_and_rewrites_the_rest():
    """`Vocabulary.say` on per-document data: prose rewritten (plural, capitals, "per-review"), code spans, fenced
    commands and quoted data kept; an unpaired backtick keeps nothing beyond its own line (docs/metrics.md has one)."""
    from kweval.data.vocabulary import DOCUMENT_WORDS, MOVIE_WORDS

    text = (
        "A ` stray\nReviews of the movie, per-review\n```bash\nkweval evaluate --per-review\n```\n"
        "`n_reviews` and ‘bad movie’"
    )
    assert DOCUMENT_WORDS.say(text) == (
        "A ` stray\nDocuments of the collection, per-document\n```bash\nkweval evaluate --per-review\n```\n"
        "`n_reviews` and ‘bad movie’"
    )
    assert MOVIE_WORDS.say(text) == text
