"""``source x.env`` before the training command (shell18's open items, reading/launchenv.py and
reading/shellexpand.py): x.env's plain top-level exports (:mod:`preflight.reading.shellexports`)
reach a ``python`` the script runs directly, as they reach the scripts it calls; where a sourced
file's exports cannot be followed, a called script's ``${PR:-bf16}`` is Unknown, never its
default (a confident answer from what the tool did not see)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight import intent
from preflight.facts import Facts, Unknown
from preflight.jobs.read import read_paths

TRAIN = """
import os
import torch
import transformer_engine.pytorch as te
use = os.environ.get("USE_FP8", "0") == "1"
model = te.Linear(8, 8)
with te.fp8_autocast(enabled=use):
    model(torch.randn(8, 8))
"""
PLAIN = "export USE_FP8=1\nexport OTHER=1\n"
HIDDEN = 'if [ -n "$X" ]; then export USE_FP8=1; fi\n'


def _fp8(root: Path, files: dict[str, str], run: str = "run.sh") -> object:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    read = read_paths([str(root / run)])
    values, _ = intent.derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


@pytest.mark.parametrize("env, run, want", [
    (PLAIN, "source x.env\npython train.py\n", True),              # firing
    (PLAIN, ". ./x.env\ntorchrun train.py\n", True),
    ("export OTHER=1\n", "source x.env\npython train.py\n", False),     # quiet: not exported
    (PLAIN, "source x.env\nexport USE_FP8=0\npython train.py\n", False),  # a later export wins
])
def test_a_sourced_files_plain_exports_reach_the_python_it_runs(tmp_path: Path, env: str,
                                                                  run: str, want: bool) -> None:
    files = {"x.env": env, "run.sh": "#!/bin/bash\n" + run, "train.py": TRAIN}
    assert _fp8(tmp_path, files) is want


@pytest.mark.parametrize("env, run", [
    (HIDDEN, "source x.env\npython train.py\n"),                     # x.env's export in an if
    (PLAIN, 'if [ -n "$X" ]; then\n  source x.env\nfi\npython train.py\n'),   # the source in one
    (PLAIN, "source $CFG\npython train.py\n"),                        # a file named at run time
    ("set -a\nUSE_FP8=1\n", "source x.env\npython train.py\n"),     # allexport
    ("export USE_FP8=1\nsource more.env\n", "source x.env\npython train.py\n"),
])
def test_exports_not_followed_stay_unknown(tmp_path: Path, env: str, run: str) -> None:
    files = {"x.env": env, "more.env": "", "run.sh": "#!/bin/bash\n" + run, "train.py": TRAIN}
    assert isinstance(_fp8(tmp_path, files), Unknown)


_CALLED = ("#!/bin/bash\nPR=${PR:-bf16}\nif [ \"$PR\" = fp8 ]; then F=\"--fp8-format hybrid\"; fi\n"
           "torchrun pretrain_gpt.py --num-layers 2 --bf16 $F\n")


@pytest.mark.parametrize("env, want", [
    ("export PR=fp8\n", True),                   # followed: its PR
    ("export OTHER=1\n", False),                 # followed, PR not among them: the default
    ('if [ -n "$X" ]; then export PR=fp8; fi\n', None),   # not followed: Unknown
    ("eval \"$(cat more)\"\n", None),
])
def test_a_called_scripts_default_is_not_taken_past_an_unfollowed_source(
        tmp_path: Path, env: str, want: bool | None) -> None:
    files = {"x.env": env, "run.sh": "#!/bin/bash\nsource x.env\nbash train.sh\n",
             "train.sh": _CALLED, "pretrain_gpt.py": "import megatron\n"}
    got = _fp8(tmp_path, files)
    assert isinstance(got, Unknown) if want is None else got is want
