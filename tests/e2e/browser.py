"""What the end-to-end browser test needs around Playwright: Chromium, the dashboard's pages, a running
`ruscope dashboard`, and the checks a page must pass.

Where the browser comes from: Debian's `chromium` package (`make browser` installs it with apt-get; `.ci/run`
runs that), driven by Playwright's Python API with `executable_path`, never a browser Playwright downloads
(there is no network). RUSCOPE_CHROMIUM names another executable. Without Chromium or Playwright the test is
skipped with that reason, unless RUSCOPE_REQUIRE_CHROMIUM is set (`.ci/run` sets it): then it fails, so CI
cannot go green by skipping it.
"""

from __future__ import annotations

import ast
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parents[2]
APP = REPO / "dashboard" / "app.py"
MISSING_CHROMIUM = "Chromium is not installed: run `make browser` (Debian's chromium package) or set RUSCOPE_CHROMIUM"
MISSING_PLAYWRIGHT = "Playwright is not installed: run `make install` (requirements-dev.txt pins it)"

# A plotly chart is drawn when its DOM holds a trace group (scatter, bar: g.trace; heatmap: g.hm with its
# image) and its data holds at least one point: an empty figure still draws axes, never a trace with points.
# The points are counted in `_fullData`, the traces as plotly.js drew them: in `data`, a numpy array sent by
# plotly.py is still its base64 form ({dtype, bdata}, no length).
DRAWN_FIGURES_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter(plot => {
  const marks = plot.querySelectorAll('g.trace, g.hm image, .gl-canvas').length;
  const points = (plot._fullData || []).reduce((n, trace) =>
    n + Math.max(...['x', 'y', 'z', 'values'].map(k => (trace[k] || []).length)), 0);
  return marks > 0 && points > 0;
}).length
"""

# Every text plotly drew in a figure's SVG (titles, ticks, legend, colour bar, annotations, bar labels), with
# the size it is seen at: its computed font-size times the scale its transforms apply (plotly shrinks a bar's
# label to fit by a transform, not by its font-size), whether it reaches outside its figure (cut), and whether
# it is a tick of a time axis in fractions of a second ("10:00:00.0005"). A figure is named by its widget key.
FIGURE_TEXTS_JS = """
() => Array.from(document.querySelectorAll('.js-plotly-plot')).flatMap((plot, n) => {
  const owner = plot.closest('[class*="st-key-"]');
  const key = owner ? Array.from(owner.classList).find(c => c.startsWith('st-key-')).slice(7) : `figure ${n}`;
  const frame = plot.querySelector('svg.main-svg').getBoundingClientRect();
  const layout = plot._fullLayout || {};
  const timeTicks = new Set(Object.keys(layout).filter(k => /^[xy]axis\\d*$/.test(k) && layout[k].type === 'date')
    .flatMap(k => Array.from(plot.querySelectorAll(`g.${layout[k]._id}tick text`))));
  return Array.from(plot.querySelectorAll('svg.main-svg text'))
    .filter(t => t.textContent.trim() && t.getClientRects().length)
    .map(t => {
      const m = t.getScreenCTM();
      const scale = m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1;
      const r = t.getBoundingClientRect();
      return {
        key, text: t.textContent.trim().slice(0, 60),
        px: Math.round(parseFloat(getComputedStyle(t).fontSize) * scale * 10) / 10,
        cut: r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1,
        subsecond: timeTicks.has(t) && /:\\d\\d\\.\\d/.test(t.textContent),
      };
    });
})
"""
MIN_FONT_PX = 11  # issue 23: every figure's labels at least 11 px (dashboard.figures.canvas.MIN_FONT_PX)


def text_problems(page: str, texts: list[dict[str, object]]) -> list[str]:
    """What is wrong with a page's figure texts (`FIGURE_TEXTS_JS`), one line each, naming the figure."""
    problems = []
    for text in texts:
        where = f"{page}: figure {text['key']}: {text['text']!r}"
        if float(str(text["px"])) < MIN_FONT_PX:
            problems.append(f"{where} is drawn at {text['px']} px (under {MIN_FONT_PX} px)")
        if text["cut"]:
            problems.append(f"{where} reaches outside its figure (cut)")
        if text["subsecond"]:
            problems.append(f"{where} is a time tick in fractions of a second")
    return problems


@dataclass(frozen=True)
class Page:
    """A page of `dashboard/app.py`'s PAGES, as the browser reaches it."""

    file: str  # "views/fleet.py"
    title: str
    default: bool

    @property
    def name(self) -> str:
        return Path(self.file).stem

    @property
    def url_path(self) -> str:
        """Streamlit's url path of a page given by file: the file's stem ("" for the default page)."""
        return "" if self.default else self.name


def dashboard_pages(app_file: Path = APP) -> list[Page]:
    """Every `st.Page("views/x.py", title=..., default=...)` call in the app, read without importing it
    (importing would run Streamlit), so a page added to PAGES is covered with no change here."""
    pages = []
    for node in ast.walk(ast.parse(app_file.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page" and node.args:
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            options = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            title = options.get("title") or Path(first.value).stem.replace("_", " ").capitalize()
            pages.append(Page(file=first.value, title=str(title), default=bool(options.get("default", False))))
    return pages


def find_chromium() -> str | None:
    """RUSCOPE_CHROMIUM, else `chromium` on PATH (Debian's /usr/bin/chromium), or None."""
    named = os.environ.get("RUSCOPE_CHROMIUM")
    if named:
        return named if Path(named).is_file() and os.access(named, os.X_OK) else None
    return shutil.which("chromium")


def chromium_required() -> bool:
    return os.environ.get("RUSCOPE_REQUIRE_CHROMIUM", "").lower() in {"1", "true", "yes"}


def artifacts_dir(default: Path) -> Path:
    """$RUSCOPE_ARTIFACTS, else `default` (the test's tmp_path): tests write nothing into the repository."""
    return Path(os.environ.get("RUSCOPE_ARTIFACTS") or default)


@dataclass(frozen=True)
class RunningDashboard:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@contextmanager
def running_dashboard(
    store: Path | str, workdir: Path, *, timeout: float = 60.0, options: Sequence[str] = ()
) -> Iterator[RunningDashboard]:
    """`<venv>/bin/ruscope dashboard --store STORE --port PORT [options]` started in `workdir`, answering on PORT.
    On exit it is killed if still running (the test stops it itself with SIGTERM and checks it exited)."""
    executable = Path(sys.executable).with_name("ruscope")
    log = workdir / "dashboard.log"
    for _attempt in range(3):  # a free port can be taken by someone else before Streamlit binds it
        port = _free_port()
        command = [str(executable), "dashboard", "--store", str(store), "--port", str(port), *options]
        with log.open("ab") as out:
            process = subprocess.Popen(
                command,
                cwd=workdir,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            if _wait_until_healthy(process, port, timeout):
                yield RunningDashboard(process, port, log)
                return
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.returncode != 2:  # 2: the port was taken (said before Streamlit starts); else no retry
            break
    raise RuntimeError(f"ruscope dashboard did not start ({' '.join(command)}); its output:\n{log.read_text()}")


def descendants(pid: int) -> set[int]:
    """The ids of every living process below `pid` (from /proc; empty where there is no /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, exited but not yet reaped by its parent, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _wait_until_healthy(process: subprocess.Popen[bytes], port: int, timeout: float) -> bool:
    """True once Streamlit's health endpoint answers "ok"; False if the process exited or time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    return False
