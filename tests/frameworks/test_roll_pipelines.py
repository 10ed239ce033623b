"""ROLL's SFT, distillation and on-policy distillation pipelines (frameworks/roll_workers.py
``TRAINERS``; issue 22): their trainer is ``sft_train`` / ``student`` / ``student_train``, read with
the same strategies and FP8 settings as ``actor_train``. Public configs of alibaba/ROLL v0.3.0
(fixtures/configs/roll/README.md); the FP8 variants follow mcore_adapter's training_args.py:250-268
at that tag, as tests/frameworks/test_roll.py's do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "roll"
SFT, DISTILL, OPD = (FIX / "sft_config.yaml", FIX / "distill_megatron.yaml",
                     FIX / "onpolicy_distill_config.yaml")
FP8 = "      fp8: e4m3\n      fp8_recipe: blockwise\n      fp8_param: true\n"


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    read = read_paths([str(path)], None)
    assert [k for _, k in read.files] == ["roll"]
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts


def _variant(tmp_path: Path, path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert text.count(old) == 1, old
    out = tmp_path / path.name
    out.write_text(text.replace(old, new))
    return out


def test_sft_megatron_is_read_from_sft_train() -> None:
    got, facts = _read(SFT)
    assert got["fp8"][0] is False and got["distributed"][0] == "megatron"
    assert (got["tp"][0], got["cp"][0]) == (2, 2) and got["sequence_parallel"][0] is True
    assert facts["config.megatron.pipeline_model_parallel_size"] == 2
    assert facts["config.megatron.use_distributed_optimizer"] is True
    assert got["precision"][0] == "bf16" and "sft_config.yaml" in got["precision"][1]
    assert not any(k.startswith("rollout.") for k in got)       # SFT generates nothing


def test_sft_fp8_reaches_megatron_and_its_rules(tmp_path: Path) -> None:
    path = _variant(tmp_path, SFT, "      context_parallel_size: 2\n",
                    "      context_parallel_size: 2\n" + FP8)
    got, facts = _read(path)
    assert got["fp8"][0] is True and str(got["fp8"][1]).endswith("sft_config.yaml:68")
    assert (got["format"][0], got["recipe"][0], got["fp8_params"][0]) == ("e4m3", "blockwise",
                                                                          True)
    assert facts["config.megatron.fp8_format"] == "e4m3"
    assert facts["config.megatron.fp8_param_gather"] is True


def test_distill_student_trains_teacher_is_no_rollout(tmp_path: Path) -> None:
    got, facts = _read(DISTILL)
    assert got["fp8"][0] is False and got["distributed"][0] == "megatron"
    assert got["recompute_granularity"][0] == "full"
    assert not any(k.startswith("rollout.") for k in got)
    # the teacher's megatron_infer settings are not the trainer's
    path = _variant(tmp_path, DISTILL, "      recompute_granularity: full\n",
                    "      recompute_granularity: full\n" + FP8)
    got, facts = _read(path)
    assert got["fp8"][0] is True and facts["config.megatron.fp8_recipe"] == "blockwise"
    assert facts["config.megatron.tensor_model_parallel_size"] == 2


def test_distill_student_on_deepspeed_has_no_fp8_path(tmp_path: Path) -> None:
    path = _variant(tmp_path, DISTILL, "    strategy_name: megatron_train\n",
                    "    strategy_name: deepspeed_train\n")
    got, facts = _read(path)
    assert got["fp8"][0] is False and got["distributed"][0] == "deepspeed"
    assert "no FP8 path" in got["fp8"][1] and "config.megatron.args_of" not in facts


def test_onpolicy_distill_student_infer_is_the_rollout(tmp_path: Path) -> None:
    got, facts = _read(OPD)
    assert got["fp8"][0] is False and got["distributed"][0] == "megatron"
    assert got["rollout.engine"][0] == "vllm" and got["rollout.fp8"][0] is False
    path = _variant(tmp_path, OPD, "      load_format: auto\n",
                    "      load_format: auto\n      quantization: fp8\n")
    got, _ = _read(path)
    assert got["rollout.fp8"][0] is True and got["rollout.recipe"][0] == "tensorwise"
    assert got["rollout.is_correction"][0] is False
    assert "FP8D-RL-0001" in {f.rule_id for f in preflight.check([str(path)],
                                                                 smoke=False).findings}


def test_decoys_and_unknown_strategies(tmp_path: Path) -> None:
    # a trainer key in a comment or a string value is no worker section
    path = _variant(tmp_path, SFT, "sft_train:\n", "# actor_train:\nnote: 'actor_train: x'\n"
                    "sft_train:\n")
    assert _read(path)[0]["distributed"][0] == "megatron"
    (tmp_path / "b").mkdir()
    bad = _variant(tmp_path / "b", SFT, "    strategy_name: megatron_train\n",
                   "    strategy_name: Megatron_Train\n")
    got, _ = _read(bad)
    assert isinstance(got["fp8"][0], Unknown) and "none of ROLL's" in got["fp8"][0].reason
