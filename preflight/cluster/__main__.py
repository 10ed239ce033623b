"""``python -m preflight.cluster``: fp8-doctor on every rank of a job (the code: ``cli.py``).

:mod:`preflight._startup` runs first: ``python -m`` put the current folder (under torchrun, the
job's folder) on ``sys.path``, and it comes off before anything else is imported; SIGTERM from the
launcher unwinds cleanly (issue 21 items 1, 7, 8). No ``from __future__`` here, for that reason.
Imported rather than run (tests, tools), it hands out the names of ``cli.py``, where they lived
here before.
"""

from preflight import _startup

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if __name__ == "__main__":
    _startup.run_module("python -m preflight.cluster", "preflight.cluster.cli")


def __getattr__(name: str) -> "Any":
    from preflight.cluster import cli

    return getattr(cli, name)
