"""docs/metrics.md's column reference, generated from the registry (`python -m kweval.metrics.docs_table PATH`).

One Markdown table per group of `kweval.metrics.registry`; metric groups
also say how micro aggregation forms each metric.  The failure categories'
table (§10) comes from `kweval.metrics.categories`, between its own markers.  tests/test_registry.py
fails when the document and the registry drift apart.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from kweval.metrics import categories
from kweval.metrics.registry import entries

DOC_MARKER = (
    "<!-- generated from kweval/metrics/registry.py by `python -m kweval.metrics.docs_table "
    "docs/metrics.md`; edit the registry, not below -->"
)
_GROUP_TITLES = {
    "set": "Set-based and weighted",
    "ranking": "Ranking (cut off at k)",
    "coverage": "Movie level",
    "semantic": "Semantic (--semantic)",
    "sentiment": "Sentiment (--sentiment)",
    "keyphrase": "Keyphrase benchmarks (--keyphrase, --present)",
    "aggregation": "Summary counts",
    "dataset": "Dataset overview (the dashboard's Data page)",
    "statistics": "Comparison of model A with model B",
    "judgments": "Judged (--judgments)",
    "beyond": "Grounding and diversity (--grounding, --diversity)",
}


def group_title(group: str) -> str:
    """The title a registry group's table has in docs/metrics.md (the group's name if it has none)."""
    return _GROUP_TITLES.get(group, group)


def markdown_table(groups: Iterable[str] | None = None) -> str:
    """The registry as a Markdown table (templates shown with k), for docs/metrics.md.

    A table of metrics (entries `evaluate` reports) has a "micro" column too.
    """
    wanted = set(groups) if groups is not None else None
    chosen = [e for e in entries() if wanted is None or e.group in wanted]
    with_micro = any(e.option is not None for e in chosen)
    head = ["column", "label", "definition", "range", "better", *(["micro"] if with_micro else []), "defined in"]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for e in chosen:
        cells = [
            f"`{e.name.replace('{k}', 'k')}`",
            e.label.replace("{k}", "k"),
            e.definition.replace("{k}", "k")
            + (f"; undefined (empty, not 0) where {why}" if (why := e.undefined_reason()) else ""),
            e.range,
            e.better,
            *([e.micro_rule()] if with_micro else []),
            f"[§](#{e.section})" + (f" {e.reference}" if e.reference else ""),
        ]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def doc_reference() -> str:
    """The generated column reference of docs/metrics.md: one table per group."""
    parts = [DOC_MARKER, ""]
    for group, title in _GROUP_TITLES.items():
        parts += [f"### {title}", "", markdown_table([group])]
    return "\n".join(parts)


CATEGORIES_BEGIN = (
    "<!-- generated from kweval/metrics/categories.py by `python -m kweval.metrics.docs_table "
    "docs/metrics.md`; edit the table there, not below -->"
)
CATEGORIES_END = "<!-- end of the generated failure categories -->"


def replace_between(document: str, begin: str, end: str, table: str) -> str:
    """`document` with the text between the markers `begin` and `end` replaced by `table` (unchanged without them):
    how a generated table is kept in a hand-written document."""
    if begin not in document or end not in document:
        return document
    head, rest = document.split(begin, 1)
    return head + begin + "\n\n" + table + "\n" + end + rest.split(end, 1)[1]


def with_categories(document: str) -> str:
    """`document` with the text between the failure categories' markers replaced by `categories.markdown_table()`."""
    return replace_between(document, CATEGORIES_BEGIN, CATEGORIES_END, categories.markdown_table())


def with_doc_reference(document: str) -> str:
    """`document` (docs/metrics.md) with everything after the marker replaced by `doc_reference()`, and the failure
    categories' table (§10) regenerated."""
    head = with_categories(document).split(DOC_MARKER, 1)[0]
    return head.rstrip("\n") + "\n\n" + doc_reference()


def main() -> None:
    if len(sys.argv) != 2:
        print("usage: python -m kweval.metrics.docs_table docs/metrics.md", file=sys.stderr)
        raise SystemExit(2)
    path = Path(sys.argv[1])
    path.write_text(with_doc_reference(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
