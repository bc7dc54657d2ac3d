"""What `ruscope dashboard` runs: the frame (`app.py`) as a Streamlit `st.App`, with `HostGuard` in front of
every request (a foreign `Host` is refused, see `host_guard`). `streamlit run dashboard/serve.py` finds `app`
and serves it with uvicorn; `streamlit run dashboard/app.py` still works, without the Host check."""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from dashboard.host_guard import HostGuard

app = st.App(Path(__file__).with_name("app.py"), middleware=[Middleware(HostGuard)])
