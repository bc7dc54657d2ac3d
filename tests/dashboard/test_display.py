"""Tables show a missing value as a blank cell, keep numbers sortable, and format with the page's formats."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.display import MISSING_NUMBER, display_table


def cells(frame: pd.DataFrame, config: dict | None = None) -> list[list[str]]:
    styled, _ = display_table(frame, config)
    text = styled.to_string(delimiter="|").splitlines()
    return [row.split("|")[1:] for row in text[1:]]  # without the header and the index


def test_missing_values_are_blank_in_every_kind_of_column() -> None:
    frame = pd.DataFrame(
        {
            "text": ["a", None],
            "ru": [1234.5, np.nan],
            "count": pd.array([3, None], dtype="Int64"),
            "time": pd.to_datetime(["2026-05-01T10:00Z", None]),
            "mismatch": pd.array([True, None], dtype="boolean"),
        }
    )
    config = {"ru": st.column_config.NumberColumn("RU", format="%.2f")}
    assert cells(frame, config) == [["a", "1234.50", "3", "2026-05-01 10:00:00", "yes"], ["", "", "", "", ""]]


def test_numbers_stay_numbers_and_missing_sorts_first() -> None:
    styled, _ = display_table(pd.DataFrame({"ru": [2.0, np.nan, 1.0]}))
    assert styled.data["ru"].tolist() == [2.0, MISSING_NUMBER, 1.0]
    assert styled.data["ru"].sort_values().tolist()[0] == MISSING_NUMBER


def test_the_formats_move_from_the_config_into_the_table() -> None:
    config = {
        "change": st.column_config.NumberColumn("change %", format="%+.1f%%"),
        "risk": st.column_config.ProgressColumn("risk", min_value=0.0, max_value=1.0, format="%.2f"),
    }
    frame = pd.DataFrame({"change": [-3.25, 5.0], "risk": [0.5, 1.0]})
    _, shown_config = display_table(frame, config)
    assert cells(frame, config)[0][0] == "-3.2%" and cells(frame, config)[1][0] == "+5.0%"
    assert "format" not in shown_config["change"]["type_config"]
    assert shown_config["risk"]["type_config"]["format"] == "%.2f"  # a progress bar keeps its own
    assert config["change"]["type_config"]["format"] == "%+.1f%%"  # the page's config is not changed


def test_a_frame_without_missing_values_reads_the_same() -> None:
    frame = pd.DataFrame({"query": ["=cmd", "b"], "n": [1, 2]})
    assert cells(frame) == [["=cmd", "1"], ["b", "2"]]


def test_a_datetime_columns_moment_format_is_honoured() -> None:
    frame = pd.DataFrame({"full": pd.to_datetime(["2026-05-01T10:30Z", None])})
    config = {"full": st.column_config.DatetimeColumn("projected full", format="YYYY-MM-DD")}
    assert cells(frame, config) == [["2026-05-01"], [""]]
    named = {"full": st.column_config.DatetimeColumn("projected full", format="distance")}
    assert cells(frame, named)[0] == ["2026-05-01 10:30:00"]  # a named format: ours


def test_a_tiny_negative_rounded_to_zero_reads_zero() -> None:
    config = {"growth": st.column_config.NumberColumn("growth KB/day", format="%.1f")}
    frame = pd.DataFrame({"growth": [-0.00001, -0.04, -1.5, 0.0]})
    assert [row[0] for row in cells(frame, config)] == ["0.0", "0.0", "-1.5", "0.0"]
