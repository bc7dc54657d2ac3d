"""Azure Monitor's catalogue for a Cosmos DB account, declared once for the collectors (which ask Azure)
and the emulator's stand-in (which answers like it): names and shapes, never behaviour.

`metrics` the platform metrics (name, unit, aggregations with the default first, dimensions, grains);
`logs` the Log Analytics tables of the diagnostic categories, resource-specific and `AzureDiagnostics`
(legacy) columns per category. Each fact cites its section of docs/reference/azure-monitor.md. No other
module spells one of these names as a string (tests/test_layering.py): import the constant. To add a
metric or a column, declare it here with its source, then use it on either side.
"""
