"""Query costs: what each replayed query costs, run by run, and where the RU lands; and what the workload's
own queries cost, from the diagnostic logs.

- `costs`: the logical execution (a per-feed-range query's parts are one execution), RU per execution and
  its change between runs, the per-pkrange breakdown of a run, the routing class; the store columns these
  read (`EXECUTION_COLUMNS`, `REQUEST_COLUMNS`);
- `runs`: built on `costs`' frames: RU over time (one point per query per run), the routing multiplier, index
  use, two runs compared;
- `logged`: the workload's query texts ranked by the RU the diagnostic logs charged them (`log_query_ru`),
  ruscope's own requests apart.

Lists of pkrange ids as the store writes them are `analysis.pkrange_ids` (shared with `analysis.hot`).
To add a number about queries: in `costs` if it is per execution or per run of the store's rows, in `runs`
if it compares or follows runs; tests in `tests/analysis/queries/`.
"""
