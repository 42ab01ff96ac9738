"""What every dashboard page shares: the context that app.py hands over.

Kept outside `kweval/` because it imports streamlit (the core never does).
"""

from __future__ import annotations

import streamlit as st


def page_context():
    """The `Ctx` that app.py stored for this run.

    A fresh server's very first request may run a pages/ file on its own
    (Streamlit's v1 pages mode); then switch to st.navigation's mode, as
    app.py would, and rerun through app.py.
    """
    ctx = st.session_state.get("ctx")
    if ctx is None:
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
        st.rerun()
    return ctx
