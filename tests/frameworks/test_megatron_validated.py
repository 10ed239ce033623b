"""``config.megatron.validated_args`` (issue 23: rules that must not misfire): the Megatron rules
that cite a check of Megatron-LM's ``validate_args`` judge only stacks that run it -- a
Megatron-LM launch line and slime (slime/utils/arguments.py:1584-1585 @ v0.3.1) --, not ROLL
(mcore_adapter never imports megatron.training at v0.3.0), AReaL (4aef98d8: mbridge / Megatron-
Bridge's model provider) or a Megatron-LM job given ``--yaml-cfg`` (validate_yaml instead,
megatron/training/arguments.py:101-107 @ core_v0.19.0); rules whose refusal is Megatron-Core's
own (TransformerConfig.__post_init__) still judge them all."""

from __future__ import annotations

from pathlib import Path

import pytest

import preflight
from preflight.facts import Unknown
from preflight.frameworks import megatron_args, slime
from preflight.jobs.read import read_paths

ROOT = Path(__file__).resolve().parents[2]
ROLL = ROOT / "fixtures" / "configs" / "roll" / "rlvr_config_moe.yaml"
AREAL = ROOT / "fixtures" / "configs" / "areal" / "gsm8k_grpo_megatron_fp8.yaml"
MEGATRON = ROOT / "fixtures" / "configs" / "megatron"
NAME = "config.megatron.validated_args"
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.10.0",
        "pkg.megatron-core": "0.15.0", "pkg.torch": "2.9.1+cu129", "cuda.torch_build": "12.9",
        "pkg.vllm": "0.10.2"}
# fp8_param_gather without the distributed optimizer: validate_args refuses it (MEG-0001)
LAUNCH = ("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --fp8-format hybrid "
          "--fp8-param-gather --bf16\n")


def _fired(path: Path) -> set[str]:
    return {f.rule_id for f in preflight.check(str(path), smoke=False, assume=H100).findings}


def test_a_megatron_lm_launch_line_runs_validate_args(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(LAUNCH)
    out = megatron_args.read_args_text(str(path), LAUNCH, {})
    assert out.facts[NAME] is True
    assert "FP8D-MEG-0001" in _fired(path)


def test_yaml_cfg_runs_validate_yaml_instead(tmp_path: Path) -> None:
    read = read_paths([str(MEGATRON / "run_with_yaml_cfg.sh")])
    assert read.facts[NAME] is False
    alone = read_paths([str(MEGATRON / "gpt_yaml_cfg_local_impl.yaml")])
    assert alone.facts[NAME] is False
    # a functional-test case's MODEL_ARGS are the command line of pretrain_gpt.py
    case = read_paths([str(MEGATRON / "functional_test_model_config.yaml")])
    assert case.facts[NAME] is True
    # the YAML's fp8_param_gather without the distributed optimizer: validate_yaml has no FP8
    # check, so nothing refuses it there (MEG-0001 fired on 873052f)
    (tmp_path / "gpt.yaml").write_text(
        "language_model:\n  num_layers: 24\n  fp8: hybrid\nfp8_param_gather: true\n"
        "use_distributed_optimizer: false\n")
    script = tmp_path / "run.sh"
    script.write_text("torchrun pretrain_gpt.py --yaml-cfg gpt.yaml --micro-batch-size 4\n")
    read = read_paths([str(script)])
    assert read.facts[NAME] is False
    assert "FP8D-MEG-0001" not in _fired(script)


def test_an_unknown_yaml_cfg_leaves_it_unknown(tmp_path: Path) -> None:
    text = "torchrun pretrain_gpt.py --yaml-cfg\n"
    out = megatron_args.read_args_text(str(tmp_path / "run.sh"), text, {})
    assert isinstance(out.facts[NAME], Unknown)
    assert "--yaml-cfg" in out.facts[NAME].reason


SLIME = """\
ray job submit --address="http://127.0.0.1:8265" -- python3 train.py \\
   --actor-num-nodes 1 --actor-num-gpus-per-node 8 --rollout-batch-size 32 \\
   --fp8-format e4m3 --fp8-recipe blockwise --fp8-param-gather
"""


def test_slime_runs_validate_args_unless_it_only_rolls_out(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(SLIME)
    facts = slime.read_text(str(path), SLIME, {}).facts
    assert facts[NAME] is True and facts["config.megatron.args_of"] == "slime"
    # slime turns the distributed optimizer on itself for Adam (slime.py _zero_optimizer): only
    # a non-Adam optimizer (Unknown: miles turns it off) lets the rule speak, undetermined
    assert facts["config.megatron.use_distributed_optimizer"] is True
    assert "FP8D-MEG-0001" not in _fired(path)
    path.write_text(SLIME.replace("--rollout-batch-size 32", "--rollout-batch-size 32 "
                                  "--optimizer sgd"))
    report = preflight.check(str(path), smoke=False, assume=H100)
    assert "FP8D-MEG-0001" in {u.rule_id for u in report.undetermined}
    only = SLIME.replace("--rollout-batch-size 32", "--rollout-batch-size 32 --debug-rollout-only")
    facts = slime.read_text(str(path), only, {}).facts
    assert facts[NAME] is False


def _roll(tmp_path: Path, settings: str) -> Path:
    text = ROLL.read_text()
    anchor, distopt = "      moe_layer_recompute: true", "      use_distributed_optimizer: true"
    assert anchor in text and distopt in text
    text = text.replace(distopt, "      use_distributed_optimizer: false")
    out = tmp_path / "rlvr.yaml"
    out.write_text(text.replace(anchor, anchor + "\n" + settings, 1))
    return out


def test_roll_never_runs_validate_args(tmp_path: Path) -> None:
    # fp8_param without use_distributed_optimizer (turned off): MEG-0001 fired on
    # 873052f, though nothing in ROLL v0.3.0 makes that check
    path = _roll(tmp_path, "      fp8: e4m3\n      fp8_recipe: blockwise\n      fp8_param: true")
    read = read_paths([str(path)])
    assert read.facts[NAME] is False and "ROLL v0.3.0" in str(read.provenance[NAME])
    assert read.facts["config.megatron.fp8_param_gather"] is True
    assert read.facts["config.megatron.use_distributed_optimizer"] is False
    assert "FP8D-MEG-0001" not in _fired(path)


def test_roll_still_meets_megatron_cores_own_refusals(tmp_path: Path) -> None:
    # fp8_param without an FP8 format: TransformerConfig.__post_init__ raises, which
    # McaModelConfig runs (mcore_adapter models/model_config.py:181-186 @ ROLL v0.3.0)
    path = _roll(tmp_path, "      fp8_param: true")
    assert "FP8D-MEG-0014" in _fired(path)


def test_areal_never_runs_validate_args(tmp_path: Path) -> None:
    text = AREAL.read_text()
    anchor = "      fp8_param_gather: true"
    assert anchor in text
    path = tmp_path / "exp.yaml"
    path.write_text(text.replace(anchor, anchor + "\n      use_distributed_optimizer: false"))
    read = read_paths([str(path)])
    assert read.facts[NAME] is False and "AReaL" in str(read.provenance[NAME])
    assert read.facts["config.megatron.use_distributed_optimizer"] is False
    assert "FP8D-MEG-0001" not in _fired(path)


PARSED = "config.megatron.parsed_args"
DROPS = "config.megatron.drops_unknown"


def _found(path: Path) -> dict[str, str]:
    """Rule id -> "fire" / "undetermined" for the rules that did not stay quiet."""
    report = preflight.check(str(path), smoke=False, assume=H100)
    return {**{u.rule_id: "undetermined" for u in report.undetermined},
            **{f.rule_id: "fire" for f in report.findings}}


def test_which_stacks_run_megatron_lms_parser(tmp_path: Path) -> None:
    # a Megatron-LM launch line, --yaml-cfg included (the command line is parsed first)
    assert megatron_args.read_args_text(str(tmp_path / "run.sh"), LAUNCH, {}).facts[PARSED] is True
    assert read_paths([str(MEGATRON / "run_with_yaml_cfg.sh")]).facts[PARSED] is True
    # a --yaml-cfg file read alone says nothing of the command line that names it
    assert PARSED not in read_paths([str(MEGATRON / "gpt_yaml_cfg_local_impl.yaml")]).facts
    # slime: Megatron's parse_args, as parse_known_args (v0.2.3+)
    path = tmp_path / "slime.sh"
    path.write_text(SLIME)
    facts = slime.read_text(str(path), SLIME, {}).facts
    assert facts[PARSED] is True and facts[DROPS] is True
    # ROLL and AReaL set Megatron-Core's fields themselves, dropping those it lacks
    roll = read_paths([str(_roll(tmp_path, "      fp8: e4m3"))])
    assert roll.facts[PARSED] is False and roll.facts[DROPS] is True
    areal = read_paths([str(AREAL)])
    assert areal.facts[PARSED] is False and areal.facts[DROPS] is True


def test_roll_meets_the_recipe_check_later_in_megatron_core(tmp_path: Path) -> None:
    # `custom` on megatron-core 0.15 (ROLL v0.3.0 allows >=0.15): no argparse refuses it, so
    # MEG-0006 stays quiet; Megatron-Core's get_fp8_context raises when it builds the recipe
    # (fp8_utils.py:469-474 @ core_v0.15.0), which nothing reported on 626fbc8 (MEG-0060)
    path = _roll(tmp_path, "      fp8: e4m3\n      fp8_recipe: custom")
    found = _found(path)
    assert found.get("FP8D-MEG-0060") == "fire"
    assert "FP8D-MEG-0006" not in found


def test_areal_fp8_params_under_torch_fsdp2_fail_in_megatron_core(tmp_path: Path) -> None:
    text = AREAL.read_text()
    anchor = "      fp8_param_gather: true"
    path = tmp_path / "exp.yaml"
    path.write_text(text.replace(anchor, anchor + "\n    use_torch_fsdp2: true"))
    read = read_paths([str(path)])
    assert read.facts["config.megatron.use_torch_fsdp2"] is True
    found = _found(path)
    # validate_args would have turned the FP8 parameters off (MEG-0008); here nothing does
    assert found.get("FP8D-MEG-0062") == "fire" and "FP8D-MEG-0008" not in found


def test_areal_ddp_fp8_param_gather_alone_is_not_refused(tmp_path: Path) -> None:
    # ddp.fp8_param_gather without fp8_config: AReaL's TransformerConfig.fp8_param is
    # fp8_config.param, so nothing raises "fp8_param must be used together with fp8 mode" (MEG-0014
    # fired as an error on 626fbc8); the parameters stay BF16
    text = AREAL.read_text()
    block = "    fp8_config:\n      mode: hybrid\n      recipe: blockwise\n      param: true\n"
    assert block in text
    path = tmp_path / "exp.yaml"
    path.write_text(text.replace(block, ""))
    read = read_paths([str(path)])
    assert read.facts["config.megatron.fp8_param_gather"] is True
    assert read.facts["config.megatron.post_init_sees_fp8"] is False
    assert "FP8D-MEG-0014" not in _found(path)


@pytest.mark.parametrize("decoy", [
    'echo "a YAML run would pass --yaml-cfg cfg.yaml"\n',
    'NOTE="--yaml-cfg cfg.yaml"\n',
    "if false; then\n  torchrun pretrain_gpt.py --yaml-cfg cfg.yaml\nfi\n",
    "unused() {\n  torchrun pretrain_gpt.py --yaml-cfg cfg.yaml\n}\n",
])
def test_only_the_launch_that_runs_gives_yaml_cfg(tmp_path: Path, decoy: str) -> None:
    # redteam6: any --yaml-cfg of the text made validate_args "not run", MEG-0001 quiet
    (tmp_path / "cfg.yaml").write_text("language_model:\n  num_layers: 2\n")
    path = tmp_path / "run.sh"
    path.write_text(decoy + LAUNCH)
    read = read_paths([str(path)])
    found = _found(path)
    if "--yaml-cfg" in decoy.split("\n", 1)[0] or decoy.startswith(("if false", "unused")):
        # no launch: nothing runs it; `if false` never runs either (megflags: decided), nor a
        # function never called (reading/shellreach.py, shell18)
        assert read.facts[NAME] is True and "config.megatron.yaml_cfg" not in read.facts
        assert found.get("FP8D-MEG-0001") == "fire"
    else:   # a launch in a branch or function not followed here: which one runs is not known
        assert isinstance(read.facts[NAME], Unknown)
        assert found.get("FP8D-MEG-0001") == "undetermined"


def test_yaml_cfg_through_an_array_counts_and_differing_launches_are_unknown(
        tmp_path: Path) -> None:
    text = ('ARGS=(--num-layers 2 --yaml-cfg cfg.yaml)\n'
            'torchrun pretrain_gpt.py "${ARGS[@]}" --fp8-format hybrid --fp8-param-gather\n')
    out = megatron_args.read_args_text(str(tmp_path / "run.sh"), text, {})
    assert out.facts[NAME] is False
    two = text + "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-param-gather\n"
    out = megatron_args.read_args_text(str(tmp_path / "run.sh"), two, {})
    assert isinstance(out.facts[NAME], Unknown) and "differ in --yaml-cfg" in out.facts[NAME].reason


def test_an_echoed_debug_rollout_only_is_not_slimes(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    text = 'echo "--debug-rollout-only"\n' + SLIME
    facts = slime.read_text(str(path), text, {}).facts
    assert facts[NAME] is True
    facts = slime.read_text(str(path), SLIME.replace("train.py", "train.py --debug-rollout-only"),
                            {}).facts
    assert facts[NAME] is False
