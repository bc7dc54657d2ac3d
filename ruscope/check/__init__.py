"""`ruscope check`: RU budgets and regressions of an application's queries, as a CI gate.

`command` is the command (typer); `target` the embedded emulator or the account; `run` the replay and lint;
`logged` a test run read from an emulator's request log (`emulator_log`); `verdict` the judgement and the
files CI reads. Nothing is imported here: the pytest plugin reads `emulator_log` without the command's
dependencies (typer) on every test run.
"""
