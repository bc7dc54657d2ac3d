"""`python -m ruscope`: the same as `ruscope`.

`-m` puts the working directory first on `sys.path`. Unless it is the checkout holding ruscope itself, it is
taken off again (what `python -P` does), so that a folder there named like one of ruscope's packages (the
demo's `store/`, a user's `analysis/`) cannot shadow it."""

import sys
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0] or ".").resolve() == Path.cwd().resolve() != _CHECKOUT:
    del sys.path[0]

from ruscope.cli import main  # noqa: E402  (after the path is made safe)

main()
