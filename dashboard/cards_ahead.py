"""Speed trick "page look-ahead": once the explorer has drawn a page of cards, the next page's cards are built in the
background, by the same cached functions the page calls (`review_card.page_cards`: the page's card data, metrics
lines and each card's template), so that turning to it finds them cached and costs what turning back to a page
already seen does (DNLP, semantic and sentiment on: ~0.06 s of the server's CPU instead of ~0.3 s).

Reference definition: build the page's cards on request (what the page does without it, `look_ahead.ENABLED`
off); the cached functions are keyed by what they read, so a card made ahead is the card the page would make
(tests/test_look_ahead.py).  It runs on the τ look-ahead's worker (`look_ahead.WORKER`: one thread per process,
single-flight, a failure logged and never shown), whose rules it follows: the page claims its own cards first
(waits for them being made, takes them back not started), and planning the next page drops what is no longer
wanted.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard import look_ahead, review_card
from dashboard.state import Ctx

# Seconds the next page's cards wait before they are built: the page just sent is drawn by the browser first (on a
# machine with both cores busy the build took CPU from that drawing; a claim or a new plan ends the wait at once).
# DNLP, semantic + sentiment, read 1 s, two busy loops (bench/bench_browser.py --read 1 --busy 2): a turn 1.34 s at 0,
# 1.11 s at 0.4 s.
DELAY_S = 0.4


def _key(ctx: Ctx, rows: pd.DataFrame, marked: str | None) -> tuple:
    """What decides a page's cards: the evaluation (τ included), the preset, the models, the marked model and the
    page's reviews in order."""
    ids = tuple(zip(rows["movie"].tolist(), rows["review_id"].tolist()))
    return ("cards", ctx.key, ctx.preset, tuple(ctx.selection.models), marked, ids)


def claim(ctx: Ctx, rows: pd.DataFrame, marked: str | None) -> None:
    """Before the page builds `rows`' cards: wait for them if they are being made ahead (`LookAhead.claim`)."""
    look_ahead.WORKER.claim(_key(ctx, rows, marked))


def plan(ctx: Ctx, rows: pd.DataFrame, kw: pd.DataFrame, scores: pd.DataFrame, marked: str | None) -> None:
    """After a page is drawn: build the cards of `rows` (the next page; none when it was the last) in the background."""
    if not look_ahead.ENABLED or rows.empty:
        return
    look_ahead.WORKER.plan([(_key(ctx, rows, marked), None, _work(ctx, rows, kw, scores, marked))], DELAY_S)


def _work(
    ctx: Ctx, rows: pd.DataFrame, kw: pd.DataFrame, scores: pd.DataFrame, marked: str | None
) -> Callable[[], None]:
    def work() -> None:
        _quietly(next(look_ahead.SERIAL), ctx, rows, kw, scores, marked)

    return work


@st.cache_resource(show_spinner=False, max_entries=1)
def _quietly(
    serial: int, _ctx: Ctx, _rows: pd.DataFrame, _kw: pd.DataFrame, _scores: pd.DataFrame, marked: str | None
) -> bool:
    """`review_card.page_cards` as the page calls it; inside this cached function the cached functions it reaches draw
    no spinner, so the background thread touches no element (`look_ahead._quietly`); `serial`: always a miss."""
    review_card.page_cards(_ctx, _rows, _kw, _scores, marked)
    return True
