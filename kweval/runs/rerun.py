"""Reproducing a recorded run: what changed since (the data's files, kweval's version), and whether the scores of
the new evaluation are the recorded ones, value for value."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval.runs.record import KEY
from kweval.runs.run import RunInfo


def what_differs(info: RunInfo, inputs_sha256: str, version: str) -> list[str]:
    """One sentence per difference between the recorded run and now: the files read (their SHA-256) and kweval's
    version; [] when both are unchanged."""
    out = []
    if info.inputs_sha256 != inputs_sha256:
        out.append(
            f"the data differs from the recorded run's: its files' SHA-256 was {info.inputs_sha256[:12]}…, now "
            f"{inputs_sha256[:12]}…"
        )
    if info.kweval_version != version:
        out.append(f"kweval's version differs: the run was recorded by kweval {info.kweval_version}, this is {version}")
    return out


@dataclass(frozen=True)
class ScoreCheck:
    """How the scores of a new evaluation compare with a run's recorded ones."""

    n_rows: int  # rows (unit × model) of the recorded table
    n_values: int  # values compared (rows in both × metric columns in both)
    n_different: int  # values that are not the same (NaN equals NaN)
    largest: float  # the largest |difference| among them (0 when none)
    missing: int  # recorded rows the new evaluation does not have
    extra: int  # new rows the run did not record
    columns_missing: tuple[str, ...] = ()  # recorded columns the new evaluation lacks

    @property
    def identical(self) -> bool:
        return not (self.n_different or self.missing or self.extra or self.columns_missing)

    def sentence(self) -> str:
        if self.identical:
            return f"identical scores: all {self.n_values:,} values of the {self.n_rows:,} recorded rows are the same"
        parts = []
        if self.n_different:
            parts.append(f"{self.n_different:,} of {self.n_values:,} values differ (largest |Δ| {self.largest:.3g})")
        if self.missing or self.extra:
            parts.append(f"{self.missing:,} recorded row(s) missing, {self.extra:,} new row(s)")
        if self.columns_missing:
            parts.append(f"column(s) no longer computed: {', '.join(self.columns_missing)}")
        return "the scores differ: " + "; ".join(parts)


def check_scores(recorded: pd.DataFrame, new: pd.DataFrame) -> ScoreCheck:
    """Compare every numeric column of `recorded` with the same column of `new` on the rows both hold (by movie,
    review_id, model), exactly."""
    columns = [c for c in recorded.columns if c not in KEY]
    shared = [c for c in columns if c in new.columns]
    both = recorded.merge(new[[*KEY, *shared]], on=KEY, how="outer", suffixes=("", "__new"), indicator=True)
    here = both[both["_merge"] == "both"]
    a = here[shared].to_numpy(dtype="float64")
    b = here[[f"{c}__new" for c in shared]].to_numpy(dtype="float64")
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    diff = np.abs(np.where(same, 0.0, a - b))
    return ScoreCheck(
        n_rows=len(recorded),
        n_values=int(same.size),
        n_different=int((~same).sum()),
        largest=float(np.nanmax(diff)) if diff.size else 0.0,
        missing=int((both["_merge"] == "left_only").sum()),
        extra=int((both["_merge"] == "right_only").sum()),
        columns_missing=tuple(c for c in columns if c not in new.columns),
    )
