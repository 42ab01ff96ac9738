"""What a recorded run says about itself (`RunInfo`): plain data, as the store keeps it and `runs list` shows it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

RUN_FIELDS = (
    "id",
    "name",
    "time",
    "kweval_version",
    "dataset_sha256",
    "inputs_sha256",
    "layout",
    "per_document",
    "data",
    "protocol",
    "aggregate",
    "options",
    "models",
    "metrics",
    "n_rows",
    "arguments",
    "card",
)
_JSON = ("per_document", "options", "models", "metrics", "n_rows", "arguments", "card")


@dataclass(frozen=True)
class RunInfo:
    """One recorded evaluation.

    - ``dataset_sha256``: the reference the models were scored against (`kweval.runs.record.reference_hash`: the
      units scored and their ground truth), the same for two runs of different models or options on the same data;
      runs are paired on it.
    - ``inputs_sha256``: the files read, predictions included (`kweval.io.card.dataset_hash`, the protocol card's):
      what `runs rerun` checks for "the data is unchanged".
    - ``options``: every option that changes a number (`EvalOptions.as_dict`, and under a keyphrase preset its k);
      ``protocol`` and ``aggregate`` beside them.
    - ``arguments``: the `kweval evaluate` arguments that evaluate it again (None: not re-runnable, e.g. uploaded
      tables).
    """

    id: str
    name: str
    time: str  # ISO 8601, UTC
    kweval_version: str
    dataset_sha256: str
    inputs_sha256: str
    layout: str
    per_document: bool
    data: str
    protocol: str
    aggregate: str
    options: dict = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    n_rows: int = 0
    arguments: list[str] | None = None
    card: dict = field(default_factory=dict)

    def row(self) -> list[str]:
        """The stored form of each of `RUN_FIELDS` (JSON where the value is not text)."""
        return [
            json.dumps(getattr(self, name), sort_keys=True) if name in _JSON else getattr(self, name)
            for name in RUN_FIELDS
        ]

    @classmethod
    def from_row(cls, row: tuple) -> RunInfo:
        values = {name: json.loads(v) if name in _JSON and v is not None else v for name, v in zip(RUN_FIELDS, row)}
        return cls(**values)

    def as_dict(self) -> dict:
        """Every field as plain JSON-ready data (`runs list --format json`)."""
        return asdict(self)

    @property
    def settings(self) -> dict[str, object]:
        """What changes a number: the protocol, the aggregation and every option (`option_changes` compares them)."""
        return {"protocol": self.protocol, "aggregate": self.aggregate, **self.options}

    @property
    def short_time(self) -> str:
        """The time to the second, as people read it (`2025-01-31 14:05:09`, UTC)."""
        return self.time[:19].replace("T", " ")


def option_changes(before: RunInfo, after: RunInfo) -> dict[str, tuple[object, object]]:
    """{setting: (value before, value after)} of every setting that differs between two runs."""
    a, b = before.settings, after.settings
    return {k: (a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)}


def changes_text(changes: dict[str, tuple[object, object]]) -> str:
    """`k 5→10; match approx→stem`, or `none`."""
    return "; ".join(f"{k} {_plain(a)}→{_plain(b)}" for k, (a, b) in changes.items()) or "none"


def _plain(value: object) -> str:
    return "—" if value is None else str(value)
