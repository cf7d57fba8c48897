"""The `crew` console script of a pip-installed crew: runs the `crew` command packaged as
crew/bin/crew (the build tree's bin/crew when run from one), with CREW_PYTHON set to this
interpreter so that `crew plot` and .py programs under `crew launch` use it too."""
import os
import sys

from ..distributed.launch.main import _crew_binary


def main(argv=None):
    binary = _crew_binary()
    os.environ.setdefault("CREW_PYTHON", sys.executable)
    os.execv(binary, [binary] + list(sys.argv[1:] if argv is None else argv))
    return 0  # not reached
