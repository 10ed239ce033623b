"""This machine's host names and this user's login name, for the default redactor.

The same answers as ``socket.gethostname`` / ``socket.getfqdn`` and ``getpass.getuser``,
without importing ``socket`` (enum classes, ``selectors``: about 3 ms of the static check's
0.13 s), ``getpass`` (``termios``) or the ``idna`` codec that a ``str`` host name pulls into
``gethostbyaddr`` (about 2 ms more): issue 26 item 4 holds the whole check to 8% of
``collect_env``. ``_socket`` is CPython's C module that ``socket`` wraps; the logic of
``getfqdn`` is CPython 3.11's (Lib/socket.py), unchanged.
"""

from __future__ import annotations

import _socket
import os


def gethostname() -> str:
    """This machine's host name (``socket.gethostname``)."""
    return _socket.gethostname()


def getfqdn(name: str = "") -> str:
    """The fully qualified name of ``name`` (this machine's when empty), as ``socket.getfqdn``:
    the first of the resolver's names (canonical, then aliases) that holds a dot, else the
    canonical name; ``name`` itself when the resolver knows nothing."""
    name = name.strip()
    if not name or name in ("0.0.0.0", "::"):
        name = gethostname()
    key: str | bytes = name
    if name.isascii():
        key = name.encode("ascii")      # bytes skip the idna codec; an ASCII name is the same
    try:
        hostname, aliases, _ = _socket.gethostbyaddr(key)  # type: ignore[arg-type]  # bytes: C API
    except (OSError, UnicodeError):
        return name
    for candidate in (hostname, *aliases):
        if "." in candidate:
            return str(candidate)
    return str(hostname)


def getuser() -> str:
    """The login name (``getpass.getuser``): LOGNAME, USER, LNAME, USERNAME, else the passwd
    entry of this uid (``KeyError`` when there is none, as in some containers)."""
    for key in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        user = os.environ.get(key)
        if user:
            return user
    import pwd

    return pwd.getpwuid(os.getuid())[0]
