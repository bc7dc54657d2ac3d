"""The REST side: the Cosmos DB wire protocol in front of the engine, and the HTTP server that carries it
(and the Azure Monitor stand-in, `emulator.monitor`). Only this package knows headers, bodies and tokens;
behaviour lives in `emulator.engine`.

- `app`: `CosmosApp`, one parsed request to one engine call and back: routing and authentication;
- `request`: the parsed HTTP request and what the protocol reads from it (headers, JSON body, partition
  key, throughput, a query page's spec); `wire`: the answers as REST bodies and headers, query plans
  and metrics, the gateway's refusals; `tokens`: continuation tokens; `auth`: signatures and dates;
  `resource_tokens`: a permission's `_token`, minted and checked against what it grants; `users`: the
  routes of users and permissions;
  `links`: `_self` (resource-id) paths as the name paths they stand for;
- `server`: serving any `transport.App` (one `handle(request)` method, and optionally `prepare(request)`:
  pure work run off the event loop first, `offloop`, on the app's own `executor()` if it has one, and
  `close()`, called when the server stops) over HTTP/1.1 (`transport`), blocking (`ruscope emulator`) or on
  a thread (`start_in_thread`), checkpointing the metrics history and compacting the journal while it
  serves; `open_engine` makes a durable engine.

How to add an operation: once the engine has it (see `emulator.engine`), route it in
`app.CosmosApp.dispatch`, decoding the request in `request` and shaping the answer in `wire`; a request
the protocol refuses is still metered, as the operation it was meant for (`emulator.rest.documents.metered_refusals`).
"""
