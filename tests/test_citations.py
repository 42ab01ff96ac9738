"""The code cites the metric specification that ships with it: docs/metrics.md, by sections it has.

(The repository has no METRICS.md; the registry generates docs/metrics.md.)
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "kweval").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py"), ROOT / "app.py"])
CITATION = re.compile(r"docs/metrics\.md §(\d+)(?:[–-](\d+))?")


def sections() -> set[int]:
    """The numbers of docs/metrics.md's numbered sections ("## 3. Per-review metrics")."""
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    return {int(n) for n in re.findall(r"^## (\d+)\. ", text, flags=re.M)}


def test_no_citation_of_a_file_the_repository_lacks():
    assert not (ROOT / "METRICS.md").exists()
    offending = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in SOURCES
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "METRICS.md" in line
    ]
    assert offending == []


def test_every_cited_section_exists():
    known = sections()
    assert {1, 2, 3, 9} <= known, "docs/metrics.md's section headings changed shape"
    cited = []
    for path in SOURCES:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for first, last in CITATION.findall(line):
                cited += [(f"{path.relative_to(ROOT)}:{i}", n) for n in range(int(first), int(last or first) + 1)]
    assert len(cited) > 20, "the pattern no longer finds the citations"
    assert [(where, n) for where, n in cited if n not in known] == []
