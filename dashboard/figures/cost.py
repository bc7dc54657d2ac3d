"""Pure plotly builders of the Cost page: frames from `analysis.cost.summary` in, a `go.Figure` out.

No Streamlit, no I/O: tests assert on the traces. Money is drawn in the frame's currency per month, to the
cent in the hover text.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.canvas import empty_note, note_font, readable

THROUGHPUT_COLOR, STORAGE_COLOR = "#1f77b4", "#9467bd"
BILL_COLOR, USED_COLOR, BEST_COLOR, HELD_COLOR = "#1f77b4", "#7f7f7f", "#d62728", "#2ca02c"


@readable
def build_unit_bill_figure(units: pd.DataFrame, *, top: int = 15, title: str | None = None) -> go.Figure:
    """The month as billed of the `top` dearest throughput units (`analysis.cost.summary.summarize_units`),
    as horizontal bars stacked throughput then storage, the dearest on top; a unit without a storage
    snapshot draws no storage bar."""
    currency = str(units["currency"].iloc[0]) if not units.empty else ""
    figure = go.Figure()
    figure.update_layout(
        title=title, barmode="stack", xaxis_title=f"{currency} per month".strip(), legend_title_text=""
    )
    shown = units.head(top)
    if shown.empty:
        return empty_note(figure, "No throughput unit billed in this view.")
    labels = shown["unit"].astype(str).tolist()
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1])
    for column, name, color in (("monthly", "throughput, as billed", THROUGHPUT_COLOR),
                                ("storage_monthly", "storage", STORAGE_COLOR)):  # fmt: skip
        values = shown[column].astype(float)
        figure.add_trace(
            go.Bar(
                x=[None if pd.isna(v) else float(v) for v in values],
                y=labels,
                name=name,
                orientation="h",
                marker_color=color,
                hovertemplate="%{y}<br>" + name + f" %{{x:,.2f}} {currency} a month<extra></extra>",
            )
        )
    return figure


@readable
def build_reservation_figure(
    curve: pd.DataFrame,
    *,
    best_ru_s: float,
    currency: str,
    held_monthly: float = math.nan,
    title: str | None = None,
) -> go.Figure:
    """The reservation planner's curve (`analysis.cost.summary.ReservationOutlook.curve`): the month's
    throughput bill (left axis) and the share of hours that use the whole reservation (right axis, %)
    against the RU/s reserved, the best size marked; `held_monthly`, the month with the reservations held,
    as a dashed line when given."""
    figure = go.Figure()
    figure.update_layout(
        title=title,
        xaxis_title="reserved RU/s (list-price RU/s: autoscale x 1.5, every region)",
        yaxis_title=f"{currency} per month",
        legend={"title": {"text": ""}, "orientation": "h", "yanchor": "top", "y": -0.3, "x": 0},
        yaxis2={"title": {"text": "hours fully used (%)"}, "overlaying": "y", "side": "right", "range": [0, 105],
                "tickmode": "linear", "tick0": 0, "dtick": 25, "showgrid": False, "automargin": True},
    )  # fmt: skip
    if curve.empty:
        return empty_note(figure, "No hours of provisioned throughput in this view.")
    sizes = curve["ru_s"].astype(float).to_numpy()
    figure.add_trace(
        go.Scatter(
            x=sizes,
            y=curve["monthly"].astype(float).to_numpy(),
            name="throughput bill with the reservation",
            mode="lines",
            line={"color": BILL_COLOR},
            hovertemplate="%{x:,.0f} RU/s reserved<br>%{y:,.2f} " + currency + " a month<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=sizes,
            y=(curve["hours_fully_used"].astype(float) * 100).to_numpy(),
            name="hours that use all of it",
            mode="lines",
            yaxis="y2",
            line={"color": USED_COLOR, "dash": "dot"},
            hovertemplate="%{x:,.0f} RU/s reserved<br>%{y:.1f}% of the hours use all of it<extra></extra>",
        )
    )
    best = curve[curve["ru_s"].astype(float).eq(best_ru_s)]
    if not best.empty:
        figure.add_trace(
            go.Scatter(
                x=best["ru_s"].astype(float).to_numpy(),
                y=best["monthly"].astype(float).to_numpy(),
                name=f"best: {best_ru_s:,.0f} RU/s",
                mode="markers",
                marker={"color": BEST_COLOR, "size": 12, "symbol": "diamond"},
                hovertemplate="best: %{x:,.0f} RU/s reserved<br>%{y:,.2f} " + currency + " a month<extra></extra>",
            )
        )
    if not math.isnan(held_monthly):
        figure.add_hline(
            y=held_monthly,
            line={"color": HELD_COLOR, "dash": "dash"},
            annotation={"text": f"with the reservations held: {held_monthly:,.2f} {currency}", "font": note_font()},
        )
    return figure
