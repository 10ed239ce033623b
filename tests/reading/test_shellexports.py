"""What a sourced config script exports (reading/shellexports.py): followed only where its
text shows all of it (holdout24 mlperf51's config_MI325X_1x8x1.sh)."""

from __future__ import annotations

import pytest

from preflight.reading.shellexports import SOURCED, encode, exported_names, followed


def test_the_exports_of_a_config_script() -> None:
    text = ("#!/bin/bash\nexport WARMUP=True\nexport DGXSYSTEM=$(basename $0)\n"
            "export NCCL_X=32;\nLOCAL=1\nexport FP8=True FP8_AMAX_HISTORY=4\nexport LOCAL\n"
            "declare -x DX=1\n")
    assert exported_names(text) == ("WARMUP", "DGXSYSTEM", "NCCL_X", "FP8", "FP8_AMAX_HISTORY",
                                    "LOCAL", "DX")


def test_a_script_that_exports_nothing() -> None:
    assert exported_names("A=1\necho $A\n") == ()


@pytest.mark.parametrize("text", [
    'if [ -n "$X" ]; then export FP8=True; fi\n',    # a branch that may not run
    "export $NAME=1\n",                             # a name built at run time
    "set -a\nFP8=True\n",                           # every assignment exported
    "set -o allexport\nFP8=True\n",
    "source more.sh\n",                             # another file's exports
    'eval "export FP8=True"\n',
    "$CMD FP8=True\n",                              # a command named at run time
    "f() {\n  export FP8=True\n}\n",                # a function that may be called
    "(export FP8=True)\n",
    "export -n FP8\n",
    "for x in 1; do export FP8=True; done\n",
    "if true; then\n",                              # bash refuses it
])
def test_exports_not_known_here_are_none(text: str) -> None:
    assert exported_names(text) is None


def test_more_names_than_kept_are_none() -> None:
    assert exported_names("".join(f"export V{i}=1\n" for i in range(2000))) is None


def test_followed_by_the_file_name_the_source_line_gives() -> None:
    got = {SOURCED: encode({"/job/conf/config.sh": ("FP8",), "/job/x/other.sh": None})}
    assert followed(got, "./conf/config.sh") == ("FP8",)
    assert followed(got, "other.sh") is None and followed(got, "gone.sh") is None
    assert followed({}, "config.sh") is None and followed({SOURCED: "{"}, "config.sh") is None


def test_two_files_of_one_name_that_differ_are_not_known() -> None:
    got = {SOURCED: encode({"/job/a/config.sh": ("FP8",), "/job/b/config.sh": ("BF16",)})}
    assert followed(got, "config.sh") is None
