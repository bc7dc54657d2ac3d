"""Cached loaders: the only dashboard code that reads the store, and the only code with `st.cache_data`.

- `tables`: a store table in the frame's view (store, time range, scope), only the columns a page needs;
  `load_table` caches the store read itself, keyed by the store's table versions (`tables.store_versions`);
- `cells`: a view's metrics with the stored span cells (`analysis.load.stored`) in place of the
  NormalizedRUConsumption points of its whole days, and the metrics' rollup cells of those days
  (`metrics_with_cells`, `rollup_cells`), for the Overview, the Fleet and Hot partitions: the same figures from
  a read that does not grow with the range; what is stale since the last refresh is cached per store;
- `query_costs`: the Query costs page's derived frames (`load_query_costs`, `load_run_detail`), cached
  once per view so a widget change is a cache hit rather than regrouping every execution;
- `hot_partitions`: the Hot partitions page's reductions (`load_hot`), cached small, over reads that
  are not cached (`tables.read_view`), since caching millions of metric points would cost more than
  reducing them;
- `cost`: the Cost page's bills, hours, reservation plan and the report's actions (`load_cost`, over
  `report.load_capacity`'s build, shared with the Reports page), cached per view and `[pricing]`, so its
  window selector does not bill the hours again;
- `report`: the capacity report's frames in the view (`load_report_frames`, through `tables`), and the
  report with its money figures built from them (`load_capacity`; `load_report` its report), cached per view
  and `[pricing]`, one build for the Reports and Cost pages;
- `overview`: the Overview's container summaries of the shown and compared periods and its costliest
  queries (`load_overview`), cached per view;
- `fleet`: the Fleet page's ranking and throughput units (`load_fleet`), cached per view.
- `throttling`: the Throttling page's figures and tables (`load_throttling`), cached small per view over
  a read of the metrics that is not cached.

So every page's model is cached (tests of the pages run each page several times; a user's widget change is
a cache hit), each keyed by the store's table versions (`tables.cached_view`: a collector's new rows show
up within `tables.FRESH_SECONDS`, and an unchanged store is not read again). Caching
decorators sit on these loaders, never on the pure functions of `analysis`. To add a loader: read through
`tables` (never the store directly), put the numbers in `analysis`, cache the result here in the module of
its page, and have the page call it; tests call `st.cache_data.clear()` between runs.
"""
