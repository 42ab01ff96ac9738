"""The kweval dashboard (Streamlit): `app.py` is the shell, `dashboard/views/*.py` are the pages.

Kept outside `kweval/` because it imports streamlit (the core never does).
Pages import what they share from `dashboard.context`; `Ctx` and
`page_context` are re-exported here for brevity, loaded on first use so that
the presentation modules without streamlit (escape, highlight, keyword_html,
selection, links, review_tables, style) import without it.
"""

from __future__ import annotations

__all__ = ["Ctx", "page_context"]


def __getattr__(name: str):
    if name in __all__:
        from dashboard import context

        return getattr(context, name)
    raise AttributeError(f"module 'dashboard' has no attribute {name!r}")
