"""What the containers cost in money (issue 24): Azure's billing rules (`cosmoscore.billing`, docs/reference/
pricing.md) applied to the store's measured hours.

- `bill`: per container, the window's hours as they were billed (manual or autoscale, in every region) and
  projected to a month, its storage, and what the same hours would have cost as manual at the right size,
  autoscale at the right max and serverless (where its limits allow).
- `reservation`: the reservation size that minimises the bill from an hourly usage series, with its coverage
  curve;
- `summary`: what the dashboard's Cost page shows, gathered from the bills, the hours, the planner (fed the
  fleet's hours of the main window) and the capacity report's actions.
"""
