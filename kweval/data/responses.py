"""Raw model responses read as keyphrase lists: one table of rules (`RULES`), each row with its test vector.

A language model asked for keyphrases answers in free text: reasoning
blocks, JSON in code fences, numbered lists with explanations, present and
absent sections, refusals.  `parse_response` reads one answer into a list
and says which rule decided it (`Parsed.decision`, one of `DECISIONS`):

- the response rules (side ``response``) are tried in the table's order, the
  first that applies decides;
- the item rules (side ``item``) clean every phrase a list, section or line
  rule found.

An `abstention` (a refusal, "none", an empty JSON list) is an empty list
counted apart from an `empty` or `unparseable` response; all three score 0
where the document is evaluated.  Plain Python (no numpy): the `--protocol`
path reads responses too.  tests/test_responses.py runs every row's example.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from kweval.data.response_rules import (
    JSON_ITEM_FIELDS,
    JSON_LIST_FIELDS,
    MAX_PHRASE_WORDS,
    MAX_RESPONSE_CHARS,
    SECTION_NAMES,
)


@dataclass(frozen=True)
class Parsed:
    """One response read: its phrases in order, the decision (`DECISIONS`), each phrase's section (present/absent,
    when the response had sections) and what the parser removed or dropped, in words."""

    keyphrases: tuple[str, ...]
    decision: str
    sections: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    controls: int = 0  # control or bidi characters removed from the response


_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.S | re.I)
_CLOSE_ONLY = re.compile(r"\A.*?</(?:think|thinking|reasoning)>", re.S | re.I)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\n(.*?)```", re.S)
_MARKER = re.compile(r"^\s*(?:\d{1,3}[.)]|\(\d{1,3}\)|[-*•+‣◦▪])\s+(.*)$")
_HEADING = re.compile(
    r"^\s*(#{1,6}\s*)?([*_]{0,2})(present|absent)(?:[ -]+(?:key[ -]?phrases?|key[ -]?words?|phrases?|terms?))?"
    r"(?:\s*\([^)]{0,20}\))?\s*[*_]{0,2}\s*(?::\s*[*_]{0,2}\s*(.*))?$",
    re.I,
)
_INLINE_ITEM = re.compile(r"(?:(?<=:)|(?<=\S))\s+(?=\d{1,3}[.)]\s+\S)")
_LABEL = re.compile(
    r"^\s*[*_]{0,2}\s*(?:key[ -]?phrases|key[ -]?words|keyphrase|keyword|tags)\s*[*_]{0,2}\s*:\s*", re.I
)
_BOLD_TERM = re.compile(r"^\s*(\*\*|__)(.+?)\1\s*:\s*\S")
_SHORT_TERM = re.compile(r"^([^:]{1,60}):\s+\S.*$")
_DASH_EXPLANATION = re.compile(r"\s+[-–—]\s+")
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_QUOTES = "\"'“”‘’«»„`"
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
_UNDERSCORE_EMPHASIS = re.compile(r"(?<!\w)_(.+?)_(?!\w)")
_NONE_ANSWERS = {
    "none",
    "n/a",
    "na",
    "nothing",
    "null",
    "no keyphrases",
    "no keywords",
    "no key phrases",
    "no keyphrases found",
    "no keywords found",
    "none found",
    "no relevant keyphrases",
    "there are no keyphrases",
    "there are no keywords",
}
_REFUSAL = re.compile(
    r"^\s*(?:i'?m sorry|i am sorry|sorry|i cannot|i can ?not|i can't|i can’t|i am unable|i'?m unable|i won'?t|"
    r"as an ai|unfortunately|i'?m not able|i am not able)\b",
    re.I,
)
_REMARK_END = re.compile(r"[.!?]\s*$")


def parse_response(text: str) -> Parsed:
    """The keyphrase list of one raw response, by the first response rule of `RULES` that applies.

    >>> parse_response("Here are the keyphrases:\\n1. **Sign problem**: the main obstacle\\n2. fermions").keyphrases
    ('Sign problem', 'fermions')
    >>> parse_response("I'm sorry, I can't help with that.").decision
    'abstention'
    """
    notes: list[str] = []
    if len(text) > MAX_RESPONSE_CHARS:
        return Parsed((), "unparseable", notes=(f"over {MAX_RESPONSE_CHARS:,} characters: not read",))
    body, controls = _CONTROLS.subn("", text) if not text.isascii() or not text.isprintable() else (text, 0)
    if controls:
        notes.append(f"{controls} control or bidi character(s) removed")
    body = _without_reasoning(body, notes)
    if not body.strip():
        return Parsed((), "empty", notes=tuple(notes), controls=controls)
    found = _json(body, notes) or _sections(body, notes) or _listed(body, notes)
    if found is None and _is_abstention(body):
        return Parsed((), "abstention", notes=tuple(notes), controls=controls)
    found = found or _line(body, notes)
    if found is None or found[1] == "unparseable":
        return Parsed((), "unparseable", notes=tuple(notes), controls=controls)
    phrases, decision, sections = found
    return _cleaned(phrases, decision, sections, notes, controls)


def _without_reasoning(text: str, notes: list[str]) -> str:
    """`text` without its reasoning blocks (rule "reasoning")."""
    if "</" not in text and "<" not in text:  # no tag: nothing to remove (the common case, without a regex)
        return text
    body, n = _THINK.subn("", text)
    body, m = _CLOSE_ONLY.subn("", body, count=1)
    if n + m:
        notes.append(f"{n + m} reasoning block(s) removed")
    return body


_Found = tuple[list[str], str, list[str] | None]


def _json(body: str, notes: list[str]) -> _Found | None:
    """Rules "json", "json fence", "json sections": (phrases, "json", sections) or None (no JSON list here)."""
    stripped = body.strip()
    candidates = [stripped] if stripped[:1] in "[{" else []
    candidates += [m.group(1).strip() for m in _FENCE.finditer(body)] if "```" in body else []
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        found = _json_lists(value) or ([], "unparseable", None)  # JSON, but no list of phrases in it
        notes.append("read as JSON" + (" (in a code fence)" if candidate != stripped else ""))
        return found
    return None


def _json_phrases(items: list, phrases: list[str]) -> int:
    """Append the phrases of a JSON list to `phrases`; how many items were not phrases."""
    got = _json_items(items)
    phrases += got
    return len(items) - len(got)


def _json_lists(value: object) -> _Found | None:
    """(phrases, "json", sections) of a decoded JSON value: an array, or an object's list field(s); None otherwise."""
    lists = {"": value} if isinstance(value, list) else {}
    if isinstance(value, dict):
        lists = {str(k): v for k, v in value.items() if isinstance(v, list)}
    sided = {k: v for k, v in lists.items() if k.lower().split("_")[0] in SECTION_NAMES}
    if not (sided and len(sided) == len(lists)):
        named = next((k for k in JSON_LIST_FIELDS if k in lists), None)
        if len(lists) != 1 and named is None:
            return None
        sided = {"": lists[named] if named is not None else next(iter(lists.values()))}
    phrases: list[str] = []
    sections: list[str] = []
    dropped = 0
    for key, items in sided.items():
        before = len(phrases)
        dropped += _json_phrases(items, phrases)
        sections += [key.lower().split("_")[0]] * (len(phrases) - before)
    decision = "unparseable" if dropped and not phrases else "json"
    return phrases, decision, sections if sided.keys() != {""} else None


def _json_items(items: list) -> list[str]:
    """The strings of a JSON list, or each object's `JSON_ITEM_FIELDS` string; anything else is dropped."""
    out = []
    for item in items:
        if isinstance(item, dict):
            item = next((item[k] for k in JSON_ITEM_FIELDS if isinstance(item.get(k), str)), None)
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
    return out


def _sections(body: str, notes: list[str]) -> _Found | None:
    """Rule "sections": the phrases under each Present/Absent heading, in order, with their section."""
    lines = body.splitlines()
    lowered = body.lower()
    if ("present" not in lowered and "absent" not in lowered) or not any(map(_heading, lines)):
        return None
    phrases: list[str] = []
    sections: list[str] = []
    current: str | None = None
    block: list[str] = []

    def close() -> None:
        if current is not None:
            got = _block_items(block)
            phrases.extend(got)
            sections.extend([current] * len(got))

    for line in lines:
        heading = _heading(line)
        if heading:
            close()
            current, block = heading.group(3).lower(), [heading.group(4) or ""]
        else:
            block.append(line)
    close()
    notes.append("read by sections")
    return phrases, "sections", sections


def _heading(line: str) -> re.Match[str] | None:
    """A Present/Absent heading: with a colon, or alone on a Markdown heading or bold line."""
    found = _HEADING.match(line)
    return found if found and (found.group(4) is not None or found.group(1) or found.group(2)) else None


def _block_items(block: list[str]) -> list[str]:
    """The phrases of one section's lines: its marked items, else its phrase lines, else its one separated line."""
    marked = [m.group(1) for line in block if (m := _MARKER.match(line))]
    if marked:
        return marked
    rest = [line.strip() for line in block if line.strip() and not _is_none(line)]
    if len(rest) == 1:
        return _split_line(rest[0])
    return [line for line in rest if not _is_remark(line)]


def _listed(body: str, notes: list[str]) -> _Found | None:
    """Rules "numbered", "bulleted", "preamble": the marked lines' texts (None when no line is marked)."""
    lines = [piece for line in body.splitlines() for piece in _inline_items(line) if piece.strip()]
    items = [m.group(1) for line in lines if (m := _MARKER.match(line))]
    if not items:
        return None
    if len(items) < len(lines):
        notes.append(f"{len(lines) - len(items)} line(s) not numbered or bulleted (preamble, remarks) not items")
    return items, "list", None


def _inline_items(line: str) -> list[str]:
    """A line holding a numbered list ("Here they are: 1. a 2. b") cut before each number; other lines whole."""
    if "1." not in line and "1)" not in line:
        return [line]
    pieces = _INLINE_ITEM.split(line)
    marked = sum(bool(_MARKER.match(p)) for p in pieces)
    after_colon = len(pieces) > 1 and pieces[0].rstrip().endswith(":")
    return pieces if marked >= 2 or (marked and after_colon) else [line]


def _line(body: str, notes: list[str]) -> _Found | None:
    """Rules "line" and "lines": a labelled or single line split at separators, or short lines one phrase each."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    labelled = [_LABEL.sub("", line, count=1) for line in lines if _LABEL.match(line)]
    labelled = [text for text in labelled if text.strip()]
    if labelled:
        if _is_none(labelled[0]):
            return [], "line", None
        pieces = _split_line(labelled[0])
        return (pieces, "line", None) if pieces and all(map(_phrase_like, pieces)) else None
    kept = lines if len(lines) == 1 else [line for line in lines if not line.endswith(":") and not _is_remark(line)]
    if len(kept) < len(lines):
        notes.append(f"{len(lines) - len(kept)} line(s) taken for a preamble or remark, not items")
    if len(kept) == 1:
        pieces = _split_line(kept[0].strip("[]"))
        return (pieces, "line", None) if pieces and all(map(_phrase_like, pieces)) else None
    if kept and all(map(_phrase_like, kept)):
        return kept, "list", None
    return None


def _split_line(text: str) -> list[str]:
    """One line's phrases: split at `;` when it has one, else at `,`."""
    separator = ";" if ";" in text else ","
    return [piece.strip() for piece in text.split(separator) if piece.strip()]


def _words(text: str) -> int:
    return len(text.split())


_SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")


def _phrase_like(text: str) -> bool:
    """A piece a line rule takes for a phrase: a few words, no sentence end inside or at its end."""
    if not 0 < _words(_EMPHASIS.sub("", text)) <= MAX_PHRASE_WORDS or _SENTENCE_BREAK.search(text):
        return False
    return not _REMARK_END.search(text.rstrip(".").strip())


def _is_remark(line: str) -> bool:
    """A closing (or opening) sentence: it ends like a sentence and has several words, or is long."""
    return _words(line) > MAX_PHRASE_WORDS or (_words(line) >= 3 and bool(_REMARK_END.search(line)))


def _bare(text: str) -> str:
    return " ".join(re.sub(r"[^\w/ ]", " ", text.lower()).split())


def _is_none(text: str) -> bool:
    return _bare(_LABEL.sub("", text)) in _NONE_ANSWERS


def _is_abstention(body: str) -> bool:
    """Rule "abstention": a refusal, or a "none" answer (an empty JSON list included)."""
    stripped = body.strip()
    if stripped in ("[]", "{}") or _is_none(stripped):
        return True
    fence = _FENCE.search(body)
    if fence and fence.group(1).strip() in ("[]", "{}"):
        return True
    return bool(_REFUSAL.match(_EMPHASIS.sub("", stripped)))


def _cleaned(phrases: list[str], decision: str, sections: list[str] | None, notes: list[str], controls: int) -> Parsed:
    """The item rules applied to every phrase; phrases left empty are dropped (with their section).  No phrase at
    all is an abstention (an empty JSON list, sections saying none); phrases that all clean to nothing, unparseable."""
    out: list[str] = []
    kept_sections: list[str] = []
    explained = 0
    for i, phrase in enumerate(phrases):
        text, had_explanation = clean_item(phrase) if decision != "json" else (" ".join(phrase.split()), False)
        explained += had_explanation
        if text:
            out.append(text)
            if sections is not None:
                kept_sections.append(sections[i])
    if explained:
        notes.append(f"explanation dropped from {explained} item(s)")
    if not out:
        return Parsed((), "unparseable" if phrases else "abstention", notes=tuple(notes), controls=controls)
    return Parsed(tuple(out), decision, tuple(kept_sections) if sections is not None else None, tuple(notes), controls)


def _has_dash(text: str) -> bool:
    return " -" in text or "–" in text or "—" in text


def clean_item(item: str) -> tuple[str, bool]:
    """(the phrase of one list item, whether an explanation was dropped): the item rules of `RULES` (bold term,
    explanation, emphasis, quotes)."""
    text = item
    explained = False
    bold = _BOLD_TERM.match(text) if ("**" in text or "__" in text) else None
    if bold:
        text, explained = bold.group(2), True
    else:
        parts = _DASH_EXPLANATION.split(text, maxsplit=1) if _has_dash(text) else [text]
        if len(parts) == 2 and parts[0].strip():
            text, explained = parts[0], True
        short = _SHORT_TERM.match(text) if ":" in text else None
        if short and _words(short.group(1)) <= MAX_PHRASE_WORDS // 2 + 2:
            text, explained = short.group(1), True
    if "*" in text or "`" in text or "_" in text:
        text = _UNDERSCORE_EMPHASIS.sub(r"\1", _EMPHASIS.sub("", text))
    text = text.strip().rstrip(".,;:").strip().strip(_QUOTES).strip().rstrip(".,;:").strip()
    return " ".join(text.split()), explained
