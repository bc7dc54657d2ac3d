"""Hot partitions: which physical partition (pkrange) is hot, since when, and which logical keys make it hot.

Pure functions over the store's frames, one module per question the Hot partitions page (and the capacity
report) asks:

- `partitions`: the normalized-RU heatmap, pkrange x time, rows in key-space order, splits marked; the row
  keys and ordering every other module here uses;
- `current`: which pkranges exist at the end of a view (a split retires its parent) and since when they all
  have data, so a skew compares ranges over the same period;
- `keys`: the logical keys that carry the RU (Log Analytics), each key's busiest second against its
  partition's RU/s budget, the operations that spend a key's RU, and the largest keys (storage snapshots);
- `replay`: the replay's RU/s demand per pkrange against each partition's budget, and the skew of any
  per-pkrange load (hottest share, Gini).

To add a measure of hot partitions: put it in the module whose question it answers (a new module only for a
new question), read only a `*_COLUMNS` list of store columns, and order pkrange rows with
`partitions.order_pkranges`. Tests are in `tests/analysis/hot/`.
"""
