"""``set -e`` in force (reading/shellstops.errexit), its on / off test written once
(``_errexit_sign``), against bash itself where it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from preflight.reading.shellstops import _errexit_sign, errexit

BASH = shutil.which("bash")


@pytest.mark.parametrize(("words", "n", "sign"), [
    (["-e"], 0, "-"), (["-euo", "pipefail"], 0, "-"), (["-o", "errexit"], 0, "-"),
    (["+e"], 0, "+"), (["+o", "errexit"], 0, "+"), (["-xe"], 0, "-"),
    (["-o", "pipefail"], 0, None), (["-x"], 0, None), (["-o"], 0, None), (["errexit"], 0, None),
    (["-u", "+e"], 1, "+"), (["e"], 0, None), (["--e"], 0, None), (["+o", "errexit"], 1, None),
])
def test_a_set_word_turns_errexit_on_or_off(words: list[str], n: int, sign: str | None) -> None:
    assert _errexit_sign(words, n) == sign


@pytest.mark.parametrize(("script", "line"), [
    ("set -e\n", 1), ("set -euo pipefail\n", 1), ("set -o errexit\n", 1), ("set +e\n", None),
    ("set -e\nset +e\n", None), ("set -e\nset +o errexit\n", None), ("set +e\nset -x -e\n", 2),
    ("set -o pipefail\n", None), ("set -e\nset -x\n", 1), ("  set -ex\n", 1), ("", None),
])
def test_errexit_is_in_force_where_bash_has_it(script: str, line: int | None) -> None:
    assert errexit(script + "next\n", len(script)) == line
    if BASH is not None:
        proc = subprocess.run([BASH, "--norc", "--noprofile", "-c", script + 'echo "$-"'],
                              capture_output=True, text=True, timeout=30,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        assert ("e" in proc.stdout.strip()) is (line is not None)
