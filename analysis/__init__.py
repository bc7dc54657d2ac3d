"""ruscope analysis: pure functions from store frames to the numbers the dashboard and `ruscope report` show.

Nothing here reads files, talks to the network or imports Streamlit: every function takes pandas frames
(the store's tables, `store`) and returns a frame or a plain value, so it is tested on frames built in the
test. The store columns a function reads are named with the schema's `Table.pick` (`EXECUTIONS.pick(...)`),
so a column the store does not have fails where it is named, never reads as missing values; a literal list
copying the schema is refused by tests/test_layering.py.

A module answers one question; a question with several parts is a sub-package with one module per part:

- `scope`: the time range and the scope (account, database, container) a view covers, shared by every page;
- `regions`: which Azure Monitor rows a figure of one region, or of the account in total, reads (the rows
  that combine the regions, stored before the split, never added to per-region ones);
- `queries/`: RU per query execution and its change between runs (`costs`), run by run: over time, the
  routing multiplier, index use (`runs`);
- `pkrange_ids`: lists of pkrange ids as the store writes them ("0,3,12"), sorted, merged, counted;
- `hot/`: hot partitions: the heatmap and pkrange order (`partitions`), the current layout (`current`), the
  logical keys (`keys`), the replay's demand and skew (`replay`);
- `load`: per-partition load per pkrange and minute (normalized RU, consumed RU, each partition's budget),
  ruscope's own traffic (the replay) in it kept apart by a stated rule, and the workload's peak and sustained
  load that risk, peaks and the saturation finding read;
- `fleet`: every container of every account ranked by risk (429s, hot partition, storage), then waste;
- `overview`: each container's numbers for a time range against the period before, over `fleet`;
- `hottest`: each container's hottest physical partition and its share of the RU (the layout's ranges,
  ruscope's own minutes out): the skew figure the Overview, Fleet, Hot partitions and the report read;
- `storage`: partition and key fill, growth and the projected date of each limit;
- `throttling`: 429s per container, partition and query, from Azure Monitor, the logs and the replay;
- `alerts`: the config's thresholds evaluated on store frames, and the open alerts;
- `own_traffic`: what ruscope's replay itself spent, per container over a window and per pkrange and minute;
- `capacity/`: the capacity-review report (`review`) and its action rules (`rules`);
- `advice`: the stored advisor results shaped for the Advisor page;
- `units`: how numbers read per unit (precision, sizes, small percentages);
- `report`: the one CSV path (`to_csv_bytes`), shared by every dashboard download and `ruscope report`.

To add an analysis: a module named for what it answers (in the sub-package of its question, if there is
one), `summarize_*` functions for the stats, a `*_COLUMNS = TABLE.pick(...)` of the store columns it reads, tests in
`tests/analysis/` (mirroring the sub-packages) on synthetic frames with the schema's columns.
"""
