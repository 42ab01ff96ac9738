"""Speed trick "τ look-ahead": once the Summary is drawn with semantic matching on at τ, the τ-dependent work of the
slider's neighbours (τ ± TAU_STEP; after a step, the next one in the same direction first; not a τ the session's
page was drawn at lately, whose results the page itself cached) is done in the background,
by the same cached functions the page calls (`dashboard.caches`, `dashboard.charts`, `Ctx.summary`) with the
neighbour's arguments, so that a step to a neighbour finds every result cached and reruns like a plain rerun.

Reference definition: compute at the new τ on request (what the page does without it); the cached functions are
keyed by what they read, so a result made ahead is the one the page would make (tests/test_look_ahead.py).

One worker thread per process (`LookAhead`), single-flight: a page at τ first `claim`s its own work: made ahead,
it waits for it if it is running, and takes it back (cancels it) if it has not started; a look-ahead that is no
longer a neighbour of the latest τ is dropped before it starts; a failure is logged, never shown, and stores
nothing (the page then computes as usual).  The thread calls no spinner or other element (the cached functions it
reaches are called inside `_quietly`: nested, they draw nothing), and what it makes is bounded by the caches' own
entry limits and `state.evaluation_ahead`'s store (4 evaluations: ~8.5 MB on DNLP, 9,362 reviews × 4 models).
A job is planned again when the page's widgets it reads change (its `version`: the heatmap's metric, the LaTeX CI
columns); the downloads themselves are made on click, not ahead.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import replace

import streamlit as st

from dashboard import caches, charts
from dashboard.selection import TAU_MAX, TAU_MIN, TAU_STEP
from dashboard.state import Ctx, evaluation_ahead
from kweval.evaluation.aggregate import ALL

LOG = logging.getLogger(__name__)
ENABLED = True  # off: every step computes on request (the reference definition; tests compare the two)


class LookAhead:
    """Jobs by key, run one at a time in the background, most wanted first (see the module's docstring); a key's
    `version` says what else its work reads (the page's widgets): planned again with another, it is made again."""

    def __init__(self, executor: Callable[[], ThreadPoolExecutor] | None = None) -> None:
        self._executor_factory = executor or (lambda: ThreadPoolExecutor(1, thread_name_prefix="kweval-look-ahead"))
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._jobs: dict[Hashable, tuple[Hashable, Future]] = {}  # key -> (version, its job)
        self._wanted: dict[Hashable, Hashable] = {}  # key -> version
        self._wakes: dict[Hashable, threading.Event] = {}  # key -> set when its job's start delay is cut short
        self.cpu_s = self.wall_s = 0.0  # what the jobs cost so far (bench/bench_app.py prints it)
        self.done: list[Hashable] = []  # keys of the jobs that ran to the end, in order

    def plan(self, jobs: Sequence[tuple[Hashable, Hashable, Callable[[], object]]], delay_s: float = 0.0) -> None:
        """Wanted now: `jobs` (key, version, work), in this order; any other job not started yet is dropped.  The
        first one not planned before starts its work `delay_s` seconds after its turn comes, unless claimed or
        dropped meanwhile (then it does nothing): room for what the page just sent to be drawn first (the others
        follow it at once: the page is drawn by then)."""
        with self._lock:
            self._wanted = {key: version for key, version, _ in jobs}
            for key in [k for k, (v, _) in self._jobs.items() if self._wanted.get(k, v) != v or k not in self._wanted]:
                self._jobs.pop(key)[1].cancel()  # False once running: it ends on its own, its result is kept
                self._wake(key)
            if self._executor is None:
                self._executor = self._executor_factory()
            for key, version, work in jobs:
                if key not in self._jobs:
                    self._wakes[key] = wake = threading.Event()
                    self._jobs[key] = (version, self._executor.submit(self._run, key, version, work, delay_s, wake))
                    delay_s = 0.0

    def _wake(self, key: Hashable) -> None:
        """Cut `key`'s start delay short (it then finds itself unwanted); under the lock."""
        wake = self._wakes.pop(key, None)
        if wake is not None:
            wake.set()

    def _run(
        self, key: Hashable, version: Hashable, work: Callable[[], object], delay_s: float, wake: threading.Event
    ) -> bool:
        if delay_s:
            wake.wait(delay_s)  # a wait, not work: a claim or a new plan ends it at once
        with self._lock:
            if self._wakes.get(key) is wake:
                del self._wakes[key]
            if key not in self._wanted or self._wanted[key] != version:  # no longer a neighbour, or read other widgets
                return False
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            work()
        except Exception:  # noqa: BLE001 (never shown: the page computes on request, the caches keep no failure)
            LOG.debug("look-ahead %r failed", key, exc_info=True)
            return False
        finally:
            with self._lock:
                self.wall_s += time.perf_counter() - wall
                self.cpu_s += time.thread_time() - cpu
        with self._lock:
            self.done.append(key)
        return True

    def claim(self, key: Hashable) -> None:
        """Before a page computes `key`'s work itself: wait for it if it is being made ahead, drop it if not yet."""
        with self._lock:
            _, job = self._jobs.pop(key, (None, None))
            self._wanted.pop(key, None)
            self._wake(key)  # still in its start delay: it ends at once, having done nothing
        if job is not None and not job.cancel():
            job.result()  # `_run` never raises

    def idle(self, timeout: float) -> bool:
        """Whether every planned job has ended (ran, failed or was dropped) within `timeout` seconds."""
        with self._lock:
            jobs = [job for _, job in self._jobs.values()]
        return not wait_all(jobs, timeout=timeout).not_done

    def shutdown(self) -> None:
        """Drop what has not started, wait for a running job, end the thread and forget what ran (a later `plan`
        starts afresh)."""
        with self._lock:
            self._wanted.clear()
            for key in list(self._wakes):
                self._wake(key)
            jobs, self._jobs = self._jobs, {}
            executor, self._executor = self._executor, None
        for _, job in jobs.values():
            job.cancel()
        if executor is not None:
            executor.shutdown(wait=True)
        with self._lock:
            self.done, self.cpu_s, self.wall_s = [], 0.0, 0.0


WORKER = LookAhead()  # one per process (a server's sessions share it: the latest page's neighbours are wanted)


def neighbours(tau: float, previous: float | None) -> list[float]:
    """The slider's values beside `tau`, in the order a user's next step most likely takes: the same direction as
    the step from `previous` first (up when there was none)."""
    up, down = round(tau + TAU_STEP, 2), round(tau - TAU_STEP, 2)
    order = [down, up] if previous is not None and previous > tau else [up, down]
    return [t for t in order if TAU_MIN <= t <= TAU_MAX]


def _view_key(ctx: Ctx) -> tuple:
    """What decides the Summary's τ-dependent work, τ included (`Ctx.key`)."""
    sel = ctx.selection
    return ("summary", ctx.key, sel.movie, tuple(sel.models), sel.agg)


def claim_summary(ctx: Ctx) -> None:
    """The Summary's first call before its τ-dependent work (`LookAhead.claim`)."""
    if ctx.options.semantic:
        WORKER.claim(_view_key(ctx))


def plan_summary(ctx: Ctx, metric: str, latex: Sequence[str] = ()) -> None:
    """The Summary's last call with semantic on: look ahead to τ's neighbours (`metric`: the heatmap's and the
    slices'; `latex`: the columns whose CIs the LaTeX download shows, if any; the files are made on click)."""
    if not (ENABLED and ctx.options.semantic):
        return
    previous = st.session_state.get("_look_ahead_tau")
    st.session_state["_look_ahead_tau"] = tau = ctx.options.threshold
    version = (metric, tuple(latex))
    drawn = _drawn((_view_key(ctx), version))
    jobs = []
    for near in neighbours(tau, previous):
        there = replace(
            ctx, options=replace(ctx.options, threshold=near), selection=replace(ctx.selection, threshold=near)
        )
        key = _view_key(there)
        if (key, version) not in drawn:  # a view this session drew (the τ it came from): cached
            jobs.append((key, version, _summary_work(there, metric, version[1])))
    stepping = previous is not None and previous != tau  # a step just taken: the next one may follow at once
    WORKER.plan(jobs, 0.0 if stepping else DELAY_S)


# Seconds the first neighbour waits before its work starts, unless the page was drawn by a τ step (a visitor
# stepping may step again at once: then no wait): the page just sent is drawn by the browser first (the look-ahead's
# work took a core from that drawing).  DNLP ALL, the Summary's first view with semantic on, the app open, five runs
# each, idle machine: 1.89-2.21 s (median 2.19) at 0.8 s, 2.04-2.42 s (median 2.27) at 0.  A step taken sooner
# claims the job: its wait ends at once and the page computes, as it does with no look-ahead.
DELAY_S = 0.8

DRAWN_KEPT = 4  # the session's last distinct views remembered as drawn (the caches keep far more entries)


def _drawn(view: tuple) -> tuple:
    """The session's last `DRAWN_KEPT` distinct (view key, version) drawn, `view` (drawn now) last."""
    before = [v for v in st.session_state.get("_look_ahead_drawn", ()) if v != view]
    st.session_state["_look_ahead_drawn"] = drawn = (*before[-(DRAWN_KEPT - 1) :], view)
    return drawn


SERIAL = iter(range(1, 1 << 62))  # a new key for every `_quietly` call (here and `cards_ahead`): never a cache hit


def _summary_work(ctx: Ctx, metric: str, latex: tuple) -> Callable[[], None]:
    def work() -> None:
        evaluation = evaluation_ahead(ctx.dataset, ctx.data_hash, ctx.options)
        if evaluation is not None:  # else a first evaluation: left to the page, which shows its progress
            _quietly(next(SERIAL), replace(ctx, evaluation=evaluation), metric, latex)

    return work


@st.cache_resource(show_spinner=False, max_entries=1)
def _quietly(serial: int, _ctx: Ctx, metric: str, latex: tuple) -> bool:
    """The Summary's τ-dependent calls at `_ctx`'s τ, as the page makes them (pages/summary.py).  Called inside this
    cached function, the cached functions draw no spinner (Streamlit shows the outermost cached function's only), so
    the background thread touches no element; `serial` makes every call a miss."""
    ctx = _ctx
    table, scope, scores = caches.summary_rows(ctx)
    top = caches.summary_headline(ctx, scope, scores) if len(ctx.selection.models) >= 2 else None
    caches.headline_across_presets(ctx, "kweval", top)
    undefined = caches.undefined_metrics(ctx)
    cis = caches.summary_cis(ctx, scope, scores)
    charts.metric_bars(ctx, scope, table[table["movie"] == scope].set_index("model"), cis)
    if metric not in undefined:
        charts.movie_heatmap(ctx, metric, table[table["movie"] != ALL])
    for by in ("rating", "length"):
        caches.sliced(ctx, by, metric)
    if latex:
        caches.latex_intervals(ctx, latex)
    return True
