"""ruscope analysis: pure functions from store frames to the numbers the dashboard and `ruscope report` show.

Nothing here reads files, talks to the network or imports Streamlit: every function takes pandas frames
(the store's tables, `store`) and returns a frame or a plain value, so it is tested on frames built in the
test. The store columns a function reads are named with the schema's `Table.pick` (`EXECUTIONS.pick(...)`),
so a column the store does not have fails where it is named, never reads as missing values; a literal list
copying the schema is refused by tests/test_layering.py.

- `scope`: the time range and the scope (account, database, container) a view covers, shared by every page.
- `query_costs`: RU per query execution, change between runs, per-pkrange breakdown, routing classes.
- `fleet`: every container of every account ranked by risk (429s, hot partition, storage), then waste.
- `report`: the one CSV path (`to_csv_bytes`), shared by every dashboard download and `ruscope report`.

To add an analysis: a module named for what it answers, `summarize_*` functions for the stats, tests in
`tests/analysis/` on synthetic frames with the schema's columns.
"""
