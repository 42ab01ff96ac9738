"""docs/protocols.md's table of conventions, generated from `kweval.keyphrase.conventions`
(`python -m kweval.keyphrase.conventions_doc docs/protocols.md`).

One row per convention: what it decides, each setting's sentence, and each preset's setting (the kweval
preset's under every `--match` mode).  tests/test_lattice.py fails when the document and the code drift apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kweval.keyphrase.conventions import CONVENTIONS, PRESETS, kweval_settings, preset_settings
from kweval.metrics.docs_table import replace_between
from kweval.text.matching import MATCH_MODES

BEGIN = (
    "<!-- generated from kweval/keyphrase/conventions.py by `python -m kweval.keyphrase.conventions_doc "
    "docs/protocols.md`; edit the conventions there, not below -->"
)
END = "<!-- end of the generated conventions -->"


def _kweval_cell(name: str) -> str:
    by_match = {m: kweval_settings(m)[name] for m in MATCH_MODES}
    if len(set(by_match.values())) == 1:
        return f"`{by_match['approx']}`"
    return "; ".join(f"`--match {m}`: `{v}`" for m, v in by_match.items())


def markdown_table() -> str:
    """The conventions as a Markdown table (cells escaped for tables)."""
    head = ["convention", "decides", "settings", *PRESETS]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for c in CONVENTIONS:
        settings = "<br>".join(f"`{s}`: {sentence}" for s, sentence in c.settings.items())
        presets = [_kweval_cell(c.name)] + [f"`{preset_settings(p)[c.name]}`" for p in PRESETS[1:]]
        cells = [f"`{c.name}` ({c.label})", c.decides, settings, *presets]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def with_table(document: str) -> str:
    """`document` with the text between the markers replaced by `markdown_table()` (unchanged without them)."""
    return replace_between(document, BEGIN, END, markdown_table())


def main() -> None:
    if len(sys.argv) != 2:
        print("usage: python -m kweval.keyphrase.conventions_doc docs/protocols.md", file=sys.stderr)
        raise SystemExit(2)
    path = Path(sys.argv[1])
    path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
