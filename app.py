"""kweval dashboard: `streamlit run app.py` (embedded demo), `streamlit run app.py -- --data PATH`.

The main script of Streamlit's classic multipage mode: the pages are the files in `pages/` (served at
`/summary`, `/explorer`, `/ndcg`, `/compare`, `/data`, `/parity`), each drawing the shared sidebar of
`dashboard.sidebar` itself, so a link straight into a page works as the first request to a server.
Streamlit's own page list is hidden (`.streamlit/config.toml`); this script only sends a visitor of `/`
on to the Summary with the query they came with (the selection remembered by the session fills the rest).
"""

from __future__ import annotations

import streamlit as st

from dashboard.sidebar import PAGE_FILES

st.set_page_config(page_title="kweval", page_icon=":material/key:", layout="wide")
st.switch_page(PAGE_FILES["summary"], query_params=st.query_params.to_dict())
