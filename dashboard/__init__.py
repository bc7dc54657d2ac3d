"""ruscope dashboard (Streamlit + plotly): `app.py` is the frame, `views/` lay out; see README.md."""
