"""Runs crew's launcher binary (`crew launch`) with this interpreter for .py scripts."""
import os
import shutil
import sys


def _crew_binary():
    """CREW_BIN_DIR/crew, else the one pip installed in the package (crew/bin/crew), else the
    build tree's bin/ beside the package, else crew on PATH."""
    candidates = []
    if os.environ.get("CREW_BIN_DIR"):
        candidates.append(os.path.join(os.environ["CREW_BIN_DIR"], "crew"))
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates.append(os.path.join(package, "bin", "crew"))
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(package)), "bin", "crew"))
    for c in candidates:
        if os.access(c, os.X_OK):
            return c
    found = shutil.which("crew")
    if found:
        return found
    raise FileNotFoundError("crew.distributed.launch: the `crew` launcher was not found in "
                            + ", ".join(candidates) + " or on PATH; set CREW_BIN_DIR to the folder "
                            "that holds it (cmake --install puts it in <prefix>/bin)")


def launch(argv):
    """Replaces this process by `crew launch ARGV` (the launcher is the job's parent)."""
    binary = _crew_binary()
    os.environ["CREW_PYTHON"] = sys.executable
    os.execv(binary, [binary, "launch"] + list(argv))


def main(argv=None):
    launch(sys.argv[1:] if argv is None else argv)
    return 0  # not reached
