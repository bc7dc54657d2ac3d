"""The ruscope dashboard: a router only. Each page is a file in `pages/` (see README.md).

Run: `ruscope dashboard --store DIR`, or `RUSCOPE_STORE=DIR streamlit run dashboard/app.py`.
"""

import streamlit as st

st.set_page_config(page_title="ruscope", page_icon=":material/query_stats:", layout="wide")

PAGES = [
    st.Page("pages/query_costs.py", title="Query costs", icon=":material/payments:", default=True),
]

st.navigation(PAGES).run()
