"""Raw responses in prediction files: a JSONL line ``{"id": ..., "response": "<the model's raw text>"}``.

`kweval.data.predictions` reads such a line through `kweval.data.responses`
(`parse_value`) and keeps, per file, a `ResponseTally`: how many responses
each decision read, and what was wrong with the others (not a string, too
long, control or bidi characters), each said in one line (`problems`), and,
when asked, every response with its parse (`records`: `Dataset.responses`,
what the explorer shows beside the parsed list and `kweval parse` writes).
Every document with a response is evaluated: an abstention, an empty or an
unparseable response is an empty list, which scores 0 and is counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kweval.data.dataset import Problem
from kweval.data.response_rules import DECISIONS, MAX_RESPONSE_CHARS, NO_LIST
from kweval.data.responses import Parsed, parse_response

if TYPE_CHECKING:  # pandas only where a table is made: the --protocol path reads responses without it
    import pandas as pd

RESPONSE_KEY = "response"
RESPONSE_COLUMNS = ["movie", "review_id", "model", "response", "parse", "keyphrases", "sections", "notes"]


def parse_value(value: object) -> Parsed:
    """The parse of a JSONL line's ``response`` value: `parse_response` of a string, unparseable for anything else."""
    if not isinstance(value, str):
        return Parsed((), "unparseable", notes=(f"the response is not a string ({type(value).__name__})",))
    return parse_response(value)


@dataclass
class ResponseTally:
    """What one file's responses were read as: counts per decision and per fault, and (`keep`) every record."""

    keep: bool = False
    decisions: Counter = field(default_factory=Counter)
    not_text: list[int] = field(default_factory=list)  # line numbers
    too_long: list[int] = field(default_factory=list)
    controls: list[int] = field(default_factory=list)
    records: list[tuple] = field(default_factory=list)  # RESPONSE_COLUMNS tuples when `keep`

    def add(self, parsed: Parsed, value: object, number: int, movie: str | None, doc: str, model: str) -> None:
        """Count one evaluated response (line `number`) and keep its record when asked."""
        self.decisions[parsed.decision] += 1
        if not isinstance(value, str):
            self.not_text.append(number)
        elif len(value) > MAX_RESPONSE_CHARS:
            self.too_long.append(number)
        if parsed.controls:
            self.controls.append(number)
        if self.keep:
            text = value if isinstance(value, str) else repr(value)[:200]
            self.records.append(
                (movie, doc, model, text, parsed.decision, parsed.keyphrases, parsed.sections, parsed.notes)
            )

    def problems(self, source: str, model: str) -> list[Problem]:
        """One line with the counts per decision (when the file held responses), one per kind of fault."""
        total = sum(self.decisions.values())
        if not total:
            return []
        counts = ", ".join(f"{self.decisions[d]} {d}" for d in DECISIONS if self.decisions[d])
        none = sum(self.decisions[d] for d in NO_LIST)
        empty = f"; the {none} {'/'.join(NO_LIST)} one(s) are empty lists (each scores 0 and is counted)"
        out = [Problem(source, f"{total} raw response(s) of {model} read: {counts}" + (empty if none else ""))]
        for lines, what in (
            (self.not_text, "not a string: read as unparseable"),
            (self.too_long, f"over {MAX_RESPONSE_CHARS:,} characters: not read (unparseable)"),
            (self.controls, "with control or bidi characters: removed before reading"),
        ):
            if lines:
                out.append(Problem(source, f"{len(lines)} response(s) {what} (e.g. line {lines[0]})"))
        return out


def responses_frame(records: list[tuple], rows: pd.DataFrame) -> pd.DataFrame:
    """The records (`RESPONSE_COLUMNS` tuples) of the documents `rows` kept (prediction rows of the same file, their
    movies resolved): a record without a movie takes its document's."""
    import pandas as pd

    frame = pd.DataFrame(records, columns=RESPONSE_COLUMNS)
    movie_of = dict(zip(rows["review_id"], rows["movie"]))
    frame["movie"] = [m if m is not None else movie_of.get(d) for m, d in zip(frame["movie"], frame["review_id"])]
    kept = set(zip(rows["movie"], rows["review_id"]))
    inside = [pair in kept for pair in zip(frame["movie"], frame["review_id"])]
    return frame[inside].reset_index(drop=True)
