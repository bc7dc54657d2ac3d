"""Pure plotly figure builders: frames from `analysis` in, a `go.Figure` out (`build_*_figure`).

No Streamlit, no I/O, no caching: tests assert on the traces these return. One module per page, named as
its view (`figures/fleet.py` draws `views/fleet.py`), and `canvas` for what every figure shares: times drawn
in UTC (naive timestamps, since plotly.js ignores time zones) and the note of a figure with nothing to draw.

To add a figure: a `build_<what>_figure(frame, *, title=None)` in its page's module (a new module for a new
page), drawing aggregates from `analysis`, not every row, and saying so through `canvas.empty_note` when the
frame is empty; assert its traces in the page's tests.
"""
