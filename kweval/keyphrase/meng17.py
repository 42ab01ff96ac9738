"""The processing behind OpenNMT-kpg's published dataset statistics (`meng17` tokens, then the `split` check).

OpenNMT-kpg's README gives, per dataset, #documents, #keyphrases and how many
are present in their document.  Those counts come from its data converter run
with the test parameters (`-lower -tokenizer meng17 -replace_digit`) and its
evaluation's presence check on the converted tokens, not from the `\\W` split
its evaluation uses on raw text (the `meng` preset).  The rule, restated
from its documentation and behaviour (docs/protocols.md, "Dataset statistics"):

1. keyphrases: every shortest bracketed span `( )`, `[ ]`, `{ }` is deleted;
2. title, abstract and each keyphrase are lower-cased and tokenised apart:
   `\\r`, `\\n`, `\\t` become spaces; each of `_ < > , ( ) . ' %` becomes a
   token of its own; every other character outside ASCII letters, digits
   and `# & + *` separates tokens (so `-`, `/`, `:` and non-ASCII split);
3. a token of two or more digits becomes `<digit>`;
4. the document is the title's tokens, a `.` token, the abstract's tokens;
5. a keyphrase is present when its lower-cased Porter stems occur as
   consecutive stems of the document, punctuation tokens included (a
   keyphrase left without tokens counts as present, as in the tool).

Written from that description for kweval; no code of OpenNMT-kpg is used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kweval.keyphrase.protocols import stem_words

DIGIT = "<digit>"
TITLE_SEPARATOR = "."  # the token the converter puts between the title's tokens and the abstract's
_OWN_TOKEN_CHARACTERS = "_<>,().'%"  # each one a token of its own
_WORD_CHARACTERS = "a-zA-Z0-9#&+*"  # with the characters above: everything else separates tokens
_CONTROL = re.compile(r"[\r\n\t]")
_OWN_TOKEN = re.compile("[" + re.escape(_OWN_TOKEN_CHARACTERS) + "]")
_SEPARATOR = re.compile("[^" + _WORD_CHARACTERS + re.escape(_OWN_TOKEN_CHARACTERS) + "]")
_BRACKETED = re.compile(r"\(.*?\)|\[.*?\]|\{.*?\}")  # the shortest span of each kind
_NUMBER = re.compile(r"[0-9]{2,}")


def tokens(text: str) -> list[str]:
    """Steps 2 and 3 on one field: lower-case, pad the own-token characters, split, `<digit>` for 2+ digits."""
    padded = _OWN_TOKEN.sub(lambda m: f" {m.group(0)} ", _CONTROL.sub(" ", text.lower()))
    return [DIGIT if _NUMBER.fullmatch(t) else t for t in _SEPARATOR.split(padded) if t]


def without_brackets(phrase: str) -> str:
    """Step 1: the keyphrase with every shortest bracketed span deleted (`reed elsevier (uk) limited` ->
    `reed elsevier  limited`)."""
    return _BRACKETED.sub("", phrase)


def keyphrase_tokens(phrase: str) -> list[str]:
    """A keyphrase's tokens (steps 1-3)."""
    return tokens(without_brackets(phrase))


def document_tokens(title: str, abstract: str) -> list[str]:
    """Step 4: title tokens, `.`, abstract tokens (a document without a title still gets the `.`)."""
    return tokens(title) + [TITLE_SEPARATOR] + tokens(abstract)


def occurs(document: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether `phrase` is a run of consecutive items of `document` (an empty phrase is everywhere)."""
    n = len(phrase)
    if n == 0:
        return True
    first = phrase[0]
    return any(document[i] == first and list(document[i : i + n]) == list(phrase) for i in range(len(document) - n + 1))


def present_flags(title: str, abstract: str, keyphrases: Sequence[str]) -> list[bool]:
    """Step 5 for one document: whether each keyphrase is present (stems of tokens, punctuation included)."""
    document = stem_words(document_tokens(title, abstract))
    return [occurs(document, stem_words(keyphrase_tokens(k))) for k in keyphrases]
