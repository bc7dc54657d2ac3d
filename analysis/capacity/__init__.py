"""The capacity review: what `ruscope report` writes and the Reports page shows and downloads.

- `review`: the report itself, one long table (`REPORT_COLUMNS`) of containers, partitions, logical keys,
  queries and actions; its module docstring is the report's reference (columns, measures, rounding);
- `rules`: the action rules, each a pure function with its thresholds named as constants and their sources,
  returning an `Action` (a recommendation in plain words) or None.

To add a recommendation: a rule in `rules` (its threshold a named constant with its source), called from
`review.action_rows`; tests in `tests/analysis/capacity/` at and around the threshold.
"""
