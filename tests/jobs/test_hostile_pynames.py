"""Names a script takes from the job's modules (jobs/pynames.py) against a hostile pull request
(issue 21, redteam5). Python binds a module's names in statement order; the reader let a local
assignment win over a later ``from helpers import *`` and the first of two star imports win over
the second, took a computed or augmented ``__all__`` for "every public name", and read a module's
constant as its first top-level value when a function rebinds it through ``global`` or the script
sets ``cfg.MP`` itself. Each made ``Accelerator(mixed_precision=MP)`` bf16 (FP8 "no") where Python
runs fp8, or the reverse. Python's own answer is checked for each."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

ACC = "from accelerate import Accelerator\n"
USE = "acc = Accelerator(mixed_precision=MP)\n"


def _read(tmp_path: Path, files: dict[str, str], script: str) -> tuple[Any, str]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / "train.py").write_text(ACC + script + USE)
    # what Python binds MP to, the script run without accelerate
    py = subprocess.run([sys.executable, "-c", script + "print(MP)"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=60, check=False).stdout.strip()
    read = read_paths([str(tmp_path / "train.py")])
    return read.facts.get("config.accelerate.mixed_precision"), py


@pytest.mark.parametrize("files, script", [
    ({"helpers.py": "MP = 'fp8'\n"}, "MP = 'bf16'\nfrom helpers import *\n"),
    ({"h1.py": "MP = 'bf16'\n", "h2.py": "MP = 'fp8'\n"}, "from h1 import *\nfrom h2 import *\n"),
    ({"cfg.py": "MP = 'fp8'\n"}, "MP = 'bf16'\nfrom cfg import MP\n"),
    ({"helpers.py": "MP = 'bf16'\n"}, "from helpers import *\nMP = 'fp8'\n"),
])
def test_the_later_binding_wins(tmp_path: Path, files: dict[str, str], script: str) -> None:
    got, py = _read(tmp_path, files, script)
    assert py == "fp8"
    assert got == "fp8"


@pytest.mark.parametrize("files, script", [
    ({"helpers.py": "__all__ = ['X']\n__all__ += ['MP']\nMP = 'fp8'\nX = 1\n"},
     "MP = 'bf16'\nfrom helpers import *\n"),
    ({"helpers.py": "__all__ = [n for n in dir() if n.isupper()]\nMP = 'fp8'\n"},
     "MP = 'bf16'\nfrom helpers import *\n"),
    ({"cfg.py": "MP = 'bf16'\ndef setup():\n    global MP\n    MP = 'fp8'\nsetup()\n"},
     "from cfg import MP\n"),
    ({"cfg.py": "MP = 'bf16'\n"}, "import cfg\ncfg.MP = 'fp8'\nMP = cfg.MP\n"),
])
def test_a_value_changed_out_of_sight_is_unknown(tmp_path: Path, files: dict[str, str],
                                                 script: str) -> None:
    got, py = _read(tmp_path, files, script)
    assert py in ("fp8", "bf16")
    assert isinstance(got, Unknown) or got == py, got


def test_a_star_import_shadowing_accelerator_is_not_accelerates(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("class Accelerator:\n    def __init__(self, **k):\n"
                                         "        pass\n")
    (tmp_path / "train.py").write_text(ACC + "from helpers import *\n"
                                       "acc = Accelerator(mixed_precision='bf16')\n")
    read = read_paths([str(tmp_path / "train.py")])
    assert read.facts.get("config.accelerate.mixed_precision") != "bf16"


def test_a_re_exported_import_is_the_original(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("from accelerate import Accelerator\nMP = 'fp8'\n")
    (tmp_path / "train.py").write_text(ACC + "from helpers import *\n" + USE)
    read = read_paths([str(tmp_path / "train.py")])
    assert read.facts.get("config.accelerate.mixed_precision") == "fp8"
