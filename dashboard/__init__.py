"""ruscope dashboard (Streamlit + plotly): `app.py` is the frame, `views/` lay out the pages; see README.md.

Organised per concern, not per page: `views/` (one module per page, layout only), `loaders/` (the cached
reads: `tables` for the store, then a module for each page that caches its own reductions) and `figures/`
(pure `build_*_figure` builders: `canvas` for what they share, then one module per page). Why per concern:
each concern has its own rule (a view only lays out, `st.cache_data` sits only in `loaders/`, a figure
builder is pure and tested on its traces), and a folder per concern keeps each rule in one place; the
shared parts (`loaders.tables`, `figures.canvas`) would have no page to live in. Inside each folder a
page's module takes the page's name (`views/hot_partitions.py`, `loaders/hot_partitions.py`,
`figures/hot_partitions.py`). Frame-wide parts sit beside `app.py`: `state` (the session-state contract),
`widgets` (shared `render_*`), `display` (table formatting) and `alerts_banner`; `serve` runs the frame
behind `host_guard` (the Host check every request passes).
"""
