"""The kweval dashboard (Streamlit): `app.py` is the shell, `dashboard/views/*.py` are the pages.

Kept outside `kweval/` because it imports streamlit (the core never does).
Pages import what they share from `dashboard.context`; `page_context` is
re-exported here for brevity.
"""

from dashboard.context import Ctx, page_context

__all__ = ["Ctx", "page_context"]
