"""What the containers cost in money (issue 24): Azure's billing rules (`cosmoscore.billing`, docs/reference/
pricing.md) applied to the store's measured hours.

- `bill`: per container, the window's hours as they were billed (manual or autoscale, in every region) and
  projected to a month, its storage, and what the same hours would have cost as manual at the right size,
  autoscale at the right max and serverless (where its limits allow).
- `queries`: what each query (replayed at its rate, or logged) and each logical key costs a month, as its share
  of the month as billed (its RU/s over the container's consumed RU/s), at the manual rate and serverless; and
  what a query finding (a fan-out, a missing composite index) saves.
- `reservation`: the reservation size that minimises the bill from an hourly usage series, with its coverage
  curve (not yet fed the fleet's hours: the Cost page will).
"""
