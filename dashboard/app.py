"""The ruscope dashboard's frame: it routes the pages and asks once, in the sidebar, what they all show.

The store, the time range (a preset or a custom start and end: one `analysis.scope.Window`), the scope (database, container) and, for an account in several regions, the
region of the Azure Monitor figures are chosen here and published in
`st.session_state` (the contract is in `state.py`) before the page runs; pages read them with
`state.frame_state()` and have no store or scope widgets of their own. Adding a page is one line in
`PAGES` (see README.md).

Run: `ruscope dashboard --store DIR`, or `RUSCOPE_STORE=DIR streamlit run dashboard/app.py`.
"""

from pathlib import Path

import streamlit as st

from dashboard import state, widgets
from dashboard.alerts_banner import render_alert_banner
from dashboard.loaders.tables import load_region_choices, load_scope_choices

# a local image: a `:material/...:` page icon makes the browser fetch the favicon from fonts.gstatic.com
FAVICON = str(Path(__file__).with_name("favicon.png"))
st.set_page_config(page_title="ruscope", page_icon=FAVICON, layout="wide")

PAGES = [
    st.Page("views/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("views/query_costs.py", title="Query costs", icon=":material/payments:"),
    st.Page("views/hot_partitions.py", title="Hot partitions", icon=":material/local_fire_department:"),
    st.Page("views/fleet.py", title="Fleet", icon=":material/lan:"),
    st.Page("views/storage.py", title="Storage", icon=":material/database:"),
    st.Page("views/throttling.py", title="Throttling", icon=":material/speed:"),
    st.Page("views/cost.py", title="Cost", icon=":material/attach_money:"),
    st.Page("views/reports.py", title="Reports", icon=":material/summarize:"),
    st.Page("views/advisor.py", title="Advisor", icon=":material/key:"),
]

page = st.navigation(PAGES)
store = widgets.render_store_picker()
window = widgets.render_time_range_picker()
if window is None:  # a custom range that ends before it starts: the picker said so on the page
    st.stop()
scope = widgets.render_scope_picker(load_scope_choices(store, window))
names = tuple(load_region_choices(store, window, scope.account))
region = widgets.render_region_picker(list(names))
view = state.FrameState(store=store, window=window, scope=scope, region=region, regions=names)
state.publish(view)
render_alert_banner(view)  # the open alerts of the scope, above every page
page.run()
