"""The capacity review: what `ruscope report` writes and the Reports page shows and downloads.

- `review`: the report itself, one long table (`REPORT_COLUMNS`) of containers, partitions, logical keys,
  queries and actions; its module docstring is the report's reference (columns, measures, rounding);
- `sections`: each section's rows (container, partition, key, query, offer) from the figures `review`
  computed;
- `about`: its first section, what the report is of (window, store, generation time, region, version), passed
  in by the command and the page;
- `actions`: the `action` section, the rules run per container, query and key, with their numbers in columns
  (target, unit, severity, command, risk);
- `autoscale`: what autoscale at the max it would need would have billed against the manual RU/s in force,
  hour by hour (the `autoscale_cost_ratio` row and the `move_to_autoscale` finding's target);
- `rules`: the action rules, each a pure function with its thresholds named as constants and their sources,
  returning an `Action` (a recommendation in plain words, its target, change and risk) or None.

To add a recommendation: a rule in `rules` (its threshold a named constant with its source, its severity in
`SEVERITY`), called from `actions.action_rows`; a row in docs/findings.md; tests in `tests/analysis/capacity/`
at and around the threshold.
"""
