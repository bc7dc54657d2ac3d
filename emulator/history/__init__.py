"""What the Azure Monitor stand-in computes from: per-minute aggregates kept as requests are metered.

- `aggregates`: `History`, the one object the engine records into (`record`, and the storage snapshots)
  and the stand-in reads (`series`, `containers`, `minutes`), with its retention, `save`, `open` and
  `checkpoint` (the server saves a changed history every `CHECKPOINT_S`, so a crash loses at most that);
- `cells`: one minute's cell and the pure functions that read cells and series;
- `snapshots`: the part of `History` that records and reads storage and throughput snapshots;
- `changepoints`: those snapshots as change-point series, forward-filled (`Series`, `Snapshots`);
- `on_disk`: the history's file in the data directory (gzip-compressed JSON lines, written atomically).

How to add a metric: record what it needs per minute in the cell (`cells.Minute`, filled in
`aggregates.History.record`), write it to and read it from its minute line (`on_disk.minute_line`,
`on_disk.parse_minute`, keeping files without it loadable), answer it in `History.series`, and serve it in
`emulator.monitor`. Nothing here sees the engine's state: the engine's sampler (`emulator.engine.sampler`)
hands it the values.
"""
