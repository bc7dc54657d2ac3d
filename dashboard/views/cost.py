"""Cost: what the throughput units of the view cost in money (issue 24). The month as billed per account and
per unit (a container with RU/s of its own, or a shared database) with its storage; the alternatives over the
same measured hours (manual at the right RU/s, autoscale at the right max, serverless) with the hours each
would have throttled and the recommendation with its monthly saving, over the last 7, 30 or 90 days; the
reservation that minimises the fleet's bill; and the capacity report's findings ranked by the money they save.

Layout only: the store, time range, scope and region come from the frame (`dashboard.state`), the prices
from `state.pricing` (the config's `[pricing]`, else Microsoft's list price example, said on the page), the
data from `dashboard.loaders.cost`, the numbers from `analysis.cost` (`bill`, `summary`, `reservation`) and
`analysis.capacity.review`, the figures from `dashboard.figures.cost`. Every widget has a key.
"""

from __future__ import annotations

import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from analysis.cost import summary
from analysis.scope import window_text
from collectors.config.pricing import PricingSettings
from cosmoscore import billing
from dashboard import widgets
from dashboard.display import markdown_text, money_text
from dashboard.figures.cost import build_reservation_figure, build_unit_bill_figure
from dashboard.loaders.cost import CostData, load_cost
from dashboard.state import frame_state, pricing

HOW_TO_COLLECT = "Collect Azure Monitor metrics (and the partitions' storage) of the account into it, then open it here"
COLLECT = [
    'ruscope metrics --config ruscope.toml   # [store] uri = "{store}"',
    "ruscope storage --config ruscope.toml   # data and index per partition: the storage bill",
]
PRICED_AT = "Money in **{currency}** per month, at {note}."
YOUR_PRICES = "your `[pricing]` (the config `ruscope dashboard --config` was started with)"
BILL_SOURCE = """{window}. Each unit's measured clock hours are billed whole, as Azure bills them, and projected
to a month (x 730 / the hours measured). Throughput: the RU/s in force each hour (Azure Monitor's
ProvisionedThroughput; autoscale: the RU/s it scaled to, estimated as the hour's need, at least 10% of its
AutoscaleMaxThroughput), in every region of the account. Storage: data and index of the latest storage snapshot
(`ruscope storage`), in every region; blank without one. Rules and sources: docs/reference/pricing.md."""
ALTERNATIVES_HELP = """The same measured hours billed four ways, each projected to a month: **as billed**; **manual**
at the RU/s that keeps the busiest hour's need at 80% (never under the service minimum); **autoscale** at its
recommended max; **serverless** at the workload's RU, where it fits (one region, no shared offer, at most 5,000
RU/s a partition): serverless is an account's capacity mode, so it is weighed per account below, never
recommended for one container (docs/reference/pricing.md B16). **throttled h**: the hours whose need (the workload's RU/s, the hottest partition's busiest
second times the partitions, plus what the 429s were denied) is above what that offer holds; as billed also
counts every hour Azure Monitor counted 429s. The **recommendation** is the cheapest of as billed, manual and
autoscale that would not have throttled more hours than today; the **saving** is as billed less the
recommendation, a month."""
SERVERLESS_HELP = """Each account's throughput units as one new serverless account: their workload RU at the
serverless price against their throughput as billed, over the main window. It fits only when every unit fits
(one region, no shared offer, at most 5,000 RU/s a partition). A provisioned account cannot change to
serverless in place: this is a new account and a copy of the data (docs/reference/pricing.md B16)."""
RESERVATION_HELP = """The fleet's provisioned throughput each clock hour of the main window, in list-price RU/s
(what a reservation covers: manual RU/s as provisioned, autoscale's billed RU/s x {factor:g}, in 100 RU/s units, in
every region), priced with a reservation of each size at {discount:.0%} off (`[pricing]`
reservation_plan_discount): a reservation is paid every hour and covers only the hours that reach it, so a 100
RU/s unit pays while more than {share:.0%} of the hours use all of it. {hours} clock hours, {window}."""
FINDINGS_HELP = """The capacity report's actions (the Reports page, `ruscope report`) that change the throughput,
with what each saves a month against the month as billed (negative: it costs more), at the same prices, the
largest first."""
HIDDEN = ["account", "database", "container", "currency"]  # in the unit's name, in the column titles
FINDINGS_SHOWN = ["database", "container", "measure", "monthly_saving", "severity", "subject", "target", "target_unit",
                  "command", "detail", "risk"]  # fmt: skip
WINDOW_NAMES = {7: "last 7 days", 30: "last 30 days", 90: "last 90 days"}


def money(label: str, currency: str) -> ColumnConfig:
    return st.column_config.NumberColumn(f"{label} ({currency}/month)", format="%.2f")


def hours_column(label: str) -> ColumnConfig:
    return st.column_config.NumberColumn(label, format="%.0f")


def render_bill(data: CostData, currency: str) -> None:
    bill = summary.fleet_bill(data.main)
    units = summary.summarize_units(data.main)
    if bill is None:
        return
    st.subheader("Monthly bill, as billed")
    window = (f"The main window: the last {bill.window_days} days up to the latest measured hour, "
              f"{window_text(bill.start, bill.end)} (the hours each unit was measured in it: the table)")  # fmt: skip
    st.caption(BILL_SOURCE.format(window=window))
    cards = (
        ("Throughput", bill.monthly, "the RU/s as billed, every unit"),
        ("Storage", bill.storage_monthly, "data and index, latest snapshot"),
        ("Total", bill.total_monthly, f"{bill.units} throughput units"),
    )
    for column, (label, amount, about) in zip(st.columns(len(cards)), cards):
        column.metric(f"{label} a month", money_text(amount, currency), help=about)
    st.markdown("**By account**")
    accounts = summary.summarize_accounts(units)
    widgets.render_table(
        accounts.drop(columns="currency"), key="cost_accounts", file_name="cost-accounts.csv", csv=accounts,
        column_config={
            "account": st.column_config.TextColumn("account"),
            "units": st.column_config.NumberColumn("throughput units"),
            "monthly": money("throughput", currency),
            "storage_monthly": money("storage", currency),
            "total_monthly": money("total", currency),
        },
    )  # fmt: skip
    st.markdown("**By throughput unit** (a container with RU/s of its own, or a shared database)")
    widgets.render_figure(build_unit_bill_figure(units), key="cost_units_chart")
    first = ["unit", "offer", "monthly", "storage_monthly", "total_monthly", "throttled_hours", "hours"]
    shown = units[[*first, *[c for c in units.columns if c not in [*first, *HIDDEN]]]]  # the money first
    widgets.render_table(
        shown, key="cost_units", file_name="cost-units.csv", csv=units,
        column_config={
            "unit": st.column_config.TextColumn("throughput unit"),
            "unit_kind": st.column_config.TextColumn("kind"),
            "offer": st.column_config.TextColumn("offer"),
            "regions": st.column_config.NumberColumn("regions"),
            "window_days": st.column_config.NumberColumn("window (days)"),
            "start": st.column_config.DatetimeColumn("from (UTC)", timezone="UTC", format="YYYY-MM-DD HH:mm"),
            "end": st.column_config.DatetimeColumn("last hour (UTC)", timezone="UTC", format="YYYY-MM-DD HH:mm"),
            "hours": hours_column("hours measured"),
            "monthly": money("throughput", currency),
            "storage_monthly": money("storage", currency),
            "total_monthly": money("total", currency),
            "throttled_hours": hours_column("throttled h"),
        },
    )  # fmt: skip


def render_serverless_accounts(data: CostData, currency: str) -> None:
    accounts = summary.summarize_serverless_accounts(data.main)
    if accounts.empty:
        return
    st.markdown("**Serverless, per account**")
    st.caption(SERVERLESS_HELP)
    widgets.render_table(
        accounts.drop(columns="currency"), key="cost_serverless_accounts", file_name="cost-serverless.csv",
        csv=accounts,
        column_config={
            "account": st.column_config.TextColumn("account"),
            "units": st.column_config.NumberColumn("throughput units"),
            "monthly": money("as billed", currency),
            "serverless": money("serverless", currency),
            "fits": st.column_config.CheckboxColumn("fits"),
            "why_not": st.column_config.TextColumn("why not", width="large"),
            "monthly_saving": money("saving", currency),
        },
    )  # fmt: skip


BY_QUERY_HELP = """What each query and each logical key costs a month (`analysis.cost.queries`, the same figures
as the report's `query` and `key` rows). Under provisioned throughput an RU is paid through the RU/s it
occupies: a replayed query's RU per execution x its configured `rate_per_s`, a logged text's or key's RU over
the logs' window. **share of the bill**: those RU/s over the container's consumed RU/s, times the month as
billed (every consumer's share adds up to the bill, idle RU/s included); **at the manual rate**: the same RU/s
priced as provisioned throughput in every region (the most lowering the RU/s by that much saves);
**serverless**: its RU at the serverless price. A query without a rate has no money (its note says so)."""
QUERY_SHOWN = ["database", "container", "query", "monthly", "bill_share_pct", "manual_rate_monthly",
               "serverless_monthly", "ru_s", "ru_per_execution", "rate_per_s", "window", "note", "source"]  # fmt: skip
KEY_SHOWN = ["database", "container", "partition_key", "monthly", "bill_share_pct", "manual_rate_monthly",
             "serverless_monthly", "ru_s", "logged_ru", "window", "note"]  # fmt: skip


def render_by_query(data: CostData, currency: str) -> None:
    if data.queries.empty and data.keys.empty:
        return
    st.subheader("By query and by logical key")
    st.caption(BY_QUERY_HELP)
    config = {
        "query": st.column_config.TextColumn("query", width="medium"),
        "source": st.column_config.TextColumn("source", width="large"),
        "partition_key": st.column_config.TextColumn("logical key"),
        "monthly": money("share of the bill", currency),
        "bill_share_pct": st.column_config.NumberColumn("share (% of consumed RU/s)", format="%.1f"),
        "manual_rate_monthly": money("at the manual rate", currency),
        "serverless_monthly": money("serverless", currency),
        "ru_s": st.column_config.NumberColumn("RU/s", format="%.2f"),
        "ru_per_execution": st.column_config.NumberColumn("RU per execution", format="%.2f"),
        "rate_per_s": st.column_config.NumberColumn("executions/s", format="%.2f"),
        "logged_ru": st.column_config.NumberColumn("RU logged", format="%.0f"),
        "note": st.column_config.TextColumn("note", width="large"),
    }
    for frame, shown, key, name in (
        (data.queries, QUERY_SHOWN, "cost_queries", "cost-queries.csv"),
        (data.keys, KEY_SHOWN, "cost_keys", "cost-keys.csv"),
    ):
        if frame.empty:
            continue
        ranked = frame.sort_values("monthly", ascending=False, na_position="last", kind="stable")
        widgets.render_table(ranked[shown], key=key, file_name=name, csv=ranked, column_config=config)


def render_alternatives(data: CostData, currency: str) -> None:
    st.subheader("Alternatives and the recommendation")
    st.caption(ALTERNATIVES_HELP)
    choices = summary.window_choices(data.bills)
    main = summary.main_window_days(data.bills)
    days = st.radio(
        "Over the", choices, index=choices.index(main) if main in choices else 0, horizontal=True,
        format_func=lambda d: WINDOW_NAMES.get(d, f"last {d} days"), key="cost_window",
    )  # fmt: skip
    rows = summary.summarize_alternatives(data.bills, int(days))
    st.caption(
        "A unit whose store holds no more hours than a shorter window shows that window's row "
        "(window (days)): a longer one would repeat it."
    )
    first = ["unit", "recommendation", "monthly_saving", "monthly", "recommended_monthly"]
    widgets.render_table(
        rows[[*first, *[c for c in rows.columns if c not in [*first, *HIDDEN]]]], key="cost_alternatives",
        file_name=f"cost-alternatives-{days}d.csv", csv=rows,
        column_config={
            "unit": st.column_config.TextColumn("throughput unit"),
            "window_days": st.column_config.NumberColumn("window (days)"),
            "hours": hours_column("hours measured"),
            "offer": st.column_config.TextColumn("offer"),
            "monthly": money("as billed", currency),
            "throttled_hours": hours_column("throttled h"),
            "manual_ru_s": st.column_config.NumberColumn("manual RU/s", format="%.0f"),
            "manual_right": money("manual", currency),
            "manual_throttled_hours": hours_column("manual: throttled h"),
            "autoscale_max": st.column_config.NumberColumn("autoscale max RU/s", format="%.0f"),
            "autoscale_right": money("autoscale", currency),
            "autoscale_throttled_hours": hours_column("autoscale: throttled h"),
            "serverless": money("serverless", currency),
            "serverless_note": st.column_config.TextColumn("serverless", width="medium"),
            "serverless_throttled_hours": hours_column("serverless: throttled h"),
            "recommendation": st.column_config.TextColumn("recommendation"),
            "recommended_monthly": money("recommended", currency),
            "monthly_saving": money("saving", currency),
        },
    )  # fmt: skip


def render_reservation(outlook: summary.ReservationOutlook, settings: PricingSettings) -> None:
    st.subheader("Reserved capacity")
    if outlook.hours == 0 or outlook.start is None or outlook.end is None:
        st.caption("No hour of provisioned throughput in this view to plan a reservation on.")
        return
    prices, currency = settings.prices(), outlook.currency
    st.caption(RESERVATION_HELP.format(
        factor=prices.autoscale_factor, discount=outlook.discount, share=1 - outlook.discount,
        hours=outlook.hours, window=window_text(outlook.start, outlook.end),
    ))  # fmt: skip
    cards = [
        ("Best reservation", f"{outlook.plan.ru_s:,.0f} RU/s", "the size with the lowest bill (0: none pays)"),
        ("Throughput with it", money_text(outlook.best_monthly, currency), "a month: the reservation and the rest"),
        ("Pay-as-you-go", money_text(outlook.payg_monthly, currency), "a month without any reservation"),
        ("Saving", money_text(outlook.saving_monthly, currency), "a month"),
    ]
    if outlook.held_ru_s:
        cards.append(("With yours held", money_text(outlook.held_monthly, currency),
                      f"{outlook.held_ru_s:,.0f} RU/s reserved (`[[pricing.reservations]]`)"))  # fmt: skip
    for column, (label, value, about) in zip(st.columns(len(cards)), cards):
        column.metric(label, value, help=about)
    figure = build_reservation_figure(
        outlook.curve, best_ru_s=outlook.plan.ru_s, currency=currency, held_monthly=outlook.held_monthly
    )
    widgets.render_figure(figure, key="cost_reservation_chart")
    with st.expander("The curve as a table"):
        render_curve_table(outlook)


def render_curve_table(outlook: summary.ReservationOutlook) -> None:
    currency = outlook.currency
    widgets.render_table(
        outlook.curve, key="cost_reservation_curve", file_name="cost-reservation-curve.csv",
        column_config={
            "ru_s": st.column_config.NumberColumn("reserved RU/s", format="%.0f"),
            "hours_fully_used": st.column_config.NumberColumn("share of hours using all of it", format="%.4f"),
            "bill": st.column_config.NumberColumn(f"bill over the {outlook.hours} hours ({currency})", format="%.2f"),
            "monthly": money("a month", currency),
        },
    )  # fmt: skip


def render_findings(data: CostData, currency: str) -> None:
    st.subheader("Findings ranked by money")
    findings = summary.money_findings(data.actions)
    if findings.empty:
        st.caption("No finding of the capacity report changes the throughput in this view: nothing to save by it.")
        return
    st.caption(FINDINGS_HELP)
    widgets.render_table(
        findings[FINDINGS_SHOWN], key="cost_findings", file_name="cost-findings.csv",
        csv=findings,
        column_config={
            "severity": st.column_config.TextColumn("severity"),
            "measure": st.column_config.TextColumn("finding"),
            "detail": st.column_config.TextColumn("detail", width="large"),
            "target": st.column_config.NumberColumn("target"),
            "target_unit": st.column_config.TextColumn("target unit"),
            "monthly_saving": money("saving", currency),
            "command": st.column_config.TextColumn("command", width="large"),
            "risk": st.column_config.TextColumn("risk", width="large"),
        },
    )  # fmt: skip


def render_price_note(prices: billing.Prices) -> None:
    note = markdown_text(billing.LIST_PRICE_NOTE) if prices.list_example else YOUR_PRICES
    st.caption(PRICED_AT.format(currency=prices.currency, note=note))


st.title("Cost")
view = frame_state()
settings = pricing()
data = load_cost(view, settings)
widgets.render_store_warnings(data.warnings)
if data.empty:
    widgets.render_empty_state(view, what="throughput to bill", how=HOW_TO_COLLECT, commands=COLLECT)
elif data.main.empty:
    widgets.render_monitor_missing(
        what="throughput metrics",
        shown="no bill: the RU/s paid for are Azure Monitor's (ProvisionedThroughput, AutoscaleMaxThroughput)",
        adds="Metrics add the month as billed per container and shared database, its alternatives, the "
        "reservation that pays and the findings' savings.",
    )
else:
    currency = settings.prices().currency
    render_price_note(settings.prices())
    widgets.render_region_note(view)
    render_bill(data, currency)
    render_alternatives(data, currency)
    render_serverless_accounts(data, currency)
    render_reservation(data.reservation, settings)
    render_findings(data, currency)
    render_by_query(data, currency)
