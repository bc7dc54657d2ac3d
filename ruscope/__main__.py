"""`python -m ruscope`: the same as `ruscope`."""

from ruscope.cli import main

main()
