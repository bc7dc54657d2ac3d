"""The AI-chat workload: tenants, chat sessions, messages and query logs (`generator`, pure), the demo's day
of that traffic through the engine (`history`), and `ruscope.toml`, a commented config of the queries the
partition-key guides discuss.

To add a query to the demo, add a `[[queries]]` table to `ruscope.toml` (the demo replays that file).
"""
