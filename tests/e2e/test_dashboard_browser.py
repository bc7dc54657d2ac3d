"""End to end: `ruscope dashboard`, started outside the repository, shows every page in real headless
Chromium with nothing fetched from any host but 127.0.0.1, each page's main figure drawn, every text of every
figure at least 11 px as drawn, none cut at its figure's edge and no time tick in fractions of a second
(issue 23), and stops on SIGTERM. One dashboard and one browser per store serve all its pages.

Screenshots of every page go to the test's tmp_path (RUSCOPE_ARTIFACTS picks another folder; never the
repository): `dashboard-<store>-<page>.png`, and the Hot partitions page with its logical keys on the log colour
scale as `dashboard-<store>-hot_partitions-log.png`. See tests/e2e/browser.py for where Chromium and Playwright
come from.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from tests.azurite import RunningAzurite
from tests.e2e.browser import (
    DRAWN_FIGURES_JS,
    FIGURE_TEXTS_JS,
    HOST,
    MISSING_CHROMIUM,
    MISSING_PLAYWRIGHT,
    Page,
    RunningDashboard,
    alive,
    artifacts_dir,
    chromium_required,
    dashboard_pages,
    descendants,
    find_chromium,
    running_dashboard,
    text_problems,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page as Tab
    from playwright.sync_api import Route

# Pages with no figure by design, each with the reason; such a page must show a table instead. Keep it short:
# a page listed here is still opened, screenshotted and checked for exceptions and external requests.
NO_FIGURE: dict[str, str] = {"reports": "the capacity-review report is tables and downloads only"}

# the logical keys' heatmap has been redrawn on its log scale (dashboard.figures.hot_partitions.log_colors)
SCALE_JS = """() => Array.from(document.querySelectorAll('.st-key-hot_keys_heatmap .js-plotly-plot'))
  .some(plot => (plot._fullData || []).some(t => ((t.colorbar || {}).title || {}).text === 'RU/s (log scale)'))"""
LOADED = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
VIEWPORT = {"width": 1400, "height": 900}
REMOTE_PAGES = ("overview", "hot_partitions", "reports")  # the az:// variant: cards, heatmaps, a report table
# the collected store's: the pages drawn from each table the real collectors wrote (executions and requests,
# metrics, partitions, logs); the demo's store, which holds every kind of row, opens every page
COLLECTED_PAGES = ("overview", "query_costs", "hot_partitions", "storage", "throttling")
PAGES_OF = {"collected": COLLECTED_PAGES, "azurite": REMOTE_PAGES}  # a store not named: every page


@pytest.fixture(scope="session")
def chromium() -> str:
    """Chromium's executable, once Playwright is known to be importable. Session-scoped, so that it is set
    up before the session's stores: a skipped test builds none."""
    executable = find_chromium()
    missing = MISSING_CHROMIUM if executable is None else None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing = missing or MISSING_PLAYWRIGHT
    if missing:
        if chromium_required():
            pytest.fail(f"RUSCOPE_REQUIRE_CHROMIUM is set but {missing}")
        pytest.skip(missing)
    assert executable is not None
    return executable


@pytest.fixture
def azurite_store(
    collected_store: Path, azurite: RunningAzurite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """The collected store's Delta tables copied as they are into a blob container in Azurite, named by its
    `az://` URI: what `ruscope dashboard --store az://...` reads (the environment reaches the dashboard)."""
    from azure.storage.blob import BlobServiceClient

    for name, value in {**azurite.env, "XDG_STATE_HOME": str(tmp_path / "state")}.items():
        monkeypatch.setenv(name, value)
    uri = azurite.uri_for("store")
    container, prefix = uri.removeprefix("az://").split("/", 1)
    with BlobServiceClient.from_connection_string(azurite.connection_string) as service:
        blobs = service.get_container_client(container)
        for path in sorted(p for p in collected_store.rglob("*") if p.is_file()):
            relative = path.relative_to(collected_store).as_posix()
            if not relative.startswith("_pending"):
                blobs.upload_blob(f"{prefix}/{relative}", path.read_bytes())
    return uri


@pytest.mark.timeout(240)
@pytest.mark.parametrize("store_name", ["collected", "demo", "azurite"])
def test_every_page_draws_in_chromium_with_no_external_request(
    chromium: str, store_name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """On the store `ruscope demo` builds, every page; on the store the real collectors wrote
    (tests/collected.py), the pages of `COLLECTED_PAGES`, one per table they write (every page's drawing is
    checked on the demo's store, and every page runs on the collected store through AppTest:
    tests/dashboard/test_every_page.py); on the collected store in Azure Blob Storage (Azurite, `az://`), the
    pages of `REMOTE_PAGES`: what that variant adds is the remote read, which the pages share, so it opens
    one page of each kind of figure. A page in Chromium costs seconds (its first run and its drawing)."""
    from playwright.sync_api import sync_playwright

    store: Path | str = request.getfixturevalue(f"{store_name}_store")

    pages = dashboard_pages()
    assert len(pages) >= 2, pages
    assert set(NO_FIGURE) <= {page.name for page in pages}, "NO_FIGURE names a page that is gone"
    for name, chosen in PAGES_OF.items():
        assert set(chosen) <= {page.name for page in pages}, f"PAGES_OF[{name!r}] names a page that is gone"
    if store_name in PAGES_OF:
        pages = [page for page in pages if page.name in PAGES_OF[store_name]]
    shots = artifacts_dir(tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    workdir = tmp_path / "elsewhere"  # outside the repository: .streamlit/config.toml is not found from here
    workdir.mkdir()
    for shadow in ("store", "analysis"):  # folders named like ruscope's packages (the demo's `store/`) shadow none
        (workdir / shadow).mkdir()
    external: list[str] = []

    with running_dashboard(store, workdir) as dashboard, sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=args)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.route("**/*", lambda route: _local_only(route, external))
            context.on("request", lambda request: _record_external(request.url, external))
            tab = context.new_page()
            tab.on("websocket", lambda socket: _record_external(socket.url, external))
            problems = [problem for page in pages for problem in _check_page(tab, dashboard, page, shots, store_name)]
        finally:
            browser.close()
        assert external == [], f"requests to hosts other than {HOST}: {external}"
        assert not problems, "\n".join([*problems, f"(screenshots in {shots}) the dashboard said:", dashboard.output()])
        _stop(dashboard)


def _check_page(tab: Tab, dashboard: RunningDashboard, page: Page, shots: Path, store_name: str) -> list[str]:
    """Open the page by its url path, wait for its script run to finish, screenshot it; what is wrong with it
    (every page is opened and screenshotted even when an earlier one failed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab.goto(f"{dashboard.url}/{page.url_path}")
    tab.wait_for_selector(LOADED, timeout=30_000)
    problems = []
    current = tab.locator('[data-testid="stSidebarNavLink"][aria-current="page"] [data-testid="stMarkdownContainer"]')
    if current.inner_text().strip() != page.title:
        problems.append(f"{page.name}: /{page.url_path} showed {current.inner_text().strip()!r}")
    errors = tab.locator('[data-testid="stException"]').all_inner_texts()
    problems += [f"{page.name}: an exception is shown: {error}" for error in errors]
    drawn, missing = (f"({DRAWN_FIGURES_JS})() > 0", "no plotly figure with data was drawn")
    if page.name in NO_FIGURE:
        drawn, missing = ("() => document.querySelector('[data-testid=\"stDataFrame\"] canvas')", "no table was drawn")
    try:
        tab.wait_for_function(drawn, timeout=15_000)
    except PlaywrightTimeout:
        problems.append(f"{page.name}: {missing}")
    problems += text_problems(page.name, tab.evaluate(FIGURE_TEXTS_JS))
    _screenshot(tab, shots / f"dashboard-{store_name}-{page.name}.png")
    if page.name == "hot_partitions":
        problems += _check_log_scale(tab, shots / f"dashboard-{store_name}-hot_partitions-log.png")
    return problems


def _check_log_scale(tab: Tab, shot: Path) -> list[str]:
    """The logical keys' heatmap redrawn on its log colour scale (the page's toggle), its texts checked too."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    toggle = tab.locator(".st-key-hot_keys_log_scale label")
    if not toggle.count():  # no logical keys in this store: no heatmap, no toggle
        return []
    toggle.click()
    tab.wait_for_selector(LOADED, timeout=30_000)
    try:
        tab.wait_for_function(SCALE_JS, timeout=15_000)
    except PlaywrightTimeout:
        return ["hot_partitions: the log colour scale was not drawn"]
    _screenshot(tab, shot)
    return text_problems("hot_partitions (log scale)", tab.evaluate(FIGURE_TEXTS_JS))


def _screenshot(tab: Tab, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main container, so the window is made as tall as it."""
    height = tab.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    tab.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], int(height))})
    tab.wait_for_timeout(300)  # plotly re-lays out to the new size
    tab.screenshot(path=str(path), full_page=True)
    tab.set_viewport_size(VIEWPORT)


def _local_only(route: Route, external: list[str]) -> None:
    """Let requests to 127.0.0.1 through; abort the rest, so nothing leaves the machine (recorded apart)."""
    if _is_external(route.request.url):
        route.abort()
    else:
        route.continue_()


def _record_external(url: str, external: list[str]) -> None:
    if _is_external(url):
        external.append(url)


def _is_external(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme not in {"data", "blob", "about"} and parts.hostname != HOST


def _stop(dashboard: RunningDashboard) -> None:
    """SIGTERM reaches Streamlit itself (`ruscope dashboard` execs it): it and every child must exit."""
    children = descendants(dashboard.process.pid)
    dashboard.process.send_signal(signal.SIGTERM)
    try:
        dashboard.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ruscope dashboard still runs 20 s after SIGTERM\n{dashboard.output()}")
    assert [pid for pid in children if alive(pid)] == [], "a child of the dashboard outlived SIGTERM"
