"""The in-memory dataset: five plain tables plus the list of problems met while loading.

Every reader (DNLP pickles, tidy Parquet/CSV, the embedded demo) produces a
`Dataset`; everything downstream (evaluation, CLI, dashboard) reads only this.
Predictions keep their *raw* entries (keyword as given, score as given or NaN)
so that cleaning happens in one place (`kweval.evaluate`) and legacy mode can
replay the notebooks on the very same cells.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported where a table is made: `Problem` alone stays light (the --protocol path)
    import pandas as pd

# Column layout of each table.  Readers must produce exactly these columns
# (extra review columns such as `date` are allowed and kept).
MOVIE_COLUMNS = ["movie", "title"]
REVIEW_COLUMNS = ["movie", "review_id", "text", "title", "rating"]
PREDICTION_COLUMNS = ["movie", "review_id", "model", "rank", "keyword", "score"]
GROUND_TRUTH_COLUMNS = ["movie", "rank", "keyword", "helpful", "not_helpful"]
MODEL_COLUMNS = ["model", "score_direction"]

SCORE_DIRECTIONS = ("higher", "lower")
KEY = ["movie", "review_id", "model"]  # one evaluated list: a review × model pair


@dataclass(frozen=True)
class Problem:
    """Something that was skipped or cleaned while loading or evaluating.

    `source` names the file, movie or cell; `reason` says what was wrong;
    `stage` is "load" (found by a reader) or "evaluate" (found by `evaluate`).
    """

    source: str
    reason: str
    stage: str = "load"

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


def has_surrogates(text: str) -> bool:
    """Whether `text` holds lone surrogates (bytes that were not UTF-8, or a JSON `\\udc80`): no file can store it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def text_of(value: str, replaced: list[int]) -> str:
    """`value` with each lone surrogate replaced by U+FFFD (counted in `replaced`), so every table can store it."""
    if not has_surrogates(value):
        return value
    replaced[0] += 1
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def texts_of(value: object, replaced: list[int]) -> object:
    """A decoded JSON value with `text_of` applied to every string in it (keys and items, however deep)."""
    if isinstance(value, str):
        return text_of(value, replaced)
    if isinstance(value, list):
        return [texts_of(v, replaced) for v in value]
    if isinstance(value, dict):
        return {texts_of(k, replaced): texts_of(v, replaced) for k, v in value.items()}
    return value


def duplicate_lists_problem(source: str, n_lists: int, n_rows: int | None = None) -> Problem:
    """The problem every reader reports for review × model lists given more than once.

    The rule, the same in every layout: the first list of a review × model
    pair (in file order) is kept, later ones are dropped.
    """
    rows = "" if n_rows is None else f" ({n_rows} row(s))"
    return Problem(
        source,
        f"{n_lists} review × model list(s) given more than once: the first of each kept, the later one(s){rows} "
        f"dropped",
    )


@dataclass
class Dataset:
    """Reviews, model predictions and ranked ground truth, as tidy tables.

    - ``movies``: movie (str id), title (str).
    - ``reviews``: movie, review_id (str), text (str), title (str or NA),
      rating (float or NaN), plus any extra columns a reader found.
    - ``predictions``: one row per raw predicted entry: movie, review_id,
      model, rank (0-based position in the model's list, int), keyword (str,
      or None where the entry had no string keyword), score (float; NaN where
      missing or non-numeric).  A review × model pair is *evaluated* iff it
      has at least one row; a model that returned an empty list is recorded as
      one row with ``keyword=None``.  Pairs without rows are *skipped*.
    - ``ground_truth``: movie, rank (0-based, file order), keyword,
      helpful, not_helpful (float or NaN).
    - ``models``: model, score_direction ("higher" or "lower").
    - ``problems``: everything skipped while loading, each with its reason.
    - ``responses``: None, or one row per raw model response read into its
      predictions (`kweval.data.response_lines.RESPONSE_COLUMNS`: the text, the
      parser's decision, phrases, sections and notes), for the explorer.
    """

    movies: pd.DataFrame
    reviews: pd.DataFrame
    predictions: pd.DataFrame
    ground_truth: pd.DataFrame
    models: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    source: str = ""
    responses: pd.DataFrame | None = None

    @property
    def movie_ids(self) -> list[str]:
        return self.movies["movie"].tolist()

    @property
    def model_names(self) -> list[str]:
        return self.models["model"].tolist()

    @property
    def per_document(self) -> bool:
        """Whether some review has its own GT list (keyphrase benchmarks) rather than only its movie's."""
        gt = self.ground_truth
        return "review_id" in gt.columns and bool(gt["review_id"].notna().any())

    def unit_names(self) -> tuple[str, str]:
        """What to call a movie and a review for this data: ("Collection", "Document") for per-document GT
        (`kweval.data.vocabulary.vocabulary` has every word)."""
        from kweval.data.vocabulary import vocabulary

        words = vocabulary(self)
        return words.movie, words.review

    def score_directions(self) -> dict[str, str]:
        """{model: "higher" or "lower"}: which end of each model's scores is better (from its models table or its
        predictions file's ``score_direction``; higher where nothing said); the weighted metrics order by it."""
        return {str(m): str(d) for m, d in zip(self.models["model"], self.models["score_direction"])}

    def content_hash(self) -> str:
        """A stable content hash (every table's values and columns, problems, source): the dashboard's cache key."""
        import pandas as pd

        h = hashlib.sha256()
        for name in ("movies", "reviews", "predictions", "ground_truth", "models"):
            frame: pd.DataFrame = getattr(self, name)
            h.update(name.encode())
            h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
            h.update(str(len(frame)).encode())
            if len(frame):
                # object columns may mix None/str/float: hash their string form so any cell content works
                safe = frame.copy()
                for col in safe.columns:
                    if safe[col].dtype == object:
                        safe[col] = safe[col].map(
                            lambda v: (
                                "\x00<NA>"
                                if v is None or (isinstance(v, float) and v != v)
                                else f"{type(v).__name__}:{v}"
                            )
                        )
                h.update(pd.util.hash_pandas_object(safe, index=False).to_numpy().tobytes())
        h.update(repr([str(p) for p in self.problems]).encode())
        h.update(str(self.source).encode())
        return h.hexdigest()

    def subset(self, movies: list[str] | None = None, models: list[str] | None = None) -> Dataset:
        """The same dataset restricted to some movies and/or models."""
        mv = self.movies
        rv = self.reviews
        pr = self.predictions
        gt = self.ground_truth
        md = self.models
        rs = self.responses
        if movies is not None:
            keep = set(movies)
            mv = mv[mv["movie"].isin(keep)]
            rv = rv[rv["movie"].isin(keep)]
            pr = pr[pr["movie"].isin(keep)]
            gt = gt[gt["movie"].isin(keep)]
            rs = None if rs is None else rs[rs["movie"].isin(keep)]
        if models is not None:
            keep = set(models)
            md = md[md["model"].isin(keep)]
            pr = pr[pr["model"].isin(keep)]
            rs = None if rs is None else rs[rs["model"].isin(keep)]
        return Dataset(
            movies=mv.reset_index(drop=True),
            reviews=rv.reset_index(drop=True),
            predictions=pr.reset_index(drop=True),
            ground_truth=gt.reset_index(drop=True),
            models=md.reset_index(drop=True),
            problems=list(self.problems),
            source=self.source,
            responses=None if rs is None else rs.reset_index(drop=True),
        )
