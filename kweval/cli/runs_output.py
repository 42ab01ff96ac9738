"""What `kweval runs` prints: text (aligned columns, user strings escaped), Markdown (`kweval.io.report.to_markdown`)
or JSON (NaN as null), the answer first."""

from __future__ import annotations

import json
import math

import pandas as pd

from kweval.data.vocabulary import vocabulary_for
from kweval.io.report import escape_markdown, to_markdown
from kweval.messages import shown


def plain(text: object) -> str:
    """A user string (a run or model name) safe on a terminal: controls and bidi marks as escapes."""
    return shown(text)


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts, NaN as None."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _json_ready(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _json_ready(value.item())
    return value


def emit_json(value: object) -> None:
    print(json.dumps(_json_ready(value), indent=2, ensure_ascii=False))


def _text_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)"
    shown_frame = frame.copy()
    for column in shown_frame.columns:
        if not pd.api.types.is_numeric_dtype(shown_frame[column]):  # text of any dtype: names come from users
            shown_frame[column] = shown_frame[column].map(lambda v: v if v is None else plain(v))
    return shown_frame.to_string(index=False, float_format=lambda v: f"{v:.4f}")


def emit_table(frame: pd.DataFrame, fmt: str, csv_for_text: bool = False, words=None) -> None:
    """A table in `fmt` (text: aligned, or CSV when `csv_for_text`; markdown; json: a list of objects)."""
    if fmt == "json":
        emit_json(records(frame))
    elif fmt == "markdown":
        print(to_markdown(frame, bold_best=False, words=words or vocabulary_for(False)), end="")
    elif csv_for_text:
        from kweval.io.report import to_csv

        print(to_csv(frame), end="")
    else:
        print(_text_table(frame))


def _heading(text: str, fmt: str) -> str:
    return f"\n## {escape_markdown(text)}\n" if fmt == "markdown" else f"\n{plain(text)}"


def emit_run(info, summary: pd.DataFrame, fmt: str) -> None:
    """`runs show`: the run's identity and settings, then each model's ALL values with their intervals."""
    words = vocabulary_for(info.per_document)
    facts = pd.DataFrame(
        [
            ("id", info.id),
            ("name", info.name),
            ("time (UTC)", info.short_time),
            ("kweval", info.kweval_version),
            ("data", info.data),
            ("layout", info.layout),
            ("dataset sha256 (reference)", info.dataset_sha256),
            ("inputs sha256 (files)", info.inputs_sha256),
            (f"{words.reviews.lower()} × models", f"{info.n_rows:,}"),
            ("models", ", ".join(info.models)),
            *((key, "—" if value is None else str(value)) for key, value in info.settings.items()),
        ],
        columns=["field", "value"],
    )
    print(_heading(f"Run {info.id}", fmt).lstrip("\n"))
    emit_table(facts, fmt, words=words)
    wide = summary.pivot_table(index="metric", columns="model", values="value", sort=False).reset_index()
    print(_heading(f"Values over all {words.reviews.lower()} ({info.aggregate})", fmt))
    emit_table(wide, fmt, words=words)


def emit_comparison(comparison, fmt: str, top: int) -> None:
    """`runs compare`: the answer (the first metric's change and how sure), the table, the units, the settings."""
    from kweval.runs import lead_sentence, options_line

    if fmt == "json":
        emit_json(comparison.as_dict(top))
        return
    words = vocabulary_for(comparison.a.per_document)
    print(plain(lead_sentence(comparison, words)))
    for note in comparison.notes:
        print(plain(f"note: {note}"))
    print(plain(options_line(comparison)))
    print(_heading("Every metric: B − A, 95% bootstrap CI, randomization p (Holm within each family)", fmt))
    columns = ["metric", "n", "a", "b", "difference", "ci_low", "ci_high", "p", "p_holm", "wins", "ties", "losses"]
    emit_table(comparison.table[columns], fmt, words=words)
    for title, rows in (("got most worse", comparison.worst(top)), ("got most better", comparison.best(top))):
        print(_heading(f"{words.reviews} that {title} on {comparison.metric} (B − A)", fmt))
        emit_table(rows, fmt, words=words)


def emit_gate(comparison, result, fmt: str) -> None:
    """`runs gate`: the one line saying why (stdout), then per metric its drop and verdict (text, markdown)."""
    if fmt == "json":
        emit_json(
            {
                "failed": result.failed,
                "line": result.line,
                "baseline": comparison.a.id,
                "candidate": comparison.b.id,
                "n_common": comparison.n_common,
                "metrics": records(result.rows),
                "notes": comparison.notes,
            }
        )
        return
    print(plain(result.line))
    for note in comparison.notes:
        print(plain(f"note: {note}"))
    if fmt == "markdown":
        print()
        emit_table(result.rows, fmt, words=vocabulary_for(comparison.a.per_document))
