"""Data is shown as text on every page, never as markup: on a copy of the golden store whose database,
container, query, design and key names are hostile Markdown and HTML, no page produces a link, an image or
an HTML element from them, in any Markdown-rendered element (text, captions, headers, alerts, labels) or
figure text.

Streamlit renders Markdown in the browser (CommonMark plus GFM; raw HTML escaped unless `unsafe_allow_html`);
here each element's Markdown is rendered with markdown-it's CommonMark, which agrees on links, images and
emphasis, and the hostile text must come out literally.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from streamlit.testing.v1 import AppTest

from dashboard.display import markdown_code, markdown_text
from tests.dashboard.apptest import APP, MARKDOWN, run_app, shown, text_of
from tests.golden.make_store import GOLDEN_STORE

PAGES = re.findall(r'st\.Page\(\s*"([^"]+)"', APP.read_text())
HOSTILE = " [clickme](https:evil.example) ![pixel](https://evil.example/p.png) <a href='https://evil.example'>html</a> **bold** _it_"
NAMED = ("database", "container", "query_name", "query", "design")  # columns holding a name as it is
KEYS = ("partition_key",)  # JSON arrays of key values
PROSE = ("message", "verdict", "migration", "lint", "fix", "why")  # text naming the names


def hostile(name: str) -> str:
    return f"{name}{HOSTILE}" if name else name


def rewrite(frame: Any, names: re.Pattern[str]) -> Any:
    for column in frame.columns:
        if column in NAMED:
            frame[column] = frame[column].map(lambda v: hostile(v) if isinstance(v, str) else v)
        elif column in KEYS:
            frame[column] = frame[column].map(_hostile_key)
        elif column in PROSE:
            frame[column] = frame[column].map(lambda v: names.sub(lambda m: hostile(m.group()), v) if v else v)
    return frame


def _hostile_key(value: object) -> object:
    if not isinstance(value, str) or not value.startswith("["):
        return value
    return json.dumps([hostile(part) if isinstance(part, str) else part for part in json.loads(value)])


@pytest.fixture
def hostile_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The golden store with every name made hostile, consistently across its tables."""
    tables = {path.name: DeltaTable(str(path)).to_pyarrow_table() for path in GOLDEN_STORE.iterdir() if path.is_dir()}
    seen = {
        value
        for table in tables.values()
        for column in NAMED
        if column in table.column_names
        for value in table.column(column).to_pylist()
        if value
    }
    names = re.compile("|".join(re.escape(name) for name in sorted(seen, key=len, reverse=True) if len(name) > 2))
    store = tmp_path / "hostile"
    for name, table in tables.items():
        frame = rewrite(table.to_pandas(), names)
        write_deltalake(str(store / name), pa.Table.from_pandas(frame, schema=table.schema), partition_by=["date"])
    monkeypatch.setenv("RUSCOPE_STORE", str(store))
    return store


def markdown_sources(app: AppTest) -> list[str]:
    """The Markdown of every element Streamlit renders as Markdown."""
    sources = [e.value for kind in ("markdown", "caption", "title", "header", "subheader") for e in getattr(app, kind)]
    sources += [e.value for kind in ("info", "warning", "error", "success") for e in getattr(app, kind)]
    sources += [e.label for e in app.expander] + [e.label for e in app.tabs] + [e.label for e in app.metric]
    for kind in ("selectbox", "multiselect", "radio", "text_input", "button"):
        sources += [e.label for e in getattr(app, kind)]
    sources += [option for e in app.radio for option in e.options]  # radio options are Markdown too
    return sources


def figure_texts(app: AppTest) -> list[str]:
    """Every string in every figure (plotly draws <a>, <b> ... in titles, labels and hover text)."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for element in app.get("plotly_chart"):
        walk(json.loads(element.proto.spec))
    return found


def check_no_markup(app: AppTest, page: str) -> int:
    """Assert no hostile text became markup; the number of elements that showed hostile text."""
    assert not app.exception, [e.message for e in app.exception]
    shown = 0
    for source in markdown_sources(app):
        rendered = MARKDOWN.render(source)
        assert "<a " not in rendered and "<img" not in rendered, (page, source)
        if "clickme" in source:
            shown += 1
            text = text_of(rendered)
            assert HOSTILE.strip() in text, (page, source, text)
    for text in figure_texts(app):
        if "clickme" in text:
            shown += 1
            assert "<a " not in text and "<b>" not in text, (page, text)
    return shown


@pytest.mark.parametrize("page", PAGES)
def test_hostile_names_show_as_text_on_every_page(page: str, hostile_store: Path) -> None:
    app = run_app(page)
    shown = check_no_markup(app, page)
    database = next(o for o in app.selectbox(key="frame_database").options if "clickme" in o)
    app.selectbox(key="frame_database").select(database).run()
    container = next(o for o in app.selectbox(key="frame_container").options if "clickme" in o)
    app.selectbox(key="frame_container").select(container).run()
    shown += check_no_markup(app, page)
    assert shown, f"{page}: no hostile name shown anywhere (the test checks nothing)"


def test_markdown_text_and_code_show_text_as_written() -> None:
    for text in (HOSTILE, "a\\b `c` $x$ # h", "1. not a list", "12) nor this", "- nor this", "# no heading", "```"):
        assert shown(markdown_text(text)) == text.strip()
        assert shown(markdown_code(text)) == text.strip()
    for bare in ("https://evil.example", "www.evil.example", "x@evil.example"):  # GFM would link them
        assert markdown_text(bare) in ("https\\://evil.example", "www\\.evil.example", "x\\@evil.example")
