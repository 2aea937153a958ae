"""Run ``incastlab`` from tests as a subprocess, the way a user does.

Faces listed in ``incastlab.cli.main.COMMANDS`` are written on parallel branches; on a
branch where one is not merged yet, importing it would fail for every command. This
wrapper registers only the faces present, so the monitor's tests run on their own branch
and unchanged after the merge.
"""

import importlib.util
import sys

from incastlab.cli import main

if __name__ == "__main__":
    main.COMMANDS[:] = [c for c in main.COMMANDS if importlib.util.find_spec(f"incastlab.cli.{c}") is not None]
    sys.exit(main.main(sys.argv[1:]))
