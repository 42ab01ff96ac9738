"""The sidebar's selection and its URL query parameters: parsing, defaults, validation.

Defaults are read from the core (`EvalOptions()`, `AGGREGATIONS`,
`MATCH_MODES`) rather than restated; an invalid URL value is skipped with a
note the page shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kweval.embeddings.semantic import BACKENDS as EMBEDDING_BACKENDS
from kweval.evaluation.options import default_match
from kweval.evaluation.pipeline import AGGREGATIONS, EvalOptions
from kweval.keyphrase.protocols import PROTOCOLS as PRESETS
from kweval.text.matching import MATCH_MODES

AGG_DEFAULT = AGGREGATIONS[0]
MATCH_DEFAULT = default_match(False)  # movie-level data's; per-document data's is default_match(True): stem
K_DEFAULT = EvalOptions.k
K_MAX = 50  # the sidebar's k range
TAU_DEFAULT = EvalOptions.threshold  # docs/metrics.md's default cosine threshold
BACKEND_DEFAULT = EvalOptions.embedding_backend
TAU_MIN, TAU_MAX, TAU_STEP = 0.50, 0.95, 0.01  # the sidebar slider's range
PROTOCOLS = tuple(PRESETS)  # kweval, pke, kpeval, meng: the CLI's --protocol choices (kweval.cli.fast.PRESETS)
PROTOCOL_DEFAULT = PROTOCOLS[0]


@dataclass(frozen=True)
class Selection:
    """What the sidebar selects; it round-trips through the URL query parameters.

    `semantic` / `threshold` / `sentiment` are the optional semantic and
    sentiment metrics of docs/metrics.md (URL ``sem=1``, ``tau=0.75``, ``sas=1``);
    `present` the present/absent split (``present=1``; on by default for per-document GT);
    `backend` the embedding backend of the semantic metrics (``backend=onnx-int8``);
    `grounding` the metrics beyond the reference list, grounding and diversity (``grd=1``, docs/metrics.md §12);
    `protocol` the keyphrase preset of Summary and Compare on per-document data (``protocol=pke``), carried by every
    page's links like the rest; None on movie-level data, which has no such parameter.
    """

    movie: str
    models: tuple[str, ...]
    k: int = K_DEFAULT
    agg: str = AGG_DEFAULT
    match: str = MATCH_DEFAULT
    semantic: bool = False
    threshold: float = TAU_DEFAULT
    sentiment: bool = False
    present: bool = False
    backend: str = BACKEND_DEFAULT
    grounding: bool = False
    protocol: str | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    def params(self) -> dict[str, str]:
        protocol = {} if self.protocol is None else {"protocol": self.protocol}
        return {
            "movie": self.movie,
            "models": ",".join(self.models),
            "k": str(self.k),
            "agg": self.agg,
            "match": self.match,
            "sem": "1" if self.semantic else "0",
            "tau": format_tau(self.threshold),
            "sas": "1" if self.sentiment else "0",
            "present": "1" if self.present else "0",
            "backend": self.backend,
            "grd": "1" if self.grounding else "0",
            **protocol,
        }


SELECTION_KEYS = ("movie", "models", "k", "agg", "match", "sem", "tau", "sas", "present", "backend", "grd")
_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"0", "false", "off", "no"})


def parse_protocol(raw: str) -> str | None:
    """One of `PROTOCOLS`, else None."""
    return raw if raw in PROTOCOLS else None


def format_tau(tau: float) -> str:
    """The threshold as the URL writes it (two decimals: the slider's step)."""
    return f"{float(tau):.2f}"


def parse_flag(raw: str) -> bool | None:
    """``1/true/on/yes`` → True, ``0/false/off/no`` → False (any case), else None."""
    text = str(raw).strip().casefold()
    return True if text in _TRUE else False if text in _FALSE else None


def parse_tau(raw: str) -> float | None:
    """A threshold within the slider's range, rounded to its step; else None."""
    try:
        tau = round(float(raw), 2)
    except (TypeError, ValueError):
        return None
    return tau if TAU_MIN <= tau <= TAU_MAX else None  # NaN fails both comparisons


def _first(value: object) -> str | None:
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else None
    return None if value is None else str(value)


def param_parsers(movies: Sequence[str], models: Sequence[str]) -> dict[str, Callable[[str], Any]]:
    """Per sidebar URL parameter: its text -> the value it selects, or None when the text cannot be used."""

    def parse_movie(raw: str) -> str | None:
        return raw if raw in movies or raw == "ALL" else None

    def parse_models(raw: str) -> tuple[str, ...] | None:
        chosen = [m for m in dict.fromkeys(s.strip() for s in raw.split(",")) if m in models]
        return tuple(chosen) or None

    def parse_k(raw: str) -> int | None:
        try:
            k = int(raw)
        except ValueError:
            return None
        return k if 1 <= k <= K_MAX else None

    return {
        "movie": parse_movie,
        "models": parse_models,
        "k": parse_k,
        "agg": lambda r: r if r in AGGREGATIONS else None,
        "match": lambda r: r if r in MATCH_MODES else None,
        "sem": parse_flag,
        "tau": parse_tau,
        "sas": parse_flag,
        "present": parse_flag,
        "backend": lambda r: r if r in EMBEDDING_BACKENDS else None,
        "grd": parse_flag,
    }


def selection_defaults(movies: Sequence[str], models: Sequence[str], present_default: bool = False) -> dict[str, Any]:
    """Per sidebar URL parameter: the value used when neither the URL nor the session holds a usable one.
    `present_default`: the data's GT is per document, which turns the present/absent split on and makes the match
    mode the field's (`kweval.evaluation.options.default_match`: stem; approx on movie-level GT), as the CLI's."""
    return {
        "movie": "ALL",  # the answer at a glance: every movie (issue 23)
        "models": tuple(models),
        "k": K_DEFAULT,
        "agg": AGG_DEFAULT,
        "match": default_match(present_default),
        "sem": False,
        "tau": TAU_DEFAULT,
        "sas": False,
        "present": present_default,
        "backend": BACKEND_DEFAULT,
        "grd": False,
    }


def resolve_selection(
    sources: Sequence[Mapping[str, object]],
    movies: Sequence[str],
    models: Sequence[str],
    present_default: bool = False,
) -> Selection:
    """The selection from the first source that holds a valid value for each key (URL first, then session).

    Invalid values are skipped with a note (shown to the user); defaults
    (`selection_defaults`): ``ALL`` (every movie),
    every model, k=5, macro, the data's match mode (stem on per-document GT, else approx), semantic and sentiment
    off, threshold 0.75, the present/absent split `present_default` (the data's: on for per-document GT).
    """
    notes: list[str] = []
    parsers = param_parsers(movies, models)
    defaults = selection_defaults(movies, models, present_default)

    def pick(key: str) -> Any:
        for src in sources:
            raw = _first(src.get(key))
            if raw is None or raw == "":
                continue
            value = parsers[key](raw)
            if value is None:
                notes.append(f"ignored {key}={raw!r}")
                continue
            return value
        return defaults[key]

    values = [pick(key) for key in SELECTION_KEYS]
    return Selection(*values, notes=tuple(notes))  # SELECTION_KEYS is Selection's field order
