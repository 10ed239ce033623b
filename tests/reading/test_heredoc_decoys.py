"""A here-document holding a decoy launch line before the real one (redteam10's open item 5):
its body is data (a file written, a usage text, a variable's value the launch never uses,
Python code), never the job's launch. Pinned across the forms bash knows and the readers that
read flags anywhere in a script (``Launch.heredoc_values``): each decoy carries FP8, the real
line none, so a body read as a launch turns the verdict. ``bash -s <<EOF`` runs its body: the
control."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths

LINES = {   # (the decoy, with FP8; the real launch, without)
    "megatron": ("torchrun pretrain_gpt.py --fp8-format hybrid --num-layers 2",
                 "torchrun pretrain_gpt.py --bf16 --num-layers 2"),
    "verl": ("python -m verl.trainer.main_ppo actor_rollout_ref.actor.strategy=megatron "
             "+actor_rollout_ref.actor.megatron.override_transformer_config.fp8=hybrid",
             "python -m verl.trainer.main_ppo actor_rollout_ref.actor.strategy=megatron"),
    "torchtitan": ("torchrun -m torchtitan.train --model.converters float8",
                   "torchrun -m torchtitan.train --model.converters none"),
    "accelerate": ("accelerate launch --mixed_precision fp8 train.py",
                   "accelerate launch --mixed_precision bf16 train.py"),
}
FORMS = {
    "cat to a file": "cat > notes.txt <<EOF\n{decoy}\nEOF\n",
    "quoted delimiter": "cat <<'EOF' > notes.txt\n{decoy}\nEOF\n",
    "<<- with tabs": "cat <<-EOF > notes.txt\n\t{decoy}\n\tEOF\n",
    "read into a variable never used": "read -r -d '' USAGE <<EOF\n{decoy}\nEOF\n",
    "$(cat) into a variable never used": "USAGE=$(cat <<EOF\n{decoy}\nEOF\n)\n",
    "two on one line": "cat <<A > x; cat <<B > y\na\nA\n{decoy}\nB\n",
    "in a function": "usage() {{\n  cat <<EOF\n{decoy}\nEOF\n}}\n",
    "python code": "python - <<EOF\nimport os\nos.system('{decoy}')\nEOF\n",
    "after &&": "true && cat > notes.txt <<EOF\n{decoy}\nEOF\n",
}


def _fp8(tmp_path: Path, text: str) -> Any:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "train.py").write_text("import torch\n")
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n" + text)
    read = read_paths([str(script)])
    return derive(Facts(read.facts, read.provenance))[0]["intent.fp8"]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("kind", sorted(LINES))
def test_a_heredoc_decoy_is_no_launch(tmp_path: Path, kind: str, form: str) -> None:
    decoy, real = LINES[kind]
    assert _fp8(tmp_path, FORMS[form].format(decoy=decoy) + real + "\n") is False


@pytest.mark.parametrize("kind", sorted(LINES))
def test_the_decoy_line_alone_is_fp8(tmp_path: Path, kind: str) -> None:
    assert _fp8(tmp_path, LINES[kind][0] + "\n") is True     # so the cases above can fail


def test_a_body_bash_runs_is_the_launch(tmp_path: Path) -> None:
    assert _fp8(tmp_path, "bash -s <<EOF\n" + LINES["megatron"][0] + "\nEOF\n") is True
