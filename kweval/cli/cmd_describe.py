"""`kweval describe DATA`: a per-document dataset's card (kweval.keyphrase.describe) as text, JSON or Markdown."""

from __future__ import annotations

import argparse
import json
import sys

from kweval.cli.common import UsageError
from kweval.messages import problem_line, say, shown

FORMATS = ("text", "json", "markdown")


def add_parser(sub) -> None:
    """Register `describe` on the CLI's subparsers."""
    from kweval.cli.fast import PRESETS
    from kweval.text.matching import MATCH_MODES

    ds = sub.add_parser(
        "describe",
        help="a per-document dataset's statistics (documents, keyphrases, present / absent under a preset) and a "
        "lint of its ground truth",
    )
    ds.add_argument("data", help="docsutf8/ + keys/ collection(s), Meng-layout .json/.jsonl file(s), or a tidy folder")
    ds.add_argument(
        "--protocol",
        choices=PRESETS,
        default="kweval",
        help="whose present rule counts present / absent keyphrases (docs/protocols.md, 'Dataset statistics')",
    )
    ds.add_argument(
        "--match",
        choices=MATCH_MODES,
        help="with --protocol kweval: the match mode (default stem, as `kweval evaluate` on per-document data)",
    )
    ds.add_argument("--format", choices=FORMATS, default="text")
    ds.add_argument("--out", default="-", help="output file (default: stdout)")


def cmd_describe(args: argparse.Namespace) -> int:
    """Read every per-document collection at DATA and print its card; one `kweval:` line per data problem."""
    from kweval.data import load_dataset, read_per_document_collections
    from kweval.io.output import check_output_file, write_output
    from kweval.keyphrase.describe import describe, documents_of_dataset
    from kweval.keyphrase.protocols import stem_cache_notes

    if args.match is not None and args.protocol != "kweval":
        raise UsageError(f"--match applies to --protocol kweval; {args.protocol} has its own rule")
    check_output_file(args.out)
    problems: list = []
    collections = read_per_document_collections(args.data, problems)
    if collections is None:
        dataset = load_dataset(args.data)  # another layout (tidy); a path that is none raises DatasetError
        problems = list(dataset.problems)
        if not dataset.per_document:
            raise UsageError(f"{args.data}: describe needs per-document ground truth (a document's own keyphrases)")
        collections = documents_of_dataset(dataset)
    for problem in problems:
        print(problem_line(problem), file=sys.stderr)
    if not any(c.doc_ids for c in collections):
        say(args.data, "no document could be read; nothing to describe")
        return 2
    cards = [describe(c, args.protocol, args.match) for c in collections]
    for note in stem_cache_notes():  # a full disk or a quota: the stems are not kept, the card is still right
        say("stem cache", note)
    if args.format == "json":
        body = cards[0].as_dict() if len(cards) == 1 else [c.as_dict() for c in cards]
        text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    else:
        render = markdown_card if args.format == "markdown" else text_card
        text = "\n".join(render(c.as_dict()) for c in cards)
    write_output(text, args.out)
    return 0


def _number(value: object) -> str:
    return "—" if value is None else f"{value:,}"


def text_card(card: dict) -> str:
    """The card as plain text: the six statistics, the plain reading (meng), the lint with examples, notes."""
    from kweval.keyphrase.describe import LINT_CHECKS, STATISTICS

    lines = [f"{shown(card['name'])} (protocol {card['protocol']})", f"present rule: {card['present_rule']}"]
    lines += [f"  {name:<20}{_number(card[name]):>10}" for name in STATISTICS]
    plain = card.get("plain_reading")
    if plain:
        lines.append("the meng preset's own rule (\\W split, as `evaluate --protocol meng` scores):")
        lines += [f"  {name:<20}{_number(value):>10}" for name, value in plain.items()]
    lines.append("ground-truth lint:")
    for check, finding in card["lint"].items():
        examples = "; ".join(f"{shown(d)}" + (f": {shown(repr(k))}" if k else "") for d, k in finding["examples"])
        tail = f"  e.g. {examples}" if examples else ""
        lines.append(f"  {check:<24}{finding['count']:>8,}  ({LINT_CHECKS[check]}){tail}")
    lines += [f"note: {n}" for n in card.get("notes", [])]
    return "\n".join(lines) + "\n"


def markdown_card(card: dict) -> str:
    """The card as Markdown tables (every string from the data escaped: no markup or HTML from it is live)."""
    from kweval.io.report import escape_markdown
    from kweval.keyphrase.describe import LINT_CHECKS, STATISTICS

    def md(text: str) -> str:
        return escape_markdown(shown(text))

    out = [
        f"### {md(card['name'])} (protocol `{card['protocol']}`)",
        "",
        f"Present rule: {md(card['present_rule'])}",
        "",
    ]
    plain = card.get("plain_reading")
    header = "| statistic | value |" + (" meng preset's \\W rule |" if plain else "")
    out += [header, "| --- | ---: |" + (" ---: |" if plain else "")]
    for name in STATISTICS:
        extra = f" {_number(plain.get(name, card[name]))} |" if plain else ""
        out.append(f"| {name} | {_number(card[name])} |{extra}")
    out += ["", "| lint check | count | what | examples |", "| --- | ---: | --- | --- |"]
    for check, finding in card["lint"].items():
        examples = "; ".join(md(d) + (f": {md(repr(k))}" if k else "") for d, k in finding["examples"])
        out.append(f"| {check} | {finding['count']:,} | {md(LINT_CHECKS[check])} | {examples} |")
    out += [f"\nNote: {md(n)}" for n in card.get("notes", [])]
    return "\n".join(out) + "\n"
