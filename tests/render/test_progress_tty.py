"""Progress on a real terminal (issue 24 item 5: "progress lines erased on a terminal"): the
``fp8-doctor`` console script runs with its stderr on a pseudo-terminal (``pty.openpty``), the
bytes it writes there are replayed on a small screen model (carriage return, new line, cursor
up, erase line: what rich's transient status uses), and the screen left when the command ends
must hold none of the status lines, although they were drawn. Nothing here depends on timing:
rich draws the status at least once, when it stops, before erasing it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console_script import write_script

pty = pytest.importorskip("pty")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")

def screen(raw: bytes) -> list[str]:
    """The lines a terminal shows after ``raw`` (only what a status line uses is modelled:
    ``\\r``, ``\\n``, ``ESC[nA`` cursor up, ``ESC[2K`` erase line; colours and cursor
    visibility are ignored)."""
    lines: list[list[str]] = [[]]
    row = col = 0
    text = raw.decode("utf-8", "replace")
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b" and text[i + 1:i + 2] == "[":
            j = i + 2
            while j < len(text) and not text[j].isalpha():
                j += 1
            params, op = text[i + 2:j], text[j:j + 1]
            if op == "A":
                row = max(0, row - int(params or 1))
            elif op == "K" and params == "2":
                lines[row] = []
            i = j + 1
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row += 1
            col = 0
            while len(lines) <= row:
                lines.append([])
        else:
            line = lines[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        i += 1
    return ["".join(line).rstrip() for line in lines if "".join(line).strip()]


def _run_on_a_terminal(argv: list[str], cwd: Path, *extra: str) -> tuple[bytes, bytes, int]:
    try:
        master, slave = pty.openpty()
    except OSError as exc:      # a container without /dev/ptmx or devpts ("out of pty devices")
        pytest.skip(f"no pseudo-terminal can be opened here: {exc}")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "GITHUB_ACTIONS")}
    env.update(TERM="xterm-256color", COLUMNS="100")
    proc = subprocess.Popen([*argv, *extra], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    raw = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:          # EIO: the child closed its end
            break
        if not chunk:
            break
        raw += chunk
    os.close(master)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.stdout.close()
    return raw, out, proc.wait(timeout=120)


def test_the_status_line_is_drawn_then_erased_on_a_terminal(tmp_path: Path) -> None:
    argv = write_script(tmp_path / "bin")
    raw, out, _ = _run_on_a_terminal(argv, tmp_path, "check", "--example", "--no-smoke")
    assert b"Findings" in out                       # the report went to stdout, whole
    assert b"fp8-doctor check" in raw               # the terminal path drew its status ...
    assert b"\x1b[2K" in raw
    left = screen(raw)
    assert not [line for line in left if "fp8-doctor check" in line], left   # ... and erased it


def test_quiet_draws_no_status_even_on_a_terminal(tmp_path: Path) -> None:
    argv = write_script(tmp_path / "bin")
    raw, out, _ = _run_on_a_terminal(argv, tmp_path, "check", "--example", "--no-smoke", "-q")
    assert out.strip()
    assert b"fp8-doctor check" not in raw and b"\x1b[" not in raw


def test_the_screen_model_keeps_what_is_not_erased() -> None:
    # the model itself: a transient frame goes, a line printed below it stays
    raw = b"\x1b[?25l\x1b[32mx\x1b[0m status: a\r\x1b[2Kstatus: b\r\n\x1b[?25h\r\x1b[1A\x1b[2K"
    assert screen(raw) == []
    assert screen(b"note: kept\r\nstatus\r\x1b[2K") == ["note: kept"]
