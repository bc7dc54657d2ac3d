"""The query service and its pieces: SQL queries served page by page as the gateway routes them, the plan
the SDK asks for, and an SDK-like fan-out for in-process callers.

- `service`: `QueryService` (pages, plans, `run`) under the engine lock, and what a page is asked for
  (`QuerySpec`, the REST layer's `Gate`);
- `plan`: the plan (`QueryPlan`), the EPK intervals a WHERE clause targets, the client-side features a
  cross-partition plan needs, the ORDER BY index checks;
- `paging`: resuming continuations, page rows within the item and 4 MB limits, each page's share of the
  charge, the per-range results and their cache, index utilization;
- `budget`: the per-page execution budget (`QuerySettings`): a page stops computing once spent and
  returns what it found with a continuation;
- `range_index`: per-partition equality and range indexes, built on demand; `index_reads`: what a query
  reads through them;
- `sql`: the SQL engine (`cosmoscore.sql`) with its errors as the service's 400s.

How to add a query feature: the SQL itself belongs in `cosmoscore.sql`; here, refuse what the service
refuses in `plan`, route in `service`, and keep every charge independent of paging (`paging.share`).
"""
