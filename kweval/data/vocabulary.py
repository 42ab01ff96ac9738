"""The data's own words, chosen in one place: Movie/Review for movie-level data, Collection/Document per document.

kweval has one engine for both shapes of data (ARCHITECTURE.md): a DNLP-like
dataset has movies whose reviews share the movie's ranked ground truth; a
keyphrase benchmark has collections whose documents each carry their own,
usually unranked, keyphrase list.  Every human-facing header, caption and
sentence (the Markdown/LaTeX/HTML reports, the dashboard's labels) takes its
words from `vocabulary(dataset)`, so the two never mix.

The machine-readable schema does not change with the words: CSV and JSON
columns stay ``movie``, ``review_id``, ``n_reviews`` (docs/output.md says
what they hold for per-document data); only headers meant for people are
renamed (`Vocabulary.header`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pandas as pd


class _Data(Protocol):  # what `vocabulary` reads of a `kweval.data.dataset.Dataset` (which imports this module)
    @property
    def per_document(self) -> bool: ...

    movies: pd.DataFrame


@dataclass(frozen=True)
class Vocabulary:
    """What to call a movie and a review, singular and plural, and whether the GT has ranks worth saying."""

    movie: str  # "Movie" or "Collection"
    review: str  # "Review" or "Document"
    movies: str
    reviews: str
    gt_ranked: bool = True  # False: the GT is a set (keyphrase benchmarks): no "GT rank" is ever shown

    @property
    def per_document(self) -> bool:
        """Whether these are a per-document benchmark's words."""
        return self.review == "Document"

    def count(self, n: int, unit: str = "review") -> str:
        """``"9,362 reviews"`` / ``"1 document"``: a count with the right noun (`unit`: "review" or "movie")."""
        singular, plural = (self.review, self.reviews) if unit == "review" else (self.movie, self.movies)
        return f"{n:,} {(singular if n == 1 else plural).lower()}"

    def header(self, column: str) -> str:
        """A table column's header for people: ``movie`` -> ``collection``, ``n_reviews`` -> ``n_documents`` for
        per-document data; unchanged for movie-level data (and for every other column)."""
        if not self.per_document:
            return column
        return _DOCUMENT_HEADERS.get(column, column)

    def say(self, text: str) -> str:
        """`text`, written with movie-level words, in these words: on per-document data "review" becomes "document"
        and "movie" "collection" (plural and capitals kept: "Reviews" -> "Documents", "per-review" ->
        "per-document"); code spans (`n_reviews`, `--per-review`: names of columns and options) and quoted strings
        ('…', ‘…’, “…”: data) are left as they are.  Unchanged on movie-level data."""
        if not self.per_document:
            return text
        return "".join(part if i % 2 else _WORD.sub(self._replace, part) for i, part in enumerate(_LITERAL.split(text)))

    def _replace(self, found: re.Match[str]) -> str:
        word = found.group(0)
        singular, plural = (
            (self.movie, self.movies) if word.lower().startswith("movie") else (self.review, self.reviews)
        )
        said = plural if word.lower().endswith("s") else singular
        if word.isupper():
            return said.upper()
        return said if word[0].isupper() else said.lower()

    def gt_position(self, rank: int) -> str:
        """How a matched GT keyword's position is said: ``"GT rank 3"`` for ranked GT, ``"in the GT"`` for a set."""
        return f"GT rank {int(rank)}" if self.gt_ranked else "in the GT"


_WORD = re.compile(r"\b(?:movie|review)s?\b", re.IGNORECASE)
_LITERAL = re.compile(
    r"(```[\s\S]*?```|`[^`\n]*`|(?<!\w)'[^'\n]*'(?!\w)|‘[^’\n]*’|“[^”\n]*”)"
)  # fenced code, code spans (within a line: an unpaired backtick does not swallow what follows) and quoted data

MOVIE_WORDS = Vocabulary("Movie", "Review", "Movies", "Reviews")
DOCUMENT_WORDS = Vocabulary("Collection", "Document", "Collections", "Documents", gt_ranked=False)
_DOCUMENT_HEADERS = {
    "movie": "collection",
    "review_id": "document",
    "n_reviews": "n_documents",
    "n_skipped": "n_skipped",
    "reviews": "documents",
    "evaluated_reviews": "evaluated_documents",
    "skipped_reviews": "skipped_documents",
}


def vocabulary_for(per_document: bool, gt_ranked: bool | None = None) -> Vocabulary:
    """The words for data of one shape; `gt_ranked` overrides the shape's usual (per-document GT: unranked)."""
    words = DOCUMENT_WORDS if per_document else MOVIE_WORDS
    if gt_ranked is None or gt_ranked == words.gt_ranked:
        return words
    return Vocabulary(words.movie, words.review, words.movies, words.reviews, gt_ranked=gt_ranked)


def vocabulary(dataset: _Data) -> Vocabulary:
    """The words of `dataset`: Collection/Document when some review has its own GT list (`Dataset.per_document`),
    else Movie/Review; GT ranks are spoken of only when every movie's GT is ranked (the movies table's
    optional ``ranked`` column; absent means ranked)."""
    movies = dataset.movies
    ranked = True
    if "ranked" in movies.columns and len(movies):
        ranked = bool(movies["ranked"].fillna(True).astype(bool).all())
    return vocabulary_for(dataset.per_document, ranked)
