"""What a `metrics:getBatch` answer says beyond the SDK's public model, and the narrower filters that ask a
capped one again: the metrics collector's reading of the wire (`collectors.metrics` asks; all pure).

- A 200 can report one metric failed: its `errorCode` (not "Success") and `errorMessage`, with no time series
  (azure-monitor.md §7b R4, R11). `MetricsQueryResult` drops both, so `answered_errors` reads the raw body
  a `raw_response_hook` kept; `MetricFailed` carries the one line (`failure_line`).
- An answer holds at most `top` series and says nothing of the rest (§7b R3, R12): `series_count` tells an
  answer at the cap; `free_dimensions`, `only_split` and `pin` narrow its filter term by term, and
  `dimension_values` lists the values a narrower answer carries.
- `quoted`: a filter value, its round brackets spelled `%2528` / `%2529` (§7b R5, R13).

To read another field of the raw answer: a function over the body here, called from `Metrics.fetch`.
"""

from __future__ import annotations

from typing import Any


def quoted(value: str) -> str:
    """A filter value: quotes doubled, round brackets written `%2528`/`%2529`, as the metrics SDK documents
    for a bracket in a dimension value (azure-monitor.md §7b R5)."""
    escaped = value.replace("'", "''").replace("(", "%2528").replace(")", "%2529")
    return "'" + escaped + "'"


def free_dimensions(filter_text: str) -> list[str]:
    """The dimensions a filter splits by every value (`D eq '*'`), in filter order (pure)."""
    return [term.split(" eq ")[0] for term in filter_text.split(" and ") if term.endswith(" eq '*'")]


def pin(filter_text: str, dimension: str, value: str) -> str:
    """The filter with `dimension`'s every-value term pinned to `value` (pure)."""
    return filter_text.replace(f"{dimension} eq '*'", f"{dimension} eq {quoted(value)}", 1)


def only_split(filter_text: str, dimension: str) -> str:
    """The filter split by `dimension` alone: the other every-value terms dropped, so their values are
    combined and the answer has one series per value of `dimension` (pure)."""
    terms = filter_text.split(" and ")
    return " and ".join(t for t in terms if not t.endswith(" eq '*'") or t.startswith(f"{dimension} eq "))


def series_count(results: list[Any]) -> int:
    """Time series in an answer, over its resources and metrics (pure)."""
    return sum(len(metric.timeseries) for result in results for metric in result.metrics)


def dimension_values(results: list[Any], dimension: str) -> list[str]:
    """The values of `dimension` the answer's series carry, in answer order (pure)."""
    values = (
        {k.lower(): v for k, v in (series.metadata_values or {}).items()}.get(dimension.lower())
        for result in results
        for metric in result.metrics
        for series in metric.timeseries
    )
    return list(dict.fromkeys(v for v in values if v is not None))


class MetricFailed(Exception):
    """The service answered 200 but reported this metric failed (its `errorCode` is not `Success`)."""


def metric_errors(body: Any) -> list[tuple[str, str, str]]:
    """(metric, errorCode, errorMessage) of every metric a getBatch answer reports failed (pure). Each metric
    of a 200 carries `errorCode`, "Success" or the error of this metric, and `errorMessage` (azure-monitor.md
    §7b R11); the public `Metric` model drops both, so this reads the raw body."""
    values = body.get("values") if isinstance(body, dict) else None
    out: list[tuple[str, str, str]] = []
    for resource in values if isinstance(values, list) else []:
        metrics = resource.get("value") if isinstance(resource, dict) else None
        for metric in metrics if isinstance(metrics, list) else []:
            code = metric.get("errorCode") if isinstance(metric, dict) else None
            if code is None or str(code).lower() == "success":
                continue
            name = metric.get("name")
            name = name.get("value") if isinstance(name, dict) else name
            out.append((str(name), str(code), str(metric.get("errorMessage") or "").strip()))
    return out


def answered_errors(responses: list[Any]) -> list[tuple[str, str, str]]:
    """`metric_errors` of the last of the pipeline responses a `raw_response_hook` kept (azure-core calls
    the hook with each attempt's response; the last is the one the SDK parsed)."""
    if not responses or getattr(responses[-1].http_response, "status_code", None) != 200:
        return []
    try:
        return metric_errors(responses[-1].http_response.json())
    except ValueError:
        return []  # not JSON: the SDK's own deserialisation has reported it


def failure_line(errors: list[tuple[str, str, str]]) -> str:
    """One line for the metrics an answer reported failed (pure)."""
    name, code, message = errors[0]
    detail = f": {message.splitlines()[0]}" if message else ""
    return f"Azure Monitor answered 200 but reported {name} failed: {code}{detail}"
