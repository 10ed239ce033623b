"""preflight.redact.machine answers as socket and getpass do, on this machine, for real."""

from __future__ import annotations

import getpass
import socket
import subprocess
import sys

import pytest

from preflight.redact import machine


def test_host_names_are_sockets() -> None:
    assert machine.gethostname() == socket.gethostname()
    assert machine.getfqdn() == socket.getfqdn()
    for name in ("localhost", "127.0.0.1", "no-such-host.invalid", "  ", "::"):
        assert machine.getfqdn(name) == socket.getfqdn(name)


def test_a_non_ascii_name_goes_through_the_codec_as_socket_does() -> None:
    assert machine.getfqdn("bücher.invalid") == socket.getfqdn("bücher.invalid")


def test_user_is_getpass(monkeypatch: pytest.MonkeyPatch) -> None:
    assert machine.getuser() == getpass.getuser()
    for key in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("USERNAME", "planted")
    assert machine.getuser() == getpass.getuser() == "planted"
    monkeypatch.delenv("USERNAME")
    assert machine.getuser() == getpass.getuser()       # the passwd entry of this uid


def test_the_redactor_imports_neither_socket_nor_getpass() -> None:
    """The point of the module (issue 26 item 4): the default redactor, built in a fresh
    interpreter, leaves socket, getpass and the idna codec unimported."""
    code = ("import sys; from preflight.redact import default_redactor; default_redactor(); "
            "print(sorted({'socket', 'getpass', 'encodings.idna', 'traceback'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "[]"
