"""Advisor: the candidate partition-key designs of one stored advice side by side: the ranking and the
verdict on the three criteria, RU per query and for the workload mix, the write skew per design as a
heatmap over its physical partitions, the largest logical partition projected against 20 GB, and the
winner's container definition, lint and migration outline, and the sample's measured bias (how its
feed ranges and `_ts` windows compare with the container's documents). Each table has its CSV download.

Layout only: the advice comes from `ruscope advise` (the `advice_*` tables), read for all time (an advice
is made once, before a migration, not collected continuously) and cut to the frame's account and
database; the shaping is `analysis.advice`, the figures `dashboard.figures.advisor`. Every widget has a
key (tests drive them by key).
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from analysis import advice
from analysis.scope import Scope
from dashboard import widgets
from dashboard.display import markdown_code, markdown_text
from dashboard.figures.advisor import (
    build_limit_projection_figure,
    build_ru_per_query_figure,
    build_skew_heatmap_figure,
)
from dashboard.loaders.tables import load_view
from dashboard.state import FrameState, frame_state

HOW = "Compare candidate partition keys on a document sample and the config's queries (an [advisor] section)"
COMMANDS = [
    "ruscope advise --config ruscope.toml --sample docs.jsonl   # or --from-account to sample the container",
]
ABOUT = """Each design was measured in-process on the emulator's engine (the same hashing, placement,
routing and RU model as the server) on the same document sample and workload: **RU** is one execution of
each query, and the weighted mix by the queries' `rate_per_s`; the **skew** is each physical partition's
share of the sample's writes against an even 1/P; **the 20 GB projection** grows the largest logical
partition at the stated growth. The verdict follows the partition-key guides' three criteria:
cardinality, write distribution, and alignment with the dominant queries (plus the 20 GB limit)."""

_NUMBER, _TEXT = st.column_config.NumberColumn, st.column_config.TextColumn
DESIGN_TABLE = {
    "rank": _NUMBER("rank"),
    "design": _TEXT("design"),
    "kind": _TEXT("kind"),
    "origin": _TEXT("origin"),
    "flags": _TEXT("fails"),
    "workload_ru": _NUMBER("RU / query (mix)", format="%.2f"),
    "partitions": _NUMBER("partitions"),
    "hottest_partition_share": _NUMBER("hottest partition % of writes", format="%.1f"),
    "even_share": _NUMBER("even %", format="%.1f"),
    "hottest_key_share_now": _NUMBER("hottest key % of current writes", format="%.1f"),
    "throttles_at_share_of_ru": _NUMBER("throttles at % of RU/s", format="%.0f"),
    "largest_logical_gb": _NUMBER("largest logical GB", format="%.3f"),
    "days_to_limit": _NUMBER("days to 20 GB", format="%.0f"),
    "cardinality": _TEXT("distinct keys per level"),
}
QUERY_TABLE = {
    "design": _TEXT("design"),
    "query": _TEXT("query"),
    "routing": _TEXT("routing"),
    "request_charge": _NUMBER("RU", format="%.2f"),
    "partitions": _NUMBER("partitions reached"),
    "total_partitions": _NUMBER("of"),
    "fix": _TEXT("fix when it fans out", width="large"),
}
PERCENTS = ["hottest_partition_share", "even_share", "hottest_key_share_now", "throttles_at_share_of_ru"]


def read_advice(view: FrameState) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, tuple[str, ...]]:
    """The stored advice of the frame's account and database, all time (module docstring)."""
    whole = FrameState(view.store, scope=Scope(view.scope.database, None, view.scope.account))
    tables = [
        load_view(whole, name, columns=columns)
        for name, columns in (
            ("advice_designs", advice.DESIGN_COLUMNS),
            ("advice_queries", advice.QUERY_COLUMNS),
            ("advice_partitions", advice.PARTITION_COLUMNS),
        )
    ]
    messages = tuple(dict.fromkeys(m for t in tables for m in t.warnings))
    return tables[0].frame, tables[1].frame, tables[2].frame, messages


def pick_run(runs: pd.DataFrame, container: str | None) -> str:
    """The advice to show: the newest of the scope's container when it has one, else a picker's choice."""
    preferred = runs[runs["container"] == container] if container is not None else runs
    ordered = pd.concat([preferred, runs]).drop_duplicates("run_id")
    labels = {str(run["run_id"]): advice.run_label(run) for _, run in ordered.iterrows()}
    picked = st.selectbox("Advice", list(labels), format_func=labels.__getitem__, key="advisor_run")
    return picked if picked is not None else next(iter(labels))  # None only without options; runs has rows


def render_designs(designs: pd.DataFrame) -> None:
    best = designs.iloc[0]
    text = f"**Advice: {markdown_text(best['design'])}**. {markdown_text(best['verdict'])}"
    st.success(text, icon=":material/recommend:")
    shown = designs.assign(**{c: designs[c].astype(float) * 100 for c in PERCENTS})
    widgets.render_table(
        shown[list(DESIGN_TABLE)], key="advisor_designs", file_name="advice-designs.csv",
        column_config=DESIGN_TABLE, csv=designs,
    )  # fmt: skip
    with st.expander("Every verdict in words"):
        for _, row in designs.iterrows():
            why = f": {markdown_text(row['why'])}" if row["why"] else ""
            design, origin, verdict = (markdown_text(row[name]) for name in ("design", "origin", "verdict"))
            st.markdown(f"**{row['rank']}. {design}** ({origin}{why}): {verdict}")


def render_sample(designs: pd.DataFrame) -> None:
    """The sample's bias as its reader measured it (`collectors.sample`), when the advice stored it."""
    notes = designs["sample"].iloc[0] if "sample" in designs else None
    if isinstance(notes, str) and notes:
        with st.expander("The sample the designs were measured on", expanded=True):
            st.markdown("\n".join(f"- {markdown_text(line)}" for line in notes.splitlines()))


def render_queries(queries: pd.DataFrame, order: list[str]) -> None:
    st.subheader("RU per query, per design")
    widgets.render_figure(build_ru_per_query_figure(advice.ru_matrix(queries, order)), key="advisor_ru_chart")
    widgets.render_table(
        queries[list(QUERY_TABLE)], key="advisor_queries", file_name="advice-queries.csv",
        column_config=QUERY_TABLE, csv=queries,
    )  # fmt: skip


def render_skew(partitions: pd.DataFrame, designs: pd.DataFrame, order: list[str]) -> None:
    st.subheader("Write skew per design")
    st.caption("Each physical partition's share of the sample's writes; the hottest throttles first.")
    even = designs.set_index("design")["even_share"]
    figure = build_skew_heatmap_figure(advice.skew_matrix(partitions, order), even)
    widgets.render_figure(figure, key="advisor_skew_chart")
    widgets.render_csv_download(partitions, file_name="advice-partitions.csv", key="advisor_partitions_download")


def render_limits(designs: pd.DataFrame) -> None:
    st.subheader("Largest logical partition against 20 GB")
    growth = float(designs["growth_gb_per_day"].iloc[0])
    st.caption(f"At the stated growth of {growth:g} GB/day for the container, shared as the sample's keys grow.")
    figure = build_limit_projection_figure(advice.limit_projection(designs))
    widgets.render_figure(figure, key="advisor_limits_chart")


def render_winner(designs: pd.DataFrame, queries: pd.DataFrame) -> None:
    best = designs.iloc[0]
    st.subheader(f"To create: the container for {markdown_text(best['design'])}")
    if best["definition"]:
        st.code(json.dumps(json.loads(best["definition"]), indent=2), language="json")
    lint = queries[(queries["design"] == best["design"]) & (queries["lint"] != "")]
    if not lint.empty:
        st.markdown("**Lint of the workload's queries on it**")
        for row in lint.itertuples():
            st.markdown(f"- {markdown_code(str(row.query))}: {markdown_text(row.lint)}")
    if best["migration"]:
        st.markdown("**Migration** (a partition key cannot be changed)")
        steps = best["migration"].splitlines()
        st.markdown("\n".join(f"{i}. {markdown_text(step)}" for i, step in enumerate(steps, 1)))


st.title("Advisor")
view = frame_state()
all_designs, all_queries, all_partitions, messages = read_advice(view)
widgets.render_store_warnings(messages)
runs = advice.advice_runs(all_designs)
if runs.empty:
    widgets.render_empty_state(FrameState(view.store), what="partition-key advice", how=HOW, commands=COMMANDS)
else:
    st.caption(ABOUT)
    run_id = pick_run(runs, view.scope.container)
    designs = advice.ranked_designs(all_designs, run_id)
    order = designs["design"].tolist()
    queries = advice.of_run(all_queries, run_id, order)
    render_designs(designs)
    render_sample(designs)
    render_queries(queries, order)
    render_skew(advice.of_run(all_partitions, run_id, order), designs, order)
    render_limits(designs)
    render_winner(designs, queries)
