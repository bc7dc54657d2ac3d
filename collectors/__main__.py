"""`python -m collectors`: the same as `ruscope`."""

from collectors.cli import main

main()
