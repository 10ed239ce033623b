"""Bounded reads of files we do not control: now :mod:`preflight.bounded`.

It moved out of ``probes`` when the config reader, snapshots, baselines and the outputs started
to use it (issue 21): importing it from ``preflight.probes`` made an import cycle through the
packages probe and the framework records. This name stays for existing imports.
"""

from __future__ import annotations

from preflight.bounded import (
    NotRegularFile,
    TooLarge,
    files_read,
    forget_reads,
    identity,
    is_regular,
    kind_of,
    read_bytes,
)

__all__ = ["NotRegularFile", "TooLarge", "files_read", "forget_reads", "identity", "is_regular",
           "kind_of", "read_bytes"]
