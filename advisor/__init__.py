"""The partition-key advisor: candidate designs measured on the user's documents and workload.

- `designs`: a candidate from its config spelling (`"/sessionId"`, `["/tenantId", "/sessionId"]`,
  `"{tenantId}-{createdAt:yyyy-MM}"`), checked against the sample; the key a document gets.
- `measure`: one design on the engine in-process (RU and routing per query, writes per partition, the
  20 GB projection, cardinality).
- `verdict`: the guides' three criteria in words, a ranking, a fix per fan-out query, rows for a CSV.
- `propose`: designs proposed from the sample and the queries; `definition`: the winner's container and
  the migration outline; `lint`: the workload's queries checked against a definition.
- `pipeline`: all of it from plain inputs (documents, `Workload`, candidates) to one `Advice` and its
  text; `tables`: the advice as rows of the store's `advice_*` tables.

The advisor imports `cosmoscore` and the emulator's engine, never the collectors: the `[advisor]` section
is validated with the config (`collectors.config.advisor`) and `ruscope advise` hands its values here.

To add a criterion: a `judge_*` function in `verdict.py` returning a `Finding`, listed in `judge`.
To add a design kind: `parse_design` and `Design.definition` / `Design.key_of` in `designs.py`.
To add an `[advisor]` setting: a field in `collectors/config/advisor.py`, passed on in `ruscope/advise.py`.
"""
