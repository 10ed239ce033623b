"""``python -m preflight`` runs the ``fp8-doctor`` command line."""

from preflight.cli import entry

raise SystemExit(entry())
