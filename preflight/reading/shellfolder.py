"""Where a launch script's commands run: the folder a ``cd`` moved to (:class:`Folder`) and its
absolute path (:func:`folder_of`), for :mod:`.shellcalls`' walk and its users. Split out of
shellcalls.py (at the 400-line bound, shell18 session 44) with no change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from preflight.reading import shelldir

CWD = "@cwd"
"""Key of the variables a caller passes (``Linked.variables``) that holds the absolute folder
the called script starts in; no shell variable can have this name."""


@dataclass(frozen=True)
class Folder:
    """Where commands run: ``path`` relative to the folder the script starts in (``""``: that
    folder), or absolute; ``why`` when it is not known here (a ``cd`` to a run-time value, or
    in a branch that may not run)."""

    path: str = ""
    why: str | None = None


def folder_of(folder: Folder, path: str, outer: dict[str, str] | None) -> tuple[str | None,
                                                                                 str | None]:
    """(absolute folder, None) or (None, why not known) for ``folder`` of the script at
    ``path``: relative to the folder the caller ran it from (:data:`CWD`), else to the
    script's own (where a job is launched from, as :mod:`.refs` assumes)."""
    if folder.why is not None:
        return None, folder.why
    start = (outer or {}).get(CWD) or os.path.dirname(os.path.abspath(path))
    here = shelldir.settle(folder.path, path, path)
    return os.path.normpath(os.path.join(start, here)), None
