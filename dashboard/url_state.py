"""The dashboard's one URL binding: widgets whose values live in URL query parameters, and the notices about them.

`url_widget` binds a widget to a query parameter (URL ↔ session state); a `keep` parameter (the sidebar's
selection, the protocol on per-document data) is always in the URL and remembered across pages.  A page run
starts with `start_url_checks` and ends with `drop_unknown_params`, which warns about the parameters nothing read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from dashboard.escape import md
from dashboard.selection import SELECTION_KEYS


def url_notice(message: str) -> None:
    """A warning at the top of the page about the URL (`message` is Markdown; escape what it quotes)."""
    st.session_state.setdefault("url_warnings", []).append(message)
    st.session_state.get("url_notices", st).warning(message, icon=":material/link_off:")


def invalid_param_message(param: str, raw: str, used: str) -> str:
    """The warning for a URL parameter whose value cannot be used."""
    return f"URL parameter **{md(param)}**: “{md(raw)}” is not a valid value here; used {md(used)} instead."


def start_url_checks(page: str) -> None:
    """At the start of a script run of `page`: a container at the top of the page for URL warnings; no parameter
    read yet."""
    st.session_state["url_notices"] = st.container()
    st.session_state["url_params_read"] = set(SELECTION_KEYS) | {"data"}
    st.session_state["url_warnings"] = []
    st.session_state["url_same_page"] = st.session_state.get("url_page") == page  # a rerun, not a page opened
    st.session_state["url_page"] = page


def drop_unknown_params() -> None:
    """After a page ran to its end: warn about and remove the URL parameters nothing read; one the dashboard wrote
    itself (the protocol of the per-document data the visitor just left) goes without a word."""
    read = st.session_state.get("url_params_read", set())
    for name in [n for n in st.query_params if n not in read]:
        if written_by_us(name, st.query_params.get(name)):
            st.query_params.pop(name, None)
            continue
        url_notice(
            f"URL parameter **{md(name)}** (“{md(st.query_params.get(name))}”) is unknown here; ignored and "
            f"removed from the URL."
        )
        st.query_params.pop(name, None)


def query_param(name: str) -> str | None:
    """The URL query parameter `name`, which the page reads itself (so it is not reported as unknown)."""
    st.session_state.setdefault("url_params_read", set()).add(name)
    return st.query_params.get(name)


def set_query_param(param: str, value: str | None) -> None:
    """Set the URL query parameter `param` (None: remove it), e.g. from a button's on_click."""
    if value is None:
        st.query_params.pop(param, None)
    else:
        st.query_params[param] = value


def _fit(value: Any, kwargs: dict[str, Any]) -> Any:
    """`value` as the widget can show it: one of its options, clamped into its bounds; None if impossible."""
    if value is None:
        return None
    if "options" in kwargs:
        options = list(kwargs["options"])
        if isinstance(value, (list, tuple)):  # a multiselect: every chosen value must be an option
            return list(value) if all(v in options for v in value) else None
        return value if value in options else None
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    if low is None and high is None:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return min(max(value, low if low is not None else value), high if high is not None else value)


def session_widget(widget: Callable, label: str, key: str, **kwargs: Any) -> Any:
    """A widget whose value follows the visitor from page to page in session state (not in the URL).

    A widget's own state is per page in Streamlit's multipage mode: the value is kept under
    another key and handed to the widget of the next page.
    """
    memory = f"{key}__remembered"
    if memory in st.session_state and _fit(st.session_state[memory], kwargs) is not None:
        st.session_state[key] = st.session_state[memory]

    def remember() -> None:
        st.session_state[memory] = st.session_state[key]

    value = widget(label, key=key, on_change=remember, **kwargs)
    st.session_state[memory] = value
    return value


REMEMBERED = "url_remembered"  # session state: the values of the `keep` parameters, across pages
WRITTEN = "url_written"  # session state: per `keep` parameter, the texts this session wrote to the URL, oldest first


def written_by_us(param: str, raw: str | None) -> bool:
    """Whether `raw` is a text the dashboard itself wrote to the URL parameter `param` in this session (not one the
    visitor typed or a link brought)."""
    return raw is not None and raw in st.session_state.get(WRITTEN, {}).get(param, [])


def _stale(param: str, raw: str | None) -> bool:
    """Whether `raw` is an older text this session wrote to `param`, on a rerun of the same page: a browser's URL that
    has not caught up with the latest write yet (quick presses of a widget's arrows), which must not undo the newer
    value."""
    if not st.session_state.get("url_same_page"):  # a page opened by a link or a switch: its query is a request
        return False
    written = st.session_state.get(WRITTEN, {}).get(param, [])
    return raw is not None and raw in written[:-1] and raw != written[-1]


PENDING = "url_pending"  # session state, inside `one_url_update`: the `keep` parameters' texts not sent yet


def _write(param: str, text: str) -> None:
    """Put `text` in the URL as `param` (inside `one_url_update`: at its end) and note that this session wrote it."""
    written = st.session_state.setdefault(WRITTEN, {}).setdefault(param, [])
    if text in written:
        written.remove(text)
    written.append(text)
    del written[:-64]
    if PENDING in st.session_state:
        st.session_state[PENDING][param] = text
    else:
        st.query_params[param] = text


@contextmanager
def one_url_update() -> Iterator[None]:
    """The `keep` parameters written inside go to the browser in one URL update at the end, not one each.

    Each update is a message on which the browser pushes a history entry and renders the app again: a new
    session's first view writes the sidebar's ten settings, which left ten entries of the same page for the Back
    button to step through.  Nothing inside may read back a parameter it wrote (the sidebar reads each before
    writing it)."""
    st.session_state[PENDING] = {}
    try:
        yield
    finally:
        pending = st.session_state.pop(PENDING, {})
        if pending:
            st.query_params.update(pending)


def url_widget(
    widget: Callable,
    label: str,
    param: str,
    default: Any,
    parse: Callable[[str], Any] = str,
    fmt: Callable[[Any], str] = str,
    key: str | None = None,
    resets: tuple[str, ...] = (),
    keep: bool = False,
    warn: bool = True,
    **kwargs: Any,
) -> Any:
    """A widget whose value lives in the URL query parameter `param`: the dashboard's one URL binding.

    The value is the URL's (`parse`d; None or an exception: unusable), else the session's, else
    `default`; with ``options=...`` only one of them is usable and with bounds it is clamped (`_fit`: no
    `parse` of its own needed for that); a URL value that cannot be used (unparsable, not an option, out of
    bounds) is replaced
    by the nearest usable one, with a warning naming parameter, value and what was used (unless
    `warn` is False: the sidebar words its own).  Changing the widget writes `fmt(value)` to the URL
    and clears the parameters named in `resets` (e.g. the page number when a filter changes).

    A page's own parameter (`keep` False) leaves the URL at its default.  The sidebar's (`keep` True)
    is always in the URL and remembered in session state across pages (a widget's own state is per
    page in Streamlit's multipage mode), so that a page opened without a query shows the same selection;
    an older text this session wrote is a browser URL lagging behind, not a request (`_stale`).
    """
    key = key or f"qp_{param}"
    remembered = st.session_state.setdefault(REMEMBERED, {})
    raw = query_param(param)
    parsed = None
    if raw is not None and not (keep and (raw == "" or _stale(param, raw))):
        try:
            parsed = parse(raw)
        except (TypeError, ValueError, OverflowError):
            parsed = None
    value = _fit(parsed, kwargs)
    if value is None:
        value = _fit(remembered.get(param) if keep else st.session_state.get(key), kwargs)
    if value is None:
        value = _fit(default, kwargs)
    if value is None:  # a default outside the widget's range or options
        value = list(kwargs["options"])[0] if kwargs.get("options") else kwargs.get("min_value", default)
    st.session_state[key] = value
    if keep:
        remembered[param] = value
        if st.query_params.get(param) != fmt(value) or not written_by_us(param, fmt(value)):
            _write(param, fmt(value))
    elif raw is not None and (parsed is None or value != parsed):
        if warn:
            url_notice(invalid_param_message(param, raw, fmt(value)))
        if value == default:
            st.query_params.pop(param, None)
        else:
            st.query_params[param] = fmt(value)

    def sync() -> None:
        new = st.session_state[key]
        if keep:
            remembered[param] = new
            _write(param, fmt(new))
        elif new == default or new is None or new == "":
            st.query_params.pop(param, None)
        else:
            st.query_params[param] = fmt(new)
        for other in resets:
            st.query_params.pop(other, None)
            st.session_state.pop(f"qp_{other}", None)

    return widget(label, key=key, on_change=sync, **kwargs)


SOURCE = "url_source"  # session state: the data source (content hash) of the last run that had one
BY_SOURCE = "url_by_source"  # session state: per data source, the values its data-bound parameters last had


def switch_source(source: str, params: tuple[str, ...]) -> dict[str, Any] | None:
    """At the start of a run on the data `source` (its content hash): when the last run had other data, the
    data-bound `params` (the movie, the models: what one dataset's names mean) take the values this session last
    had on `source`, else their defaults, instead of the other data's (a text the dashboard wrote to the URL for
    the other data is dropped; one a visitor typed or a link brought is a request, used and checked as always).
    Returns the other data's values when the source changed (to say what was not carried over), else None."""
    remembered = st.session_state.setdefault(REMEMBERED, {})
    memory = st.session_state.setdefault(BY_SOURCE, {})
    last = st.session_state.get(SOURCE)
    st.session_state[SOURCE] = source
    if last is None or last == source:
        return None
    before = {p: remembered[p] for p in params if p in remembered}
    memory[last] = before
    for param in params:
        if param in memory.get(source, {}):
            remembered[param] = memory[source][param]
        else:
            remembered.pop(param, None)
        if written_by_us(param, st.query_params.get(param)):
            st.query_params.pop(param, None)
    return before


def remember_source(source: str, values: dict[str, Any]) -> None:
    """Keep the data-bound parameters' values of this run for the data `source` (`switch_source` restores them)."""
    st.session_state.setdefault(BY_SOURCE, {})[source] = dict(values)


def _no_widget(label: str, key: str, on_change: Callable[[], None], **kwargs: Any) -> Any:
    """Stands in for a widget in `url_value`: shows nothing, gives the resolved value."""
    return st.session_state[key]


def url_value(
    param: str, default: Any, parse: Callable[[str], Any] = str, fmt: Callable[[Any], str] = str, **kwargs: Any
) -> Any:
    """A `keep` parameter that a page reads without showing its widget (the protocol outside Summary and Compare):
    resolved, remembered and kept in the URL by `url_widget`'s own rules, so that the page neither warns about it
    nor loses it.  `kwargs` bound it as the widget's would (``options=...``)."""
    return url_widget(_no_widget, "", param, default, parse, fmt, key=f"kept_{param}", keep=True, warn=False, **kwargs)
