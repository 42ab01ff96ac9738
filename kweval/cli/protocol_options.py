"""The full CLI's options under `--protocol pke|kpeval|meng`: each one applied or refused in one line.

The presets fix their tools' conventions, so an option that would change one
(`--aggregate`, `--match`, `--gain`, ...) or add metrics the presets do not
compute (`--semantic`, `--sentiment`, `--legacy`) is refused; selections
(`--models`, `--movies`), `--fail-under` and `--per-review` are applied.
Plain Python until a table is written: the fast path imports neither pandas
nor numpy.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence


class ProtocolOptionError(Exception):
    """An option that the preset cannot honour (a usage error, exit 2)."""


# option -> (attribute, the value it has when not given)
_NOT_GIVEN: dict[str, tuple[str, object]] = {
    "--aggregate": ("aggregate", None),
    "--match": ("match", None),
    "--semantic": ("semantic", False),
    "--sentiment": ("sentiment", False),
    "--legacy": ("legacy", False),
    "--scheduler": ("scheduler", None),
    "--columns": ("columns", None),
    "--ci": ("ci", None),
}
# option -> attribute, refused when it differs from the kweval default (they change only kweval's own metrics)
_KWEVAL_ONLY = {
    "--gt-order": "gt_order",
    "--gain": "gain",
    "--discount": "discount",
    "--threshold": "threshold",
    "--embedding-model": "embedding_model",
    "--embedding-backend": "embedding_backend",
}


def refuse_options(args: argparse.Namespace, protocol: str) -> None:
    """Raise ProtocolOptionError naming the first option given that the preset `protocol` does not apply."""
    why = f"--protocol {protocol} fixes its tool's conventions (docs/protocols.md); run without"
    for option, (attribute, absent) in _NOT_GIVEN.items():
        value = getattr(args, attribute, absent)
        if value != absent:
            raise ProtocolOptionError(f"{option}: {why} it, or with --protocol kweval")
    if getattr(args, "missing", "auto") == "skip":
        raise ProtocolOptionError(f"--missing skip: --protocol {protocol} scores a document without predictions 0")
    for option, attribute in (("--no-keyphrase", "keyphrase"), ("--no-present", "present")):
        if getattr(args, attribute, None) is False:
            raise ProtocolOptionError(f"{option}: --protocol {protocol} always reports its keyphrase metrics")
    if not any(hasattr(args, attribute) for attribute in _KWEVAL_ONLY.values()):
        return  # the fast parser's namespace: none of these options exist there (and numpy stays unimported)
    from kweval.cli.common import DEFAULTS

    for option, attribute in _KWEVAL_ONLY.items():
        value = getattr(args, attribute, getattr(DEFAULTS, attribute))
        if value != getattr(DEFAULTS, attribute):
            raise ProtocolOptionError(f"{option}: {why} it, or with --protocol kweval")


def selected_models(predictions: Sequence[tuple[str, str]], wanted: Sequence[str] | None) -> list[tuple[str, str]]:
    """The --predictions of the --models asked for (all when none); ProtocolOptionError for an unknown name."""
    if wanted is None:
        return list(predictions)
    names = [name for name, _ in predictions]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise ProtocolOptionError(f"unknown model(s): {', '.join(unknown)} (available: {', '.join(names) or 'none'})")
    return [(name, path) for name, path in predictions if name in set(wanted)]


def check_movies(collection: str, wanted: Sequence[str] | None) -> None:
    """--movies names the collection (the one movie of per-document data); ProtocolOptionError otherwise."""
    unknown = [w for w in wanted or () if w != collection]
    if unknown:
        raise ProtocolOptionError(f"unknown movie(s): {', '.join(unknown)} (available: {collection})")


def failed_thresholds(rows: Sequence[Mapping[str, object]], thresholds: Sequence[tuple[str, float]]) -> list[str]:
    """(--fail-under) one `MODEL: METRIC = VALUE is below MINIMUM` reason per row under its threshold (NaN fails).

    ProtocolOptionError for a metric the preset does not report.
    """
    failures: list[str] = []
    for metric, minimum in thresholds:
        available = [k for k in (rows[0] if rows else {}) if k not in ("movie", "model", "n_documents")]
        if metric not in available:
            raise ProtocolOptionError(f"--fail-under: unknown metric {metric!r} (available: {', '.join(available)})")
        for row in rows:
            value = row.get(metric, math.nan)
            if not (isinstance(value, float) and value >= minimum):
                failures.append(f"{row['model']}: {metric} = {float(value):.6f} is below {minimum}")  # type: ignore[arg-type]
    return failures


def per_document_csv(
    collection: str, per_model: Mapping[str, Mapping[str, Sequence]], raw: bool = False, decimals: int = 6
) -> str:
    """(--per-review) every document × model's scores under the preset as CSV (ids guarded against formulas)."""
    import pandas as pd

    from kweval.io import report

    frames = []
    for model, columns in per_model.items():
        table = pd.DataFrame(dict(columns)).rename(columns={"doc": "review_id"})
        table.insert(0, "movie", collection)
        table.insert(2, "model", model)
        frames.append(table)
    return report.to_csv(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(), decimals, raw=raw)
