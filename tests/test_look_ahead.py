"""Speed trick "τ look-ahead" (dashboard.look_ahead): the Summary's work at τ's neighbours done in the background.
Reference: computed at the new τ on request.  A step found ahead shows exactly what a server that never looked ahead
shows at that τ (every table, text, chart and download), on the demo, a per-document collection and DNLP; the
worker's single-flight and drop rules, deterministically (events and futures, no sleeps).  Speed trick "page
look-ahead" (dashboard.cards_ahead) likewise: a page of cards made ahead is the page built on request."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from dashboard import caches, look_ahead
from dashboard.look_ahead import LookAhead, neighbours
from dashboard.review_tables import PER_PAGE
from kweval.data import load_dataset
from tests.apptest import DNLP, explorer_cards, run, texts
from tests.helpers import calls_by_thread, edge_collection
from tests.test_app_semantic import _downloads, _fresh_streamlit_caches
from tests.test_semantic_tau_step import _semantic

DEADLINE_S = 600  # generous: a busy machine


def _shown(at, files: dict) -> dict:
    """Every τ-dependent thing the Summary shows: its tables, its texts (the SVG charts and the headline among
    them) and its downloads' bytes."""
    assert not at.exception, [e.message for e in at.exception]
    return {"tables": [df.value for df in at.dataframe], "texts": texts(at), "files": dict(files)}


def _with_latex_intervals(at):
    """The LaTeX download with CIs beside its values (the look-ahead makes them too)."""
    at.radio(key="tex_ci").set_value("brackets").run()
    return at


def _counting_headlines(monkeypatch) -> list:
    """The names of the threads that compare the leaders from now on."""
    return calls_by_thread(monkeypatch, caches, "headline")


@pytest.mark.parametrize(
    "data", ["demo", "collection", pytest.param("dnlp", marks=[pytest.mark.dnlp, pytest.mark.slow])]
)
def test_a_step_found_ahead_shows_what_a_step_computed_on_request(data, tmp_path, monkeypatch, caplog):
    path = {"demo": None, "collection": edge_collection(tmp_path / "edge"), "dnlp": DNLP}[data]
    _semantic(load_dataset(None if path is None else str(path)), tmp_path / "cache", monkeypatch)  # stand-in vectors
    _fresh_streamlit_caches()
    files = _downloads(monkeypatch)
    at = run(monkeypatch, path, {"sem": "1", "tau": "0.75", "movie": "ALL"})
    # the first look-ahead over before the next rerun, which would drop the job not started yet (a slow first run
    # left 3 jobs done, not 4)
    assert look_ahead.WORKER.idle(DEADLINE_S)
    at = _with_latex_intervals(at)
    assert look_ahead.WORKER.idle(DEADLINE_S)
    done = look_ahead.WORKER.done  # τ = 0.76 and 0.74 made ahead, and again once the LaTeX CIs were asked for
    assert len(done) == 4 and len(set(done)) == 2
    background = [r.getMessage() for r in caplog.records if r.threadName.startswith("kweval-look-ahead")]
    assert background == []  # no spinner or other element from the thread (Streamlit would log each)
    headlines = _counting_headlines(monkeypatch)
    files.clear()
    at.sidebar.slider(key="sel_tau").set_value(0.76).run()
    ahead = _shown(at, files)
    assert look_ahead.WORKER.idle(DEADLINE_S)  # and the next look-ahead (τ = 0.77) is over
    assert all(name.startswith("kweval-look-ahead") for name in headlines)  # the step itself compared nothing
    assert at.query_params["tau"] == "0.76" and any(name and "0.76" in name for name in files)
    # τ = 0.77 made ahead, not 0.75 again (nor after a plain rerun): the page was drawn there, and a step back finds
    # it in the caches
    assert len(look_ahead.WORKER.done) == 5
    at.run()
    assert look_ahead.WORKER.idle(DEADLINE_S) and len(look_ahead.WORKER.done) == 5
    headlines.clear()
    at.sidebar.slider(key="sel_tau").set_value(0.75).run()
    assert not at.exception and headlines == []
    assert look_ahead.WORKER.idle(DEADLINE_S)

    look_ahead.WORKER.shutdown()  # the reference: a server that never looked ahead, opened at τ = 0.76
    monkeypatch.setattr(look_ahead, "ENABLED", False)
    _fresh_streamlit_caches()
    files.clear()
    direct = _shown(_with_latex_intervals(run(monkeypatch, path, {"sem": "1", "tau": "0.76", "movie": "ALL"})), files)
    assert any(not name.startswith("kweval-look-ahead") for name in headlines)  # computed on request this time
    assert look_ahead.WORKER.done == []

    assert ahead["texts"] == direct["texts"]
    assert ahead["files"] == direct["files"]
    assert {name.rsplit(".", 1)[-1] for name in ahead["files"]} >= {"csv", "md", "tex"}
    tex = next(data for name, data in ahead["files"].items() if name.endswith(".tex")).decode()
    assert "] &" in tex  # with its CIs, made ahead
    assert len(ahead["tables"]) == len(direct["tables"]) >= 2  # the table and the slices (by length; by rating)
    for one, other in zip(ahead["tables"], direct["tables"]):
        pd.testing.assert_frame_equal(one, other, check_exact=True)


def test_neighbours_follow_the_last_step():
    assert neighbours(0.75, None) == [0.76, 0.74]
    assert neighbours(0.75, 0.74) == [0.76, 0.74]  # stepped up: up again first
    assert neighbours(0.75, 0.76) == [0.74, 0.76]
    assert neighbours(0.95, 0.94) == [0.94] and neighbours(0.5, None) == [0.51]  # the slider's ends


def _blocked(ran: list, key: str, started: threading.Event, release: threading.Event):
    def work() -> None:
        started.set()
        assert release.wait(DEADLINE_S)
        ran.append(key)

    return work


def test_a_step_waits_for_its_work_running_ahead_and_takes_back_what_has_not_started():
    worker, ran = LookAhead(), []
    started, release = threading.Event(), threading.Event()
    try:
        worker.plan([("up", 1, _blocked(ran, "up", started, release)), ("down", 1, lambda: ran.append("down"))])
        assert started.wait(DEADLINE_S)
        worker.claim("down")  # not started: taken back at once (the page computes it), never run
        seen = []
        waiting = threading.Thread(target=lambda: (worker.claim("up"), seen.append(list(ran))))
        waiting.start()
        release.set()
        waiting.join(DEADLINE_S)
        assert seen == [["up"]]  # the claim returned once the running work had ended, and it ran once
        assert worker.idle(DEADLINE_S) and ran == ["up"] and worker.done == ["up"]
    finally:
        release.set()
        worker.shutdown()


def test_work_no_longer_a_neighbour_is_dropped_and_a_failure_is_dropped_quietly():
    worker, ran = LookAhead(), []
    started, release = threading.Event(), threading.Event()

    def fails() -> None:
        raise RuntimeError("never shown")

    try:
        worker.plan([("0.76", 1, _blocked(ran, "0.76", started, release)), ("0.74", 1, lambda: ran.append("0.74"))])
        assert started.wait(DEADLINE_S)
        worker.plan(
            [("0.77", 1, lambda: ran.append("0.77")), ("bad", 1, fails)]
        )  # stepped to 0.76: 0.74 is no neighbour
        release.set()
        assert worker.idle(DEADLINE_S)
        assert ran == ["0.76", "0.77"]  # the running one ended, the dropped one never started
        assert worker.done == ["0.76", "0.77"]  # the failure is not done, and raised nowhere
        worker.claim("bad")  # nothing to wait for: returns
    finally:
        release.set()
        worker.shutdown()
    assert not any(t.name.startswith("kweval-look-ahead") for t in threading.enumerate())


def test_work_planned_again_with_other_widget_values_is_made_again():
    worker, ran = LookAhead(), []
    try:
        worker.plan([("0.76", "ndcg@5", lambda: ran.append("ndcg@5"))])
        assert worker.idle(DEADLINE_S)
        worker.plan([("0.76", "ndcg@5", lambda: ran.append("again"))])  # a plain rerun: nothing new
        assert worker.idle(DEADLINE_S)
        worker.plan([("0.76", "f1", lambda: ran.append("f1"))])  # the heatmap's metric changed
        assert worker.idle(DEADLINE_S)
        assert ran == ["ndcg@5", "f1"]
    finally:
        worker.shutdown()


def test_a_job_in_its_start_delay_claimed_or_dropped_does_nothing_and_keeps_no_one_waiting():
    worker, ran = LookAhead(), []
    try:
        worker.plan([("page 2", None, lambda: ran.append("page 2"))], delay_s=DEADLINE_S)  # its delay: the deadline
        waiting = threading.Thread(target=worker.claim, args=("page 2",))
        waiting.start()  # the page turned to it at once: the wait ends, the page builds it
        waiting.join(DEADLINE_S / 2)
        assert not waiting.is_alive() and worker.idle(DEADLINE_S / 2)  # within half the delay: cut short
        worker.plan([("page 3", None, lambda: ran.append("page 3"))], delay_s=DEADLINE_S)
        worker.plan([("page 4", None, lambda: ran.append("page 4"))])  # page 3 no longer wanted, page 4 at once
        assert worker.idle(DEADLINE_S / 2)
        assert ran == ["page 4"] and worker.done == ["page 4"]
    finally:
        worker.shutdown()


def test_the_look_ahead_waits_for_the_page_to_be_drawn_except_after_a_step(tmp_path, monkeypatch):
    """A first view or a plain rerun is read before a step: its neighbours wait `DELAY_S` (the browser draws the page
    first); a page drawn by a τ step gets them at once (a visitor stepping may step again)."""
    _semantic(load_dataset(None), tmp_path / "cache", monkeypatch)  # stand-in vectors
    _fresh_streamlit_caches()
    delays, plan = [], look_ahead.WORKER.plan
    monkeypatch.setattr(
        look_ahead.WORKER, "plan", lambda jobs, delay_s=0.0: (delays.append(delay_s), plan(jobs, delay_s))
    )
    at = run(monkeypatch, None, {"sem": "1", "tau": "0.75", "movie": "ALL"})
    at.sidebar.slider(key="sel_tau").set_value(0.76).run()
    at.run()
    assert look_ahead.WORKER.idle(DEADLINE_S) and not at.exception
    assert delays == [look_ahead.DELAY_S, 0.0, look_ahead.DELAY_S] and look_ahead.DELAY_S > 0


def test_only_the_first_new_job_of_a_plan_waits_its_start_delay():
    """The delay leaves room for the page just sent to be drawn; the neighbour planned after it follows it at once
    (the page is drawn by then), and a plan's job already planned keeps its place."""
    worker, ran = LookAhead(), []
    release = threading.Event()
    try:
        worker.plan([("up", 1, lambda: ran.append("up")), ("down", 1, lambda: ran.append("down"))], delay_s=0.0)
        assert worker.idle(DEADLINE_S)
        worker.plan([("0.78", 1, lambda: release.wait(DEADLINE_S) and ran.append("0.78"))], delay_s=0.0)
        worker.plan([("0.78", 1, lambda: None), ("0.74", 1, lambda: ran.append("0.74"))], delay_s=DEADLINE_S)
        release.set()  # "0.78" ends; "0.74", the plan's first new job, waits its delay: cut short by its claim
        waiting = threading.Thread(target=worker.claim, args=("0.74",))
        waiting.start()
        waiting.join(DEADLINE_S / 2)
        assert not waiting.is_alive() and worker.idle(DEADLINE_S / 2)
        assert ran == ["up", "down", "0.78"]  # "0.74" was claimed in its delay: the page computed it
        worker.plan([("a", 1, lambda: ran.append("a")), ("b", 1, lambda: ran.append("b"))], delay_s=DEADLINE_S)
        worker.claim("a")  # the delayed first job taken back: the second one starts with no delay of its own
        assert worker.idle(DEADLINE_S / 2)
        assert ran[-1] == "b" and "a" not in ran
    finally:
        worker.shutdown()


def _counting_card_data(monkeypatch) -> list:
    """The names of the threads that compute a page's card data from now on."""
    from dashboard import review_card

    return calls_by_thread(monkeypatch, review_card, "card_data")


def test_a_page_turn_found_ahead_shows_the_cards_built_on_request(tmp_path, monkeypatch, caplog):
    """Speed trick "page look-ahead" (dashboard.cards_ahead): the explorer's next page of cards, built in the
    background, is the page a server that never looked ahead shows (the demo, semantic and sentiment on; the test
    collection has one page only, and DNLP with sentiment evaluated twice from cold caches takes ~100 s)."""
    path = None
    _semantic(load_dataset(None), tmp_path / "cache", monkeypatch)  # stand-in vectors
    _fresh_streamlit_caches()
    query = {"sem": "1", "sas": "1", "movie": "ALL"}
    at = run(monkeypatch, path, query, page="pages/explorer.py", direct=True)
    assert look_ahead.WORKER.idle(DEADLINE_S)
    assert [key[0] for key in look_ahead.WORKER.done] == ["cards"]  # page 2's, made ahead
    background = [r.getMessage() for r in caplog.records if r.threadName.startswith("kweval-look-ahead")]
    assert background == []  # no spinner or other element from the thread
    first = explorer_cards(at)
    assert len(first) == PER_PAGE[0]
    computed = _counting_card_data(monkeypatch)
    at.number_input(key="qp_p").set_value(2).run()
    ahead = explorer_cards(at)
    assert look_ahead.WORKER.idle(DEADLINE_S) and [key[0] for key in look_ahead.WORKER.done] == ["cards"] * 2
    assert computed and all(name.startswith("kweval-look-ahead") for name in computed)  # page 3's; page 2 was ready
    assert ahead and not set(ahead) & set(first)

    look_ahead.WORKER.shutdown()  # the reference: a server that never looked ahead, opened at page 2
    monkeypatch.setattr(look_ahead, "ENABLED", False)
    _fresh_streamlit_caches()
    computed.clear()
    direct = explorer_cards(run(monkeypatch, path, {**query, "p": "2"}, page="pages/explorer.py", direct=True))
    assert computed and not any(name.startswith("kweval-look-ahead") for name in computed)  # on request this time
    assert look_ahead.WORKER.done == []
    assert ahead == direct
