"""``python -m preflight`` runs the ``fp8-doctor`` command line.

:mod:`preflight._startup` runs first: ``python -m`` put the current folder on ``sys.path``, and it
comes off before anything else is imported (issue 21 item 1).
"""

from preflight._startup import entry

entry("python -m preflight")
