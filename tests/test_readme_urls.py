"""Every dashboard URL in the README is opened (AppTest, on the embedded demo) and shows what the README says it
shows: the counts and values written beside it (issue 28, item 6).  A URL without a check here fails the test."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest

from tests.apptest import run, texts
from tests.helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
URLS = re.findall(r"<(http://localhost:8501/[^>\s]+)>", README)


def _after(url: str) -> str:
    """The README's words right after `url` (the parenthesis that says what it shows)."""
    return " ".join(README.split(f"<{url}>", 1)[1].split())[:200]


def _open(monkeypatch, url: str, env: dict[str, str] | None = None):
    parts = urlsplit(url)
    page = parts.path.strip("/") or "summary"
    params = dict(parse_qsl(parts.query))
    return run(monkeypatch, None, params, None if page == "summary" else f"pages/{page}.py", env=env), params


def _plain(text: str) -> str:
    return " ".join(text.replace("\\", "").replace("*", "").split())


def check_failures(monkeypatch, url: str) -> None:
    """The short answer the README quotes for yake is the page's own sentence."""
    said = re.search(r"\*(yake: [^*]+)\*", README)
    assert said, "the README quotes no sentence of the Failures page"
    at, _ = _open(monkeypatch, url)
    assert _plain(said.group(1)) in _plain(texts(at)), said.group(1)


def check_category(monkeypatch, url: str) -> None:
    """A segment link: the explorer filtered to as many reviews as the README says."""
    n = int(re.match(r"\((\d+) reviews on the demo\)", _after(url)).group(1))
    at, params = _open(monkeypatch, url)
    assert f"Filtered: {n} review{'s' if n != 1 else ''} with keywords of {params['model']}" in _plain(texts(at))


def check_slice(monkeypatch, url: str) -> None:
    """A slice link: the explorer filtered to the slice's reviews, and the slice is the model's worst on the
    Failures page with the README's count, value and overall value."""
    n, value, overall = re.match(r"\((\d+) reviews, nDCG@5 ([\d.]+) against ([\d.]+) overall\)", _after(url)).groups()
    at, params = _open(monkeypatch, url)
    spec = unquote(params["slice"])
    assert f"Filtered to the slice {spec} ({params['model']}'s): {n} reviews." in _plain(texts(at))
    failures = url.replace("/explorer?", "/failures?").split("&slice=")[0] + f"&model={params['model']}&metric=ndcg@5"
    at, _ = _open(monkeypatch, failures)
    table = next(df.value for df in at.dataframe if "gap" in df.value.columns)
    worst = table.iloc[0]  # "yake's worst on nDCG@5": the first row, the largest gap
    assert (worst["slice"], int(worst["n_reviews"])) == (spec, int(n))
    assert (f"{worst['value']:.3f}", f"{worst['overall']:.3f}") == (value, overall)


def check_grounding(monkeypatch, url: str) -> None:
    """The LLM example's link: with the predictions the README names (`KWEVAL_PREDICTIONS=llm=...`), the explorer
    marks each keyword present, supported or unsupported, says what supports it, and shows the raw response."""
    said = re.search(r"`KWEVAL_PREDICTIONS=llm=\.\.\.`", README) and re.search(r"--predictions llm=(\S+)`", README)
    assert said, "the README names no predictions file for the LLM link"
    at, params = _open(monkeypatch, url, env={"KWEVAL_PREDICTIONS": f"llm={REPO / said.group(1)}"})
    body = at.html[0].proto.body
    for grade in ("present", "supported", "unsupported"):  # ● ◐ ○, as the README lists them
        assert f'class="kw-ground kw-ground-{grade}"' in body, grade
    assert "nearest ‘" in body  # what supports (or comes nearest to) a keyword, below the card
    assert [e for e in at.expander if "raw response" in e.label]
    assert f"Review {params['review']}" in _plain(texts(at))


CHECKS = {
    "failures": check_failures,
    "category=": check_category,
    "slice=": check_slice,
    "grd=1": check_grounding,
}


def _check_of(url: str):
    found = [check for key, check in CHECKS.items() if key in url]
    return found[0] if found else None


def test_every_readme_url_has_a_check():
    assert len(URLS) >= 3
    assert [u for u in URLS if _check_of(u) is None] == []


@pytest.mark.parametrize("url", URLS)
def test_readme_url_shows_what_the_readme_says(monkeypatch, url):
    _check_of(url)(monkeypatch, url)
