"""Dashboard tests: Streamlit AppTest runs of each page against a store in a temp directory."""
