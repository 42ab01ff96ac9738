"""The parser's rule table: every rule `kweval.data.responses.parse_response` applies, with its test vector.

Response rules (side ``response``) are tried in this order and the first that
applies decides how a response is read; item rules (side ``item``) clean every
phrase a list, section or line rule found.  Each row's `example` parses to its
`expected` phrases (and `sections`) with its `decision`: tests/test_responses.py
runs every row, and docs/llm.md shows the table (`markdown_table`, written there by
`python -m kweval.data.response_rules docs/llm.md`; a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

from kweval.messages import shown

DECISIONS = ("json", "list", "sections", "line", "abstention", "empty", "unparseable")
NO_LIST = ("abstention", "empty", "unparseable")  # decisions that give an empty list (scored 0, counted)
MAX_RESPONSE_CHARS = 1_000_000  # a longer response is not read (unparseable, reported)
MAX_PHRASE_WORDS = 8  # a line rule's phrase; longer pieces are prose (the list rules keep long items)
JSON_LIST_FIELDS = ("keyphrases", "keywords", "phrases", "key_phrases", "keyphrase", "keyword", "tags", "terms")
JSON_ITEM_FIELDS = ("keyphrase", "keyword", "phrase", "term", "text", "name")
SECTION_NAMES = ("present", "absent")


@dataclass(frozen=True)
class Rule:
    """One parser rule: its name, side (response or item), the decision it gives, what it says, a test vector."""

    name: str
    side: str  # "response": decides how the response is read; "item": cleans each phrase
    decision: str  # the `Parsed.decision` of the example
    rule: str
    example: str
    expected: tuple[str, ...]
    sections: tuple[str, ...] | None = None


RULES: tuple[Rule, ...] = (
    Rule(
        "controls",
        "response",
        "list",
        "control characters (but tab and line breaks) and bidirectional-format marks (U+200E/F, U+202A–E, "
        "U+2066–9, U+061C) are removed first (counted)",
        "- sign\u202e problem\n- fer\x07mions",
        ("sign problem", "fermions"),
    ),
    Rule(
        "reasoning",
        "response",
        "list",
        "reasoning blocks `<think>…</think>` and `<reasoning>…</reasoning>` are removed first (one left open runs "
        "to the end; a closing tag alone removes what precedes it)",
        "<think>The text is about QMC; two phrases.</think>\n- sign problem\n- fermions",
        ("sign problem", "fermions"),
    ),
    Rule(
        "empty",
        "response",
        "empty",
        "nothing left (blank, or only reasoning): an empty list",
        " <think>hm</think> ",
        (),
    ),
    Rule(
        "json",
        "response",
        "json",
        "a JSON array, or an object with one list-valued field (`keyphrases`, `keywords`, `phrases`, …; with "
        "several, the first of these names): its strings (or items' `keyphrase`/`phrase`/… field) are the list",
        '{"keyphrases": ["sign problem", {"phrase": "fermions", "score": 0.8}]}',
        ("sign problem", "fermions"),
    ),
    Rule(
        "json fence",
        "response",
        "json",
        "the same inside a Markdown code fence (```json … ```), whatever prose surrounds it",
        'Here they are:\n```json\n["sign problem", "fermions"]\n```\nHope this helps.',
        ("sign problem", "fermions"),
    ),
    Rule(
        "json sections",
        "response",
        "json",
        "a JSON object whose list fields are present/absent ones (`present_keyphrases`, `absent`, …): both lists, "
        "in order, each phrase with its section",
        '{"present_keyphrases": ["sign problem"], "absent_keyphrases": ["quantum simulation"]}',
        ("sign problem", "quantum simulation"),
        ("present", "absent"),
    ),
    Rule(
        "sections",
        "response",
        "sections",
        '"Present keyphrases:" / "Absent keyphrases:" headings (any case, Markdown `#` or emphasis, items listed '
        "below or on the heading's line): both sections read in order into the list, each phrase's section kept",
        "**Present keyphrases:**\n1. sign problem\n2. fermions\n**Absent keyphrases:** quantum simulation",
        ("sign problem", "fermions", "quantum simulation"),
        ("present", "present", "absent"),
    ),
    Rule(
        "numbered",
        "response",
        "list",
        "numbered lines (`1.`, `1)`, `(1)`) are the items",
        "1. sign problem\n2) fermions\n(3) quantum Monte Carlo",
        ("sign problem", "fermions", "quantum Monte Carlo"),
    ),
    Rule(
        "bulleted",
        "response",
        "list",
        "bulleted lines (`-`, `*`, `•`, `+`) are the items",
        "- sign problem\n* fermions\n• quantum Monte Carlo",
        ("sign problem", "fermions", "quantum Monte Carlo"),
    ),
    Rule(
        "preamble",
        "response",
        "list",
        'in a list, a preamble line ("Here are the keyphrases:") and a closing remark are not items: only the '
        "numbered or bulleted lines are",
        "Here are the keyphrases:\n1. sign problem\n2. fermions\nLet me know if you need more.",
        ("sign problem", "fermions"),
    ),
    Rule(
        "abstention",
        "response",
        "abstention",
        'a refusal ("I\'m sorry, I cannot …", "As an AI …") or a "none" answer ("None", "N/A", "No keyphrases '
        'found", an empty JSON list, "Keyphrases: none"): an empty list, counted as an abstention',
        "I'm sorry, but I cannot extract keyphrases from this text.",
        (),
    ),
    Rule(
        "line",
        "response",
        "line",
        "otherwise one line of phrases separated by `;` (else `,`), after a leading `Keywords:` / `Keyphrases:` "
        f"label; each piece at most {MAX_PHRASE_WORDS} words",
        "Keyphrases: sign problem; fermions; quantum Monte Carlo",
        ("sign problem", "fermions", "quantum Monte Carlo"),
    ),
    Rule(
        "lines",
        "response",
        "list",
        f"several short lines (at most {MAX_PHRASE_WORDS} words each) without markers: one phrase per line (a "
        "preamble line ending in `:` and a closing sentence are not items)",
        "Keyphrases:\nsign problem\nfermions\nHope this helps!",
        ("sign problem", "fermions"),
    ),
    Rule(
        "unparseable",
        "response",
        "unparseable",
        "anything else (prose): an empty list, counted as unparseable",
        "The paper studies how fermion simulations suffer from cancellations and proposes a cure for them.",
        (),
    ),
    Rule(
        "emphasis",
        "item",
        "list",
        "Markdown emphasis (`**`, `__`, `*`, `_`, backticks) is stripped",
        "- **sign problem**\n- `fermions`\n- _quantum_ Monte Carlo",
        ("sign problem", "fermions", "quantum Monte Carlo"),
    ),
    Rule(
        "quotes",
        "item",
        "line",
        "surrounding quotes (`\"`, `'`, “ ”, ‘ ’, « ») and a trailing `.`, `,` or `;` are stripped",
        '"sign problem", \u201cfermions\u201d, \u2018quantum Monte Carlo\u2019.',
        ("sign problem", "fermions", "quantum Monte Carlo"),
    ),
    Rule(
        "explanation",
        "item",
        "list",
        "an explanation after ` - `, ` – ` or ` — ` is dropped (the term is kept)",
        "1. sign problem – the main obstacle\n2. fermions - particles with half-integer spin",
        ("sign problem", "fermions"),
    ),
    Rule(
        "bold term",
        "item",
        "list",
        "an explanation after `**term**:` (or a short `term:`) is dropped (the term is kept)",
        "1. **Sign problem**: the main obstacle to QMC\n2. Fermions: particles with half-integer spin",
        ("Sign problem", "Fermions"),
    ),
)


def markdown_table() -> str:
    """The rules as a Markdown table (order, side, rule, example → phrases), for docs/llm.md."""
    rows = ["| # | rule | side | what it does | example | read as |", "| --- | --- | --- | --- | --- | --- |"]
    for i, r in enumerate(RULES, start=1):
        example = " ⏎ ".join(shown(line) for line in r.example.split("\n"))
        read = ", ".join(f"‘{p}’" for p in r.expected) or "(empty list)"
        if r.sections:
            read += " (" + ", ".join(r.sections) + ")"
        cells = [str(i), r.name, r.side, r.rule, f"`` {example} ``", f"{r.decision}: {read}"]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


TABLE_BEGIN = "<!-- generated by `python -m kweval.data.response_rules docs/llm.md`; edit the table there -->"
TABLE_END = "<!-- end of the generated parser rules -->"


def with_table(document: str) -> str:
    """`document` with the text between the table's markers replaced by `markdown_table()`."""
    head, rest = document.split(TABLE_BEGIN, 1)
    return head + TABLE_BEGIN + "\n\n" + markdown_table() + "\n" + TABLE_END + rest.split(TABLE_END, 1)[1]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    target = Path(sys.argv[1])
    target.write_text(with_table(target.read_text(encoding="utf-8")), encoding="utf-8")
