"""A script the job writes and runs is read from what was written, never from disk (shell16,
holdout23: gpu-recipes' A4 GKE launcher.sh writes ``worker_command.sh`` from a here-document
variable and runs it with ``torchrun --no-python bash``); a stale copy of that name in the
job folder (here BF16) is not the job."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths

KEY = "config.verl.actor_rollout_ref.rollout.quantization"
STALE = "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm\n"
WORKER = ("  cd /opt/verl ;\n  python3 -m verl.trainer.main_ppo \\\n"
          "    actor_rollout_ref.rollout.name=vllm \\\n"
          "    actor_rollout_ref.rollout.quantization=fp8 \\\n"
          "    trainer.n_gpus_per_node=\\$LOCAL_WORLD_SIZE\n")
SCRIPTS = {
    "gke": (f"worker_command=$(cat <<- EOM\n{WORKER}EOM\n)\n"
            'echo "$worker_command" > worker_command.sh\nchmod 777 worker_command.sh\n'
            "torchrun --nproc-per-node=8 --no-python bash worker_command.sh\n"),
    "read": (f"read -r -d '' worker_command <<EOF\n{WORKER}EOF\n"
             "printf '%s' \"$worker_command\" > worker_command.sh\nsrun bash worker_command.sh\n"),
    "cat": (f"cat > worker_command.sh <<EOF\n{WORKER}EOF\nchmod +x worker_command.sh\n"
            "./worker_command.sh\n"),
}


def _read(tmp_path: Path, script: str) -> object:
    (tmp_path / "worker_command.sh").write_text(STALE)
    (tmp_path / "launcher.sh").write_text("#!/bin/bash\n" + script)
    return read_paths([str(tmp_path / "launcher.sh")])


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_written_worker_is_the_job(tmp_path: Path, name: str) -> None:
    read = _read(tmp_path, SCRIPTS[name])
    assert read.facts[KEY] == "fp8"
    assert read.provenance[KEY].path == str(tmp_path / "launcher.sh")
    assert isinstance(read.facts["config.verl.trainer.n_gpus_per_node"], Unknown)
    assert str(tmp_path / "worker_command.sh") not in [f["path"] for f in
                                                       read.facts["config.files"]]


def test_a_worker_written_in_an_undecided_branch_is_not_followed(tmp_path: Path) -> None:
    script = SCRIPTS["gke"].replace('echo "$worker_command" > worker_command.sh\n',
                                    'if [ -n "$X" ]; then\n  echo "$worker_command" > '
                                    "worker_command.sh\nfi\n")
    read = _read(tmp_path, script)
    assert KEY not in read.facts or isinstance(read.facts[KEY], Unknown)
