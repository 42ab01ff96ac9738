"""The kweval dashboard (Streamlit): `app.py` is the entry, `pages/*.py` (top level) are the pages.

Kept outside `kweval/` because it imports streamlit (the core never does).
`sidebar` draws what every page shares and builds its `Ctx`; `state` holds the
cached loaders and evaluation, `Ctx` and the one URL binding; the presentation
modules without streamlit (escape, highlight, keyword_html, selection, links,
review_tables, style) import without it.
"""
