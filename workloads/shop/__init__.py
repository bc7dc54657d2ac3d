"""A sample application with its own test suite and RU budgets (README.md)."""
