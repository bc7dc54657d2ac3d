"""Pure Cosmos DB (NoSQL API) knowledge shared by every ruscope package: no I/O, no `azure.*` imports,
and no imports of other ruscope packages.

`sql/` the query language, `epk` EPK hashing and ranges, `keys` partition-key helpers, `routing` the
routing map and routing classes, `layout` partitions at creation and split points, `limits` service
limits, `indexing` the indexing policy, `costmodel` the RU cost model, `monitor/` the Azure Monitor
catalogue (metrics, dimensions, grains; Log Analytics tables and their legacy columns per category).
"""
