"""The one form of every `kweval:` message line, and the escaping of the user strings in it (stdlib only).

A message names a SOURCE (a file, a document, a model) and a REASON; both
may hold what a user wrote: a file name, an id, a model name.  `shown`
writes every character that could act on a terminal or forge a line as an
escape: controls (newline, ESC, ...), format characters (bidi overrides such
as U+202E), line and paragraph separators, and lone surrogates (from file
names that are not UTF-8, or a JSON `\\udc80`).  Every `kweval:` line the CLI
prints goes through `line` (or `shown`), so one problem is one line.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Sequence

PREFIX = "kweval: "


def _shown_char(ch: str) -> str:
    if ch == " " or ch.isprintable() and unicodedata.category(ch)[0] not in "CZ":
        return ch
    return ascii(ch)[1:-1]


def shown(text: object) -> str:
    """`text` (str() of it) with control, format (bidi), separator and surrogate characters written as escapes.

    >>> shown("model\\n kweval: forged \\x1b[31m\\u202e")
    'model\\\\n kweval: forged \\\\x1b[31m\\\\u202e'
    """
    value = str(text)
    if value.isascii() and value.isprintable():  # the usual case, at C speed
        return value
    return "".join(_shown_char(ch) for ch in value)


def listed(items: Sequence[object], limit: int = 5) -> str:
    """Up to `limit` items joined by ", ", then how many more: a line names a handful, never thousands.

    >>> listed(["a", "b", "c"], limit=2)
    'a, b and 1 more'
    """
    shown_items = ", ".join(str(item) for item in items[:limit])
    return f"{shown_items} and {len(items) - limit} more" if len(items) > limit else shown_items


def line(*parts: object) -> str:
    """`kweval: PART: PART...` with every part `shown` (one physical line whatever the parts hold)."""
    return PREFIX + ": ".join(shown(p) for p in parts)


def say(*parts: object) -> None:
    """Print `line(*parts)` on stderr."""
    print(line(*parts), file=sys.stderr)


def problem_line(problem) -> str:
    """The one `kweval: SOURCE: REASON` line of a `kweval.data.dataset.Problem` (anything with source and reason)."""
    return line(problem.source, problem.reason)
