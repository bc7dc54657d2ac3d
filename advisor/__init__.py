"""The partition-key advisor: candidate designs measured on the user's documents and workload.

- `designs`: a candidate from its config spelling (`"/sessionId"`, `["/tenantId", "/sessionId"]`,
  `"{tenantId}-{createdAt:yyyy-MM}"`), checked against the sample; the key a document gets.
- `measure`: one design on the engine in-process (RU and routing per query, writes per partition, the
  20 GB projection, cardinality).
- `verdict`: the guides' three criteria in words, a ranking, a fix per fan-out query, rows for a CSV.

To add a criterion: a `judge_*` function in `verdict.py` returning a `Finding`, listed in `judge`.
To add a design kind: `parse_design` and `Design.definition` / `Design.key_of` in `designs.py`.
"""
