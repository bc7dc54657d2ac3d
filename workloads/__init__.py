"""Example workloads: data generators and example configs (pure data: no emulator, no collectors).

`workloads.chat`: the AI-chat widget of the partition-key guides, which `ruscope demo` loads.
"""
