"""`python -m emulator`: the same as `ruscope emulator`, without importing the collectors."""

from emulator.cli import main

main()
