"""Text made safe for the page: HTML escaping, literal Markdown, number formatting.

Review text, keywords, titles, movie and model names and file names are user
content.  `esc` escapes for HTML; `md` makes a value literal inside Markdown
(HTML escaped, Markdown and LaTeX punctuation backslash-escaped, never an
autolink).  Every HTML or Markdown builder in the dashboard goes through these.
"""

from __future__ import annotations

import html
import re


def esc(value: object) -> str:
    """HTML-escaped text of `value` (None and NaN become "")."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return html.escape(str(value), quote=True)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$^=:])")


# GFM turns bare URLs, www. names and e-mail addresses into links after escapes are decoded: an
# invisible WORD JOINER (U+2060) inside each pattern keeps them text (issue 15, item 8).
_AUTOLINK = re.compile(r"(?i)(https?:|ftp:)(?=//)|\bwww(?=\.)|(?<=[\w.+-])@(?=[-\w]+\.[-\w])")


def md(value: object) -> str:
    """`value` as literal text inside Markdown: HTML escaped, Markdown/LaTeX punctuation backslash-escaped,
    never an autolink."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = _AUTOLINK.sub(lambda m: m.group(0) + "\u2060", str(value))
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")
    return html.escape(text, quote=True)


def fmt_num(value: object, digits: int = 3) -> str:
    """`value` with `digits` decimals; "n/a" for NaN and what is not a number."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if x != x else f"{x:.{digits}f}"


def visible(text: str) -> str:
    """`text` with every unprintable character (controls, NUL, newlines, bidi marks) written as an escape, so a
    message quoting it shows what was typed and none of it acts."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
