"""`python -m emulator`: the same as `ruscope emulator`."""

import sys

from collectors.cli import app

if __name__ == "__main__":
    sys.exit(app(["emulator", *sys.argv[1:]]))
