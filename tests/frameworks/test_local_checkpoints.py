"""A local checkpoint folder inside the job (AReaL's ``actor.path``, slime's ``--hf-checkpoint``,
OpenRLHF's ``--actor.model_name_or_path``): its config.json's ``quantization_config`` read by
one shared reader (frameworks/ckptconfig.py), bounded, never outside the job.

AReaL's Megatron engine reads ``hf_config.quantization_config`` and refuses FP8 training unless
``quant_method == "fp8"`` (areal/engine/megatron_engine.py:364-366, 1188-1208 @ 4aef98d8): a
checkpoint with no quantization_config, or FP8 weights in another format (fbgemm_fp8,
compressed-tensors), stops the job (FP8D-AREAL-0001); the rollout serves FP8 weights of any
format in FP8. HF's quant_method names: transformers src/transformers/utils/quantization_config.py
@ 142576881d4a (QuantizationMethod). Before, every local path left the rule undetermined.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks.ckptconfig import weights
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "areal"
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.transformer-engine": "2.10.0",
        "pkg.megatron-core": "0.15.0", "pkg.torch": "2.9.1+cu129", "cuda.torch_build": "12.9"}
FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
             "weight_block_size": [128, 128]}                  # Qwen/Qwen3-1.7B-FP8's
CT_FP8 = {"quant_method": "compressed-tensors", "format": "float-quantized",
          "config_groups": {"group_0": {"targets": ["Linear"],
                                        "weights": {"num_bits": 8, "type": "float"}}}}
CT_W4 = {"quant_method": "compressed-tensors", "format": "pack-quantized",
         "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}}


def _ckpt(folder: Path, quant: dict[str, Any] | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {"architectures": ["Qwen3ForCausalLM"], "torch_dtype": "bfloat16"}
    if quant is not None:
        config["quantization_config"] = quant
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder


def _job(job: Path, path: str) -> Path:
    job.mkdir(parents=True, exist_ok=True)
    text = (FIX / "gsm8k_grpo_megatron_fp8.yaml").read_text()
    out = job / "exp.yaml"
    out.write_text(text.replace("path: Qwen/Qwen3-1.7B-FP8", f"path: {path}"))
    return out


def _read(yaml: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    read = read_paths([str(yaml)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return read.facts, read.provenance, {k[7:]: v for k, v in values.items()}


def _rule(yaml: Path) -> str:
    report = preflight.check([str(yaml)], smoke=False, assume=H100)
    if "FP8D-AREAL-0001" in {f.rule_id for f in report.findings}:
        return "fire"
    return "undetermined" if "FP8D-AREAL-0001" in {u.rule_id for u in report.undetermined} \
        else "quiet"


@pytest.mark.parametrize(("quant", "held", "accepted", "rule"), [
    (FP8_BLOCK, True, True, "quiet"),
    (None, False, False, "fire"),                  # BF16 weights
    (CT_FP8, True, False, "fire"),                 # FP8, but not quant_method fp8
    ({"quant_method": "fbgemm_fp8"}, True, False, "fire"),
    (CT_W4, False, False, "fire"),
    ({"quant_method": "gptq", "bits": 4}, False, False, "fire"),
])
def test_a_relative_checkpoint_inside_the_job_is_read(tmp_path: Path, quant: Any, held: bool,
                                                      accepted: bool, rule: str) -> None:
    _ckpt(tmp_path / "ckpt" / "policy", quant)
    yaml = _job(tmp_path, "./ckpt/policy")
    facts, prov, got = _read(yaml)
    assert facts["config.areal.checkpoint_fp8"] is accepted
    assert facts["config.areal.checkpoint_weights.actor"] is held
    assert prov["config.areal.checkpoint_fp8"].startswith(str(tmp_path / "ckpt" / "policy" /
                                                              "config.json"))
    assert got["rollout.fp8"] is held          # the rollout serves ${actor.path}
    assert _rule(yaml) == rule


def test_config_json_beats_the_name(tmp_path: Path) -> None:
    # a folder named ...-FP8 whose config.json holds no quantization_config: BF16 weights
    ckpt = _ckpt(tmp_path / "Qwen3-1.7B-FP8", None)
    facts, _, got = _read(_job(tmp_path, str(ckpt)))            # an absolute path inside
    assert facts["config.areal.checkpoint_fp8"] is False and got["rollout.fp8"] is False


def test_a_checkpoint_outside_the_job_is_not_read(tmp_path: Path) -> None:
    outside = _ckpt(tmp_path / "models" / "policy", FP8_BLOCK)
    yaml = _job(tmp_path / "job", str(outside))
    facts, _, got = _read(yaml)
    held = facts["config.areal.checkpoint_fp8"]
    assert isinstance(held, Unknown) and "outside the job" in held.reason
    assert _rule(yaml) == "undetermined"
    # a symlink in the job to that folder is outside too
    os.symlink(outside, tmp_path / "job" / "link")
    yaml = _job(tmp_path / "job", "./link")
    held = _read(yaml)[0]["config.areal.checkpoint_fp8"]
    assert isinstance(held, Unknown) and "outside the job" in held.reason
    # so is the home of whoever runs it; a name that says FP8 still decides
    assert isinstance(_read(_job(tmp_path / "job", "~/models/policy"))[0][
        "config.areal.checkpoint_fp8"], Unknown)
    assert _read(_job(tmp_path / "job", "~/models/Qwen3-1.7B-FP8"))[0][
        "config.areal.checkpoint_fp8"] is True


def test_a_hub_id_is_judged_by_its_name(tmp_path: Path) -> None:
    facts, _, _ = _read(_job(tmp_path, "Qwen/Qwen3-1.7B"))
    assert facts["config.areal.checkpoint_fp8"] is False
    missing = _read(_job(tmp_path, "./ckpt/none"))[0]["config.areal.checkpoint_fp8"]
    assert isinstance(missing, Unknown) and "no checkpoint folder" in missing.reason


@pytest.mark.parametrize("bad", ["not json {", "[1, 2]", '{"quantization_config": [1]}',
                                 '{"quantization_config": {"quant_method": 8}}',
                                 '{"quantization_config": {"quant_method": "quark"}}',
                                 '{"quantization_config": {"quant_method": "compressed-tensors"}}',
                                 "\udcff", "big", "dir", "fifo"])
def test_a_hostile_config_json_is_unknown_and_bounded(tmp_path: Path, bad: str) -> None:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    config = folder / "config.json"
    if bad == "big":
        config.write_text('{"a": "' + "x" * (2 * 1024 * 1024) + '"}')
    elif bad == "dir":
        config.mkdir()
    elif bad == "fifo":
        os.mkfifo(config)
    elif bad == "\udcff":
        config.write_bytes(b'{"quantization_config": "\xff"}')
    else:
        config.write_text(bad)
    held = weights("./ckpt", str(tmp_path / "exp.yaml"))
    assert isinstance(held.fp8, Unknown)
    accepted = _read(_job(tmp_path, "./ckpt"))[0]["config.areal.checkpoint_fp8"]
    if "quark" in bad or "compressed" in bad:
        assert accepted is False            # a quant_method, and not "fp8": AReaL refuses it
    else:
        assert isinstance(accepted, Unknown)


def test_a_long_path_is_not_searched(tmp_path: Path) -> None:
    held = weights("./" + "a/" * 5000, str(tmp_path / "exp.yaml"))
    assert isinstance(held.fp8, Unknown)


SLIME = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "slime"


@pytest.mark.parametrize(("quant", "fp8"), [(FP8_BLOCK, True), (CT_FP8, True), (None, False),
                                            (CT_W4, False)])
def test_slime_hf_checkpoint_inside_the_job(tmp_path: Path, quant: Any, fp8: bool) -> None:
    """slime's SGLang rollout serves --hf-checkpoint in the format of its quantization_config
    (the same shared reader): a folder of the repository (its work tree's top) is read."""
    (tmp_path / ".git").mkdir()
    _ckpt(tmp_path / "ckpt" / "policy", quant)
    (tmp_path / "low_precision").mkdir()
    shutil.copytree(SLIME / "scripts", tmp_path / "scripts")
    src = SLIME / "low_precision" / "run-qwen3-4b-fp8.sh"
    run = tmp_path / "low_precision" / src.name
    run.write_text(src.read_text().replace("--hf-checkpoint /root/Qwen3-4B-FP8\n",
                                           "--hf-checkpoint ckpt/policy\n", 1))
    read = read_paths([str(run)])
    values, prov = derive(Facts(read.facts, read.provenance))
    assert values["intent.rollout.fp8"] is fp8
    assert prov["intent.rollout.fp8"].startswith(str(tmp_path / "ckpt" / "policy" /
                                                     "config.json"))


@pytest.mark.parametrize(("name", "quant", "fp8"), [("policy", FP8_BLOCK, True),
                                                    ("Qwen3-8B-FP8", CT_FP8, True),
                                                    ("Qwen3-8B-FP8", None, False)])
def test_openrlhf_vllm_serves_the_checkpoint_inside_the_job(tmp_path: Path, name: str,
                                                            quant: Any, fp8: bool) -> None:
    """OpenRLHF builds its vLLM engines with no quantization argument (vllm_engine.py
    l.266-282 @ 3c3be6234e0c): vLLM follows the checkpoint's quantization_config. Before, a
    folder named plainly was "no FP8 rollout" and one named -FP8 Unknown."""
    _ckpt(tmp_path / name, quant)
    run = tmp_path / "run.sh"
    run.write_text("python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 2 "
                   f"--actor.model_name_or_path ./{name}\n")
    read = read_paths([str(run)])
    values, prov = derive(Facts(read.facts, read.provenance))
    assert values["intent.rollout.fp8"] is fp8
    assert prov["intent.rollout.fp8"].startswith(str(tmp_path / name / "config.json"))
    # outside the job (an absolute path elsewhere): as before, from the name
    run.write_text("python3 -m openrlhf.cli.train_ppo_ray --vllm.num_engines 2 "
                   "--actor.model_name_or_path /models/policy\n")
    read = read_paths([str(run)])
    assert derive(Facts(read.facts, read.provenance))[0]["intent.rollout.fp8"] is False


def test_areal_is_not_claimed_on_generic_keys() -> None:
    """frameworks/_claim.py GENERIC (hypothesis found experiment_name, trial_name, evaluator,
    rollout claimed as AReaL): an AReaL-only key or value is needed too."""
    from preflight.frameworks import score

    assert score("areal", {"trial_name": 0, "evaluator": 0, "experiment_name": 0,
                           "rollout": 0}) == 0
    assert score("areal", {"trial_name": "t", "experiment_name": "e", "evaluator": {},
                           "allocation_mode": "sglang:d4+megatron:d4"}) > 0


@pytest.mark.parametrize("bad", ["big", "fifo", "not json", "dir", "link out"])
def test_a_config_json_not_read_is_unknown_whatever_the_folder_name(tmp_path: Path,
                                                                    bad: str) -> None:
    # redteam6: a folder named ...-FP8 whose own config.json was not read (too large, a FIFO, not
    # JSON, a folder, a link out of the job) was FP8 by its name; its config.json decides
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "config.json").write_text('{"architectures": ["SECRET"]}')
    folder = tmp_path / "job" / "Qwen3-1.7B-FP8"
    folder.mkdir(parents=True)
    config = folder / "config.json"
    if bad == "big":
        config.write_text('{"a": "' + "x" * (2 * 1024 * 1024) + '"}')
    elif bad == "fifo":
        os.mkfifo(config)
    elif bad == "dir":
        config.mkdir()
    elif bad == "link out":
        config.symlink_to(tmp_path / "outside" / "config.json")
    else:
        config.write_text("{")
    facts, _, _ = _read(_job(tmp_path / "job", "./Qwen3-1.7B-FP8"))
    held = facts["config.areal.checkpoint_fp8"]
    assert isinstance(held, Unknown) and "config.json" in held.reason
    assert "SECRET" not in repr(facts)
    assert _rule(_job(tmp_path / "job", "./Qwen3-1.7B-FP8")) == "undetermined"   # AREAL-0001
