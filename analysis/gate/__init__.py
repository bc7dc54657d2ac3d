"""The RU gate: what `ruscope check` decides about an application's queries, as pure functions.

A check run replays each query (the replay collector, into a store of its own); from its executions and
requests `measure.measured_queries` takes one `Measured` per query, with the figures the Query costs page
shows for a run (`analysis.queries.costs.summarize_query_costs`: the mean RU per logical execution, the
partitions reached, the widest routing), so the gate and the page never disagree on a number.
`verdicts.judge` holds each against its budget (`Budget`), the committed baseline (`baseline`) and the
advisor's lint, and says why it failed (routing, partitions, index); `outputs` writes what CI shows: the
Markdown table of a pull-request comment and JUnit XML.

To add a rule: a function in `verdicts` returning `Check`s, called from `judge`; its `rule` names it in the
outputs.
"""
