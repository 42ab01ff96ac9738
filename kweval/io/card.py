"""The protocol card: everything needed to reproduce a table of numbers, printed with it.

Every output of `kweval evaluate` carries one: a Markdown header, a LaTeX
caption, a JSON field, or a `<out>.protocol.json` sidecar beside a CSV file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.keyphrase.conventions import BY_NAME, KWEVAL_MATCH, preset_settings
from kweval.keyphrase.protocols import PROTOCOLS, preset_description

MATCH_RULES = {
    "kweval": None,  # the --match option decides
    "pke": "exact, on Porter stems of whitespace-split lower-cased words",
    "kpeval": "exact, on Porter stems of words split on single spaces",
    "meng": "exact, on Porter stems of words split on non-word characters",
}


HASH_OF = (
    "SHA-256 over the relative names and bytes of the files read (the dataset's inputs and predictions), sorted "
    "(`kweval.io.card.files_hash`): the data as given, checkable without kweval; the dashboard's cache key "
    "(Dataset.content_hash) hashes the tables as read instead"
)
CHUNK = 1 << 20  # files are hashed in 1 MiB reads: memory stays flat whatever their size


def files_hash(paths: Iterable[Path], root: Path | None = None) -> str:
    """SHA-256 over the names and bytes of `paths`, sorted: the card's `dataset_sha256` (see HASH_OF).

    A name is the path relative to `root` when it lies under it, else the file name.  Files are read in
    `CHUNK`-sized pieces; one that cannot be read (its reader reports it) adds its name and a marker, no traceback.
    """
    root = Path(root) if root is not None else None

    def name(path: Path) -> str:
        if root is not None and path.is_relative_to(root):
            return path.relative_to(root).as_posix()
        return path.name

    h = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        h.update(name(path).encode("utf-8", "surrogateescape"))  # a file name that is not UTF-8: its bytes
        h.update(b"\0")
        try:
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(CHUNK), b""):
                    h.update(block)
        except (OSError, ValueError):
            h.update(b"\0unreadable\0")
    return h.hexdigest()


def protocol_card(
    preset: str,
    data: str,
    content_hash: str,
    *,
    k: int | None = None,
    match: str | None = None,
    aggregation: str | None = None,
    gt_order: str | None = None,
    cutoffs: Iterable[object] = (),
    match_why: str | None = None,
) -> dict[str, object]:
    """The card of one result: preset and each convention it fixes, data identity, options (`match_why`: why the
    kweval preset's match mode is in force, `kweval.evaluation.options.match_reason`).

    `data` is written as text: a path that is not UTF-8 (a folder name's bad bytes) gets U+FFFD for them, as the
    collection's name does (`kweval.data.keyphrase`); the content hash is of the bytes.
    """
    from kweval import __version__
    from kweval.data.dataset import text_of
    from kweval.text.stemming import nltk_version

    protocol = PROTOCOLS[preset]
    described = preset_description(preset)
    porter = f"Porter (NLTK {nltk_version()})"  # NLTK releases stem some words differently (3.8.1 and 3.10: Dying)
    if preset == "kweval":
        stemming = porter if match == "stem" else "none"
        match_rule: str | None = f"{match} (docs/metrics.md §2)" + (f": {match_why}" if match_why else "")
        cutoff_rule = "hard (p@k = matches / k)"
        aggregation_rule = f"{aggregation or 'macro'} (docs/metrics.md §6)"
    else:
        stemming = porter
        match_rule = MATCH_RULES[preset]
        cutoff_rule = "hard (÷ k)" if protocol.cutoff == "hard" else "flexible (÷ min(k, |P|))"
        aggregation_rule = (
            "macro: F1 of mean P and mean R" if protocol.macro == "f1_of_means" else "macro: mean of per-document F1"
        )
    return {
        "kweval_version": __version__,
        "preset": preset,
        "tool": protocol.tool,
        "data": text_of(data, [0]),
        "dataset_sha256": content_hash,
        "dataset_sha256_of": HASH_OF,
        "match": match_rule,
        "stemming": stemming,
        "cutoff": cutoff_rule,
        "aggregation": aggregation_rule,
        "k": k,
        "cutoffs": [str(c) for c in cutoffs],
        "gt_order": gt_order or "unranked",
        "prediction_dedup": protocol.prediction_dedup,
        "gt_dedup": protocol.gold_dedup == "drop",
        "present_rule": described["present_rule"],
        "empty_predictions": described["empty_predictions"],
        "invalid_predictions": described["invalid_predictions"],
        "defects_reproduced": list(protocol.defects),
        "conventions": convention_lines(preset_settings(preset, match or KWEVAL_MATCH)),
    }


def with_other_presets(card: Mapping[str, object], lines: Sequence[str]) -> dict[str, object]:
    """`card` with one line per key metric on what the other presets give (`kweval.lattice.lines.gap_lines`)."""
    from kweval.lattice.lines import GAP_NOTE

    return {**card, "other_presets": list(lines), "other_presets_note": GAP_NOTE} if lines else dict(card)


def convention_lines(settings: Mapping[str, str]) -> dict[str, str]:
    """{convention: "setting: its sentence"} of a protocol's settings (`kweval.keyphrase.conventions`, the one
    definition docs/protocols.md and `kweval gap` read)."""
    return {name: f"{value}: {BY_NAME[name].settings[value]}" for name, value in settings.items()}


def evaluation_card(
    options, data: str, content_hash: str, *, aggregation: str, hash_of: str = HASH_OF, per_document: bool = False
) -> dict[str, object]:
    """The card of an evaluation by the one engine (the kweval preset) under `options` (an `EvalOptions`; a match
    "auto" is made the data's mode) of data whose GT is `per_document` or movie-level: the match says why it is in
    force.

    Adds what the semantic and sentiment columns depend on when they are on (embedding model, the backend
    and precision that computed the vectors, τ; VADER), so a table with those columns can be reproduced too.
    `hash_of` says what `content_hash` hashes (the CLI hashes the files, the dashboard the tables as read).
    """
    from kweval.evaluation.options import match_reason

    options = options.for_data(per_document)
    card = protocol_card(
        "kweval",
        data,
        content_hash,
        k=options.k,
        match=options.match,
        gt_order=options.gt_order,
        aggregation=aggregation,
        match_why=match_reason(options.match, per_document),
    )
    card["dataset_sha256_of"] = hash_of
    if options.semantic:
        from kweval.embeddings.semantic import used_variant

        backend, precision = used_variant(options.embedding_backend, options.embedding_model)
        card["semantic"] = (
            f"cosine of {options.embedding_model} embeddings ({backend}, {precision}), "
            f"τ = {options.threshold:g} (docs/metrics.md §4)"
        )
    if options.sentiment:
        card["sentiment"] = "VADER compound (docs/metrics.md §5)"
    card.update(beyond_card(options.grounding, options.diversity, options.grounding_threshold, options.embedding_model))
    return card


def beyond_card(grounding: bool, diversity: bool, tau_g: float, model: str) -> dict[str, str]:
    """The card's lines of grounding and diversity (docs/metrics.md §12) when they are on: the rules, τ_g, and that
    the embeddings are `model`'s (KPEval's diversity uses an mpnet model)."""
    card = {}
    if grounding:
        card["grounding"] = (
            "present under the present rule above; else supported when every word occurs in one sentence, or at "
            f"cosine ≥ τ_g = {tau_g:g} to a sentence or phrase of the text ({model}); else unsupported "
            "(docs/metrics.md §12)"
        )
    if diversity:
        card["diversity"] = (
            f"KPEval's dup_token_ratio and self_similarity on the predictions as given, embeddings {model} "
            "(KPEval: an mpnet sentence-transformer; docs/metrics.md §12)"
        )
    return card


_SHORT = (
    "preset",
    "kweval_version",
    "dataset_sha256",
    "match",
    "stemming",
    "cutoff",
    "aggregation",
    "k",
    "gt_order",
    "semantic",
    "sentiment",
)


def card_line(card: Mapping[str, object]) -> str:
    """One sentence naming the conventions (a Markdown header line or a LaTeX caption)."""
    parts = []
    for key in _SHORT:
        value = card.get(key)
        if key == "dataset_sha256" and isinstance(value, str):
            value = value[:12]
        if value not in (None, "", []):
            parts.append(f"{key.replace('_', ' ')}: {value}")
    return "; ".join(parts)


def card_markdown(card: Mapping[str, object]) -> str:
    """The card as a Markdown block to print above a table (values escaped)."""
    from kweval.io.report import escape_markdown

    return f"> **Protocol** — {escape_markdown(card_line(card))}\n\n"


def card_latex_caption(card: Mapping[str, object]) -> str:
    """The card as a LaTeX caption text (plain: `kweval.io.report.to_latex` escapes its caption)."""
    return f"Protocol: {card_line(card)}"


def sidecar_path(out: str) -> Path:
    """Where the card of a CSV written to `out` goes: `<out>.protocol.json`."""
    return Path(f"{out}.protocol.json")


def card_json(card: Mapping[str, object]) -> str:
    return json.dumps(card, indent=2, ensure_ascii=False) + "\n"


def dataset_hash(data: Path, movies: Iterable[str] | None = None, predictions: Iterable[Path] = ()) -> str:
    """`files_hash` of the files a run reads: the dataset's inputs (`kweval.data.inputs.input_files`) and the
    --predictions files, named relative to `data` (a folder) when under it."""
    from kweval.data.inputs import input_files

    data = Path(data)
    files = [*input_files(data, movies), *(Path(p) for p in predictions)]
    return files_hash(dict.fromkeys(files), data if data.is_dir() else None)


def render_with_card(
    table,
    fmt: str,
    meta: Mapping[str, object] | None,
    card: Mapping[str, object],
    raw_csv: bool = False,
    words: Vocabulary = MOVIE_WORDS,
    **latex,
) -> str:
    """`report.render` of `table` with the card: Markdown header, LaTeX caption, JSON field (CSV: see `sidecar_path`).

    `latex`: `report.to_latex`'s columns, ci, ci_style; the caption names the run (`report.latex_caption`) and then the
    card.  `words`: the data's vocabulary for the Markdown/LaTeX headers (`kweval.data.vocabulary`).
    """
    from kweval.io import report

    if fmt == "markdown":
        return card_markdown(card) + report.to_markdown(table, words=words)
    if fmt == "latex":
        caption = (report.latex_caption(dict(meta), words) + " " if meta else "") + card_latex_caption(card)
        return report.to_latex(table, caption=caption, words=words, **latex)
    if fmt == "json":
        return report.to_json(table, {**(meta or {}), "protocol": dict(card)})
    return report.render(table, fmt, dict(meta) if meta else None, raw_csv=raw_csv)


def rows_json_with_card(rows: Sequence[Mapping[str, object]], card: Mapping[str, object]) -> str:
    """Rows (plain dicts) and the card as `report.to_json` writes a table (floats to 15 decimals), without pandas."""
    plain = [{k: round(v, 15) if isinstance(v, float) else v for k, v in row.items()} for row in rows]
    return json.dumps({"meta": {"protocol": dict(card)}, "rows": plain}, indent=2) + "\n"


def write_sidecar(fmt: str, out: str, card: Mapping[str, object]) -> None:
    """Beside a CSV file written to `out`, its card as `<out>.protocol.json` (nothing for stdout)."""
    from kweval.io.output import write_output

    if fmt == "csv" and out != "-" and Path(out).is_file():  # not for /dev/null or a pipe
        write_output(card_json(card), str(sidecar_path(out)))
