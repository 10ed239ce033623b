"""jobs/formats.format_of: a file's format from its extension or its first lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from preflight.jobs.formats import format_of

SHELL_HEADS = [
    'export TRAINING_SCRIPT_PATH=${TRAINING_SCRIPT_PATH:-"x/pretrain_gpt.py"}\n',
    "# Basic paths\nMODEL=mixtral\nTP=2\n",
    'if [[ -n "${WANDB_API_KEY:-}" ]]; then\n  export WANDB=1\nfi\n',
    "source ../common.conf\n",
    ". ./env.conf\n",
    "set -euo pipefail\nA=1\n",
    "declare -A CONFIGS=([a]=1)\n",
    "export PATH\n",
]
YAML_HEADS = [
    "key: value\nother: 2\n",
    "# comment\nmodel:\n  hidden: 4096\n",
    "cmd: |\n  export X=1\n  source a.sh\n",
    'a: "x=1"\nb: [1, 2]\n',
    "- item\n- other\n",
]


@pytest.mark.parametrize("head", SHELL_HEADS)
@pytest.mark.parametrize("name", ["common.conf", "runtime", "cluster.env.local"])
def test_a_shell_file_without_a_shell_extension_is_text(name: str, head: str) -> None:
    # holdout21 (Megatron-MoE-ModelZoo): `source .../common.conf` was parsed as YAML and reported
    # as an unreadable config (FP8D-CFG-UNREADABLE, a false error)
    assert format_of(name, head) == "text"


@pytest.mark.parametrize("head", YAML_HEADS)
def test_yaml_stays_yaml(head: str) -> None:
    assert format_of("config.conf", head) == "yaml"


@pytest.mark.parametrize("ext", [".yaml", ".yml"])
def test_the_extension_wins(ext: str) -> None:
    assert format_of(f"a{ext}", SHELL_HEADS[0]) == "yaml"


def test_a_sourced_conf_is_not_an_unreadable_config(tmp_path: Path) -> None:
    job = tmp_path / "job"
    (job / "conf").mkdir(parents=True)
    (job / "conf" / "common.conf").write_text(
        'export MEGATRON=${MEGATRON:-/opt/megatron}\nif [[ -n "${X:-}" ]]; then\n  Y=1\nfi\n')
    (job / "run.sh").write_text('#!/bin/bash\nsource "$(dirname "$0")/conf/common.conf"\n'
                                "torchrun pretrain_gpt.py --fp8-format hybrid --bf16\n")
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "preflight", "check", str(job / "run.sh"),
                           "--no-smoke", "--format", "json", "-o", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "FP8D-CFG-UNREADABLE" not in out.read_text()
