"""Data: what is loaded, every validation message, and the tidy layout."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import caches
from dashboard.escape import md
from dashboard.protocol import show_protocol_card
from dashboard.sidebar import open_page
from dashboard.tables import number_columns, text_columns
from dashboard.uploads import format_size
from kweval.cli.cmd_describe import markdown_card
from kweval.evaluation.aggregate import dataset_overview

ctx = open_page(__file__)
ds = ctx.dataset
ev = ctx.evaluation


def unused_predictions(problems) -> str:
    """One line naming the predictions files that could not be used and why ("" when every one was read)."""
    said = [str(p) for p in problems if "prediction" in str(getattr(p, "source", "")).lower()]
    if not said:
        return ""
    more = f" (and {len(said) - 1} more message(s) below)" if len(said) > 1 else ""
    return f"Predictions not (fully) used: {md(said[0])}{more}."


words = ctx.words  # Movie/Review or Collection/Document (kweval.data.vocabulary)
st.title("Data")
unused = unused_predictions(ev.problems)
if unused:  # predictions beside docsutf8/ (or any predictions file) that could not be used: said first, in one line
    st.warning(unused, icon=":material/warning:")
st.markdown(
    f"**Source:** {md(ctx.source_label)} · {words.count(len(ds.movie_ids), 'movie')} · "
    f"{words.count(len(ds.reviews))} · "
    f"{len(ds.model_names)} models · {len(ds.predictions)} predicted entries · {len(ds.ground_truth)} GT keywords"
)
if ctx.uploads:
    st.markdown(
        "**Uploaded files** (the newest copy of each name): "
        + ", ".join(f"{md(name)} ({format_size(size)})" for name, size in ctx.uploads.items())
    )
if ctx.added:
    st.markdown(
        "**Added predictions** (sidebar ▸ Dataset ▸ Add predictions, one file per model): "
        + ", ".join(f"{md(model)} ({md(name)})" for model, name in ctx.added.items())
    )
st.caption(f"Content hash (the cache key): {ctx.data_hash[:16]}…")
show_protocol_card(ctx, key="data_protocol_card")
if ctx.preset is not None:
    st.caption(
        f"The counts below are of the data as kweval reads and cleans it (docs/metrics.md §1), whatever the preset: "
        f"the {md(ctx.preset)} preset's own reading of the gold (its present / absent split) is the dataset card's."
    )


def _help(table) -> dict:
    """Column help from the metric registry: counts as integers, text columns as they are; headers in the data's
    words (collection, documents on per-document data)."""
    counts = [c for c in table.columns if pd.api.types.is_integer_dtype(table[c])]
    config = {c: st.column_config.Column(words.header(c)) for c in table.columns}
    return config | number_columns(counts, fmt="%d") | text_columns([c for c in table.columns if c not in counts])


movies, models = dataset_overview(ds, ev)
c1, c2 = st.columns([3, 2])
c1.subheader(words.movies)
c1.dataframe(movies, hide_index=True, key="movies_table", column_config=_help(movies))
c2.subheader("Models")
c2.dataframe(models, hide_index=True, key="models_table", column_config=_help(models))
c2.caption(
    "score_direction: whether a higher or a lower score means a better keyword (the weighted metrics order by it). "
    "It comes from the models table, else from the predictions (a `score_direction` column, or the JSONL field "
    "`kweval extract` writes, e.g. lower for YAKE); higher where nothing says otherwise."
)
if ds.per_document:
    st.subheader("Dataset card (kweval describe)")
    under = (
        f"under the {md(ctx.preset)} preset's present rule (`kweval describe DATA --protocol {md(ctx.preset)}`)"
        if ctx.preset
        else f"under the kweval preset, {md(ctx.match_text())} (`kweval describe DATA`)"
    )
    st.caption(
        "The statistics and the ground-truth lint of each collection, as `kweval describe` prints them "
        f"(kweval.keyphrase.describe), {under}."
    )
    for card in caches.dataset_cards(ctx):
        st.markdown(markdown_card(card))

st.subheader("Validation messages")
messages = list(dict.fromkeys(words.say(str(p)) for p in ev.problems))  # quoted data left as it is
if messages:
    st.markdown("\n".join(f"- {md(m)}" for m in messages))
else:
    st.success("No problems: every file and cell was usable.")
if len(ev.skipped):
    with st.expander(f"{len(ev.skipped)} skipped {words.review.lower()} × model pairs"):
        st.dataframe(ev.skipped, hide_index=True, key="skipped_table", column_config=_help(ev.skipped))

st.subheader("The tidy layout")
st.markdown(
    """
A folder (or an upload) of Parquet or CSV tables with these names and columns:

| file | columns | notes |
| --- | --- | --- |
| `predictions` | `movie, review_id, model, rank, keyword, score` | required; `rank` is the 0-based position in \
the model's list; a text × model pair without rows was not run (skipped); an empty output is one row with an \
empty keyword |
| `ground_truth` | `movie, rank, keyword, helpful, not_helpful` | required; rank 0 is the most important keyword |
| `reviews` | `movie, review_id, text, title, rating` | optional; text is needed for highlighting |
| `movies` | `movie, title` | optional |
| `models` | `model, score_direction` | optional; `higher` (default) or `lower` (YAKE) |

Uploads accept `.parquet` and `.csv` only; pickles are never read from uploads.
Convert the DNLP layout (pickles) on your own machine:
"""
)
st.code(
    "kweval convert path/to/Dataset tidy/          # writes tidy/*.parquet\nstreamlit run app.py -- --data tidy/",
    language="bash",
)

ctx.finish()
