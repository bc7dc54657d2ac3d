"""The AI-chat workload: tenants, chat sessions, messages and query logs (`generator`), and
`ruscope.toml`, a commented config of the queries the partition-key guides discuss.

To add a query to the demo, add a `[[queries]]` table to `ruscope.toml` (the demo replays that file).
"""
