"""The protocol card on a page: the conventions behind the numbers shown, enough to reproduce them (issue 12)."""

from __future__ import annotations

import streamlit as st

from dashboard.escape import md
from kweval.io.card import card_json, evaluation_card, protocol_card

TABLES_HASH_OF = (
    "SHA-256 of the tables as read (Dataset.content_hash, the dashboard's cache key); "
    "`kweval evaluate` on the same folder states a hash of its files instead"
)


def page_card(ctx) -> dict[str, object]:
    """The card of the numbers `ctx` shows: the evaluation's (sidebar options, aggregation, data identity; the match
    mode says why it is in force), or the card of `kweval evaluate --protocol P` under the preset the pages compute
    under (`Ctx.preset`)."""
    if ctx.preset is not None:
        from kweval.keyphrase.dataset_protocol import cutoffs_for

        card = protocol_card(
            ctx.preset,
            ctx.source_label,
            ctx.data_hash,
            k=ctx.selection.k,
            aggregation="macro",
            cutoffs=cutoffs_for(ctx.selection.k),
        )
        card["dataset_sha256_of"] = TABLES_HASH_OF
        return card
    return evaluation_card(
        ctx.options,
        ctx.source_label,
        ctx.data_hash,
        aggregation=ctx.selection.agg,
        hash_of=TABLES_HASH_OF,
        per_document=ctx.dataset.per_document,
    )


def show_protocol_card(ctx, key: str) -> None:
    """A collapsed panel listing every convention of the card, with its JSON to download (`key`: widget key)."""
    card = page_card(ctx)
    with st.expander("Protocol card: every convention behind these numbers (to reproduce them)"):
        rows = [
            f"| {md(name.replace('_', ' '))} | "
            f"{md(value if not isinstance(value, list) else ', '.join(map(str, value)) or '—')} |"
            for name, value in card.items()
            if value not in (None, "")
        ]
        st.markdown("| field | value |\n| --- | --- |\n" + "\n".join(rows))
        st.download_button(
            "Protocol card (JSON)", card_json(card), file_name="kweval-protocol.json", mime="application/json", key=key
        )
