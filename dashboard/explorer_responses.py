"""The explorer's raw responses: a model's original answer (an LLM's free text) beside the list kweval read from it,
with the parser's decision, each phrase's section and what the parser removed (`Dataset.responses`, read by
`kweval.data.responses`; docs/llm.md).  Nothing is parsed here."""

from __future__ import annotations

import streamlit as st

from dashboard.escape import md
from dashboard.state import Ctx


def raw_responses(ctx: Ctx, movie: str, review: str) -> None:
    """Per selected model with a raw response for the review: an expander with the parsed list and the response."""
    responses = ctx.dataset.responses
    if responses is None or responses.empty:
        return
    mine = responses[(responses["movie"] == movie) & (responses["review_id"] == review)]
    for record in mine[mine["model"].isin(ctx.selection.models)].to_dict("records"):
        with st.expander(f"{md(record['model'])}: raw response · read as **{md(record['parse'])}**"):
            left, right = st.columns([2, 3])
            left.markdown("**Read as**")
            given = record["sections"]  # a tuple, or None (a missing value) without sections
            sections = given if isinstance(given, tuple) else (None,) * len(record["keyphrases"])
            listed = [
                f"{i}. {md(phrase)}" + (f" *({md(section)})*" if section else "")
                for i, (phrase, section) in enumerate(zip(record["keyphrases"], sections))
            ]
            left.markdown("\n".join(listed) if listed else f"*an empty list ({md(record['parse'])}): scores 0*")
            for note in record["notes"] if isinstance(record["notes"], tuple) else ():
                left.caption(md(note))
            right.markdown("**The response as given**")
            right.code(record["response"] or "(empty)", language=None, wrap_lines=True)
