"""Regenerate docs/protocols.md's "What each preset changes on SemEval2017" rows from the CLI.

Every number is what `kweval evaluate` prints, run in this process through
the CLI's own `main` (one definition: the `kweval` rows are the default
pipeline of docs/metrics.md, the others `--protocol P`):

    kweval evaluate DATA --predictions NAME=PATH --match stem|exact|approx --k 5|10 --format json
    kweval evaluate DATA --predictions NAME=PATH --protocol pke|kpeval|meng --k 10 --format json

Usage:
    python scripts/protocol_table.py SemEval2017/ yake=yake.jsonl firstphrases=fp.jsonl [keybert=kb.jsonl]

The predictions are `kweval extract DATA --extractor NAME --out NAME.jsonl`'s
(top 20).  Prints the table's Markdown rows, extractor by extractor.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROWS = (
    ("kweval", "stem"),  # the default on per-document data
    ("kweval", "exact"),
    ("kweval", "approx"),
    ("pke", None),
    ("kpeval", None),
    ("meng", None),
)
HEADER = (
    "| preset | extractor | F1@5 | F1@10 | F1@M | F1@O | F1@5 present |\n"
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
)


def cli_row(data: str, name: str, path: str, *options: str) -> dict:
    """The one summary row (the ALL row on the kweval pipeline) that `kweval evaluate` writes as JSON."""
    from kweval.cli.dispatch import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.json"
        argv = ["evaluate", data, "--predictions", f"{name}={path}", "--format", "json", "--out", str(out), "--quiet"]
        status = main([*argv, *options])
        if status != 0:
            raise SystemExit(f"kweval evaluate {' '.join(options)} exited {status}")
        rows = json.loads(out.read_text())["rows"]
    return next((r for r in rows if r["movie"] == "ALL"), rows[0])


def preset_values(data: str, name: str, path: str, preset: str, match: str | None) -> list[float | None]:
    """F1@5, F1@10, F1@M, F1@O, F1@5 present of one preset, as the CLI prints them (None: not reported)."""
    if preset == "kweval":
        at5 = cli_row(data, name, path, "--match", str(match), "--k", "5")
        at10 = cli_row(data, name, path, "--match", str(match), "--k", "10")
        return [at5["f1@5"], at10["f1@10"], at5["f1@M"], at5["f1@O"], at5.get("f1@5_present")]
    row = cli_row(data, name, path, "--protocol", preset, "--k", "10")
    return [row.get(c) for c in ("f1@5", "f1@10", "f1@M", "f1@O", "f1@5_present")]


def table_rows(data: str, predictions: list[tuple[str, str]]) -> list[str]:
    """The Markdown rows of every preset × extractor, extractor by extractor."""
    lines = []
    for name, path in predictions:
        for preset, match in ROWS:
            values = preset_values(data, name, path, preset, match)
            label = f"kweval (`--match {match}`)" if preset == "kweval" else preset
            cells = " | ".join("—" if v is None else f"{v:.4f}" for v in values)
            lines.append(f"| {label} | {name} | {cells} |")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    predictions = [tuple(a.split("=", 1)) for a in argv[1:]]
    print(HEADER)
    print("\n".join(table_rows(argv[0], predictions)))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
