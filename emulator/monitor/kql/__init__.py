"""The subset of the Kusto Query Language the Log Analytics stand-in answers, from text to rows.

- `parser`: KQL text to a small syntax tree (lark, LALR); anything outside the subset is the service's
  syntax error, naming the word it does not know;
- `ast`: the tree's nodes and `KqlError`, which every stage raises;
- `expr`: scalar expressions typed against a table's columns and compiled to row functions, with the
  *measure* mark that keeps per-minute sums from being used as if they were single requests;
- `evaluate`: each operator checked against what per-minute aggregates answer exactly (`plan`), then the
  rows streamed through (`run`); `shape`: what a stage sees of its table, and a planned expression;
- `join`: the `join` operator's flavors, columns and keys (Kusto's), on ordinary rows only;
- `tabular`: a query's `let` statements and body, every table or `let` name resolved through one function;
- `scan`: what a query's leading `where` operators pin, so only those containers and minutes are read.

How to add an operator or a function: parse it in `parser` (grammar and tree), type and compile it in
`expr` (functions) or check and stream it in `evaluate` (operators), refusing with the service's 400 what
the aggregates cannot answer exactly; tests/emulator/monitor/test_kql.py shows the shapes.
"""
