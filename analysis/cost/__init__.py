"""What the containers cost in money (issue 24): Azure's billing rules (`cosmoscore.billing`, docs/reference/
pricing.md) applied to the store's measured hours.

- `hours`: the one hourly frame every bill reads, per container with RU/s of its own and per shared
  database: the need (with what the 429s were denied), the RU/s in force, the RU consumed, Monitor's 429 hours.
- `bill`: per unit and window (7, 30, 90 days), the hours as billed (manual or autoscale, in every region,
  multi-region writes at their rate) projected to a month, its storage, the alternatives (manual at the right
  size, autoscale at the right max, serverless where its limits allow) with the hours each would have
  throttled, and the cheapest that throttles no more than today.
- `queries`: what each query (replayed at its rate, or logged) and each logical key costs a month, as its share
  of the month as billed (its RU/s over the container's consumed RU/s), at the manual rate and serverless; and
  what a query finding (a fan-out, a missing composite index) saves.
- `reservation`: the fleet's hourly usage in list-price RU/s, the reservation size that minimises its bill
  with the coverage curve, and the bill with the reservations held.
- `summary`: what the dashboard's Cost page shows, gathered from the bills, the hours, the planner (fed the
  fleet's hours of the main window) and the capacity report's actions.
"""
