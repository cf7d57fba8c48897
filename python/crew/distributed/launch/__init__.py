"""python3 -m crew.distributed.launch [options] script.py [args]: crew's launcher.

The same options, logs, restarts and exit codes as `crew launch` (docs/launch.md); the
script runs under this interpreter. See __main__.py.
"""
from .main import launch, main  # noqa: F401
