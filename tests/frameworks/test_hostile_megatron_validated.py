"""``config.megatron.validated_args`` against decoys (redteam6, issue 21): a flag that turns
Megatron-LM's ``validate_args`` off (``--yaml-cfg``: validate_yaml runs instead, arguments.py:
101-107 @ core_v0.19.0; slime's ``--debug-rollout-only``, slime/utils/arguments.py:1584 @ v0.3.1)
counts only where the launch that runs carries it. The Megatron flag reader takes every
``--flag`` of the script's text, so an ``echo``, an unused variable, a branch that never runs or a
function never called that mentions it made the fact false and FP8D-MEG-0001 (``--fp8-param-gather``
without the distributed optimizer) quiet on the real launch line after it.

Fixed by megparse (frameworks/megatron_script.py ``carried``: the flag counts only on the training
launches that may run; main 9e40436): fired, or undetermined where the launches differ."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight

H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.10.0",
        "pkg.megatron-core": "0.15.0", "pkg.torch": "2.9.1+cu129", "cuda.torch_build": "12.9"}
LAUNCH = ("torchrun --nproc_per_node 8 pretrain_gpt.py --bf16 --fp8-format hybrid "
          "--fp8-param-gather --num-layers 2\n")
SLIME = ("python train.py --actor-num-nodes 1 --rollout-num-gpus 8 --bf16 --fp8-format hybrid "
         "--fp8-param-gather --hf-checkpoint /m\n")


def _fired(tmp_path: Path, text: str) -> set[str]:
    path = tmp_path / "run.sh"
    path.write_text(text)
    report = preflight.check(str(path), smoke=False, assume=H100)
    return {f.rule_id for f in report.findings} | {u.rule_id for u in report.undetermined}


def test_the_real_launch_line_fires(tmp_path: Path) -> None:
    assert "FP8D-MEG-0001" in _fired(tmp_path, LAUNCH)


@pytest.mark.parametrize("decoy", [
    'echo "a YAML run would pass --yaml-cfg cfg.yaml"\n',
    'NOTE="--yaml-cfg cfg.yaml"\n',
    "if false; then\n  torchrun pretrain_gpt.py --yaml-cfg cfg.yaml\nfi\n",
    "unused() {\n  torchrun pretrain_gpt.py --yaml-cfg cfg.yaml\n}\n",
])
def test_a_yaml_cfg_decoy_never_silences_the_rule(tmp_path: Path, decoy: str) -> None:
    # fired, or at worst undetermined: never quiet
    assert "FP8D-MEG-0001" in _fired(tmp_path, decoy + LAUNCH)


def test_an_echoed_debug_rollout_only_never_silences_slime(tmp_path: Path) -> None:
    # With Adam slime turns the distributed optimizer on itself (slime.py _zero_optimizer): a
    # non-Adam optimizer leaves it Unknown (miles turns it off), so the rule can still speak.
    sgd = SLIME.replace("--hf-checkpoint", "--optimizer sgd --hf-checkpoint")
    assert "FP8D-MEG-0001" in _fired(tmp_path, sgd)
    assert "FP8D-MEG-0001" in _fired(tmp_path, 'echo "--debug-rollout-only"\n' + sgd)


def test_slime_and_miles_turn_the_distributed_optimizer_on_for_adam(tmp_path: Path) -> None:
    """holdout11 (miles run_qwen3_4b.py with --fp8-param-gather): slime sets
    use_distributed_optimizer after parsing, so FP8D-MEG-0001 was a false alarm."""
    assert "FP8D-MEG-0001" not in _fired(tmp_path, SLIME)
    assert "FP8D-MEG-0001" not in _fired(tmp_path, SLIME.replace("--bf16", "--optimizer adam --bf16"))
