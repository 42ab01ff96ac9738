"""`kweval parse`: raw model responses read into keyphrase lists, one JSONL line per response.

What `--predictions NAME=PATH` reads from a file of ``{"id", "response"}``
lines, written out so that it can be checked (and read again by
`--predictions`): ``{"id", "keyphrases", "parse"}`` with the parser's
decision, plus ``movie`` when the line named one and ``sections`` when the
response had present/absent sections.  The parser is
`kweval.data.responses` (its rule table: `kweval.data.response_rules`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kweval.cli.common import USAGE_ERROR, problem_lines
from kweval.data.response_rules import DECISIONS
from kweval.io.output import check_output_file, write_output
from kweval.messages import say

DESCRIPTION = """\
Read a JSONL file of raw model responses ({"id": DOC, "response": "<the model's text>"} per line) into
keyphrase lists, as --predictions NAME=PATH reads it, and write one line per response:
{"id": DOC, "keyphrases": [...], "parse": DECISION} (plus "movie" when given and "sections" for
present/absent sections).  DECISION is one of:
  DECISIONS.
An abstention, an empty and an unparseable response are empty lists (each scores 0 where it is
evaluated).  The counts per decision are said in one line on stderr; the rules are in docs/llm.md.
""".replace("DECISIONS", ", ".join(DECISIONS))


def add_parser(sub) -> None:
    """Register `parse` on the CLI's subparsers."""
    pp = sub.add_parser(
        "parse",
        help="read raw model responses (LLM output) into keyphrase lists (JSONL)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pp.add_argument("path", help='JSONL file of {"id": ..., "response": "..."} lines')
    pp.add_argument("--out", default="-", help="output JSONL file, or - for stdout (default)")
    pp.add_argument("--model", help="the model's name in the count line (default: the file's name)")


def cmd_parse(args: argparse.Namespace) -> int:
    """`kweval parse PATH [--out lists.jsonl]`."""
    from kweval.data.predictions import jsonl_read

    path = Path(args.path)
    check_output_file(args.out)
    if not path.is_file():
        say(args.path, "no such file")
        return USAGE_ERROR
    problems: list = []
    records: list[tuple] = []
    rows, _ = jsonl_read(path, args.model or path.stem, problems, None, records)
    listed = len({(movie, doc) for movie, doc, *_ in rows}) - len(records)
    for line in problem_lines(problems):
        print(line, file=sys.stderr)
    if listed > 0:
        say(args.path, f"{listed} line(s) without a `response` (already lists): not written")
    if not records:
        say(args.path, "no raw response read; nothing written")
        return USAGE_ERROR
    write_output("".join(_line(record) + "\n" for record in records), args.out)
    if args.out != "-":
        say(f"wrote {len(records):,} line(s) to {args.out}")
    return 0


def _line(record: tuple) -> str:
    """One output line of a response record (`kweval.data.response_lines.RESPONSE_COLUMNS`)."""
    movie, doc, _model, _text, decision, phrases, sections, _notes = record
    out: dict[str, object] = {} if movie is None else {"movie": movie}
    out.update({"id": doc, "keyphrases": list(phrases), "parse": decision})
    if sections is not None:
        out["sections"] = list(sections)
    return json.dumps(out, ensure_ascii=False)
