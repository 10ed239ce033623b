"""``python -m preflight.cluster``: fp8-doctor on every rank of a job (the code: ``cli.py``).

:mod:`preflight._startup` runs first: ``python -m`` put the current folder (under torchrun, the
job's folder) on ``sys.path``, and it comes off before anything else is imported; SIGTERM from the
launcher unwinds cleanly (issue 21 items 1, 7, 8). No ``from __future__`` here, for that reason.
"""

from preflight import _startup

if __name__ == "__main__":
    _startup.run_module("python -m preflight.cluster", "preflight.cluster.cli")
