"""`[alerts]`: the thresholds `ruscope collect` evaluates after each pass (`collectors.alerts`).

Kept apart from config.py (which imports it back as `collectors.config.AlertSettings`) to keep both modules
short. Every rule is off until its threshold is set; a rule fires when its number is at or above the
threshold. Validated like the rest of the config: a mistake is a located line
(`alerts.throttle_rate_percent: Input should be less than or equal to 100`).

| key | unit | rule |
|---|---|---|
| `window_minutes` (default 60) | minutes | the window before the evaluation that the metric rules read |
| `hot_partition_percent` | % normalized RU | a pkrange at or above it ... |
| `hot_partition_minutes` (default 5) | minutes | ... for this many consecutive minutes in the window |
| `throttle_rate_percent` | % of requests | 429 responses over all requests in the window, per container |
| `logical_key_percent` | % of 20 GB | a logical key's size (`cosmoscore.limits`) |
| `partition_storage_percent` | % of 50 GB | a physical partition's size |
| `query_ru_increase_percent` | % change | a query's latest mean RU against its baseline |
| `baseline_runs` (default 10) | runs | the baseline: median of this many previous runs' means |
| `lookback_days` (default 7) | days | how far back the latest storage snapshots and the runs (the latest and its baseline) are read |
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

Percent = Annotated[float, Field(gt=0, le=100)]


class AlertSettings(BaseModel):
    """`[alerts]`: thresholds, each optional (None: the rule is off), as the module docstring's table says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window_minutes: Annotated[int, Field(ge=1, le=7 * 24 * 60)] = 60
    hot_partition_percent: Percent | None = None  # NormalizedRUConsumption, the service's hot-partition signal
    hot_partition_minutes: Annotated[int, Field(ge=1)] = 5
    throttle_rate_percent: Percent | None = None  # the service documents 1-5% of 429s as healthy
    logical_key_percent: Percent | None = None  # of Limits.logical_partition_max_bytes (20 GB)
    partition_storage_percent: Percent | None = None  # of Limits.physical_partition_max_bytes (50 GB)
    query_ru_increase_percent: Annotated[float, Field(gt=0)] | None = None  # +50: latest mean 1.5x the baseline
    baseline_runs: Annotated[int, Field(ge=1, le=1000)] = 10
    lookback_days: Annotated[float, Field(gt=0, le=366)] = 7  # older snapshots and runs are not read

    @model_validator(mode="after")
    def _minutes_fit_the_window(self) -> AlertSettings:
        if self.hot_partition_minutes > self.window_minutes:
            raise ValueError(
                f"hot_partition_minutes ({self.hot_partition_minutes}) is longer than window_minutes "
                f"({self.window_minutes}): it could never fire; widen the window or shorten the minutes"
            )
        return self

    @property
    def any_rule(self) -> bool:
        """Whether any rule is on (an `[alerts]` section with only defaults evaluates nothing)."""
        thresholds = (
            self.hot_partition_percent,
            self.throttle_rate_percent,
            self.logical_key_percent,
            self.partition_storage_percent,
            self.query_ru_increase_percent,
        )
        return any(value is not None for value in thresholds)
