"""ArcticTraining read from its public config (fixtures/configs/arctic_training, README cites the
repository and commit), PR 331's FP8 example, and the ``arctic_training CONFIG.yaml`` launcher:
detection on its own keys only, FP8 intent (TE recipe, format, DeepSpeed), and its FP8 rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND, detect
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "arctic_training"
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.torch": "2.9.1+cu128", "cuda.torch_build": "12.8",
        "pkg.transformer-engine": "2.10.0", "pkg.deepspeed": "0.18.2"}
# PR 331's example (snowflakedb/ArcticTraining pull 331, df2920e8), keys verbatim.
PR331 = """\
model:
  name_or_path: Qwen/Qwen3-8B
  fp8_recipe:
    type: delayedscaling
    fp8_format: hybrid
    amax_history_len: 16
    amax_compute_algo: max
  fp8_target_modules:
    - q_proj
    - k_proj
    - v_proj
    - up_proj
    - down_proj
    - gate_proj

data:
  sources:
    - type: huggingface_instruct
      name_or_path: HuggingFaceH4/ultrachat_200k:train[:1000]
"""


def _read(*paths: Path | str) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts, list(read.problems)


def _fired(paths: list[Path], assume: dict[str, str] | None = None) -> tuple[set[str], set[str]]:
    report = preflight.check([str(p) for p in paths], smoke=False, assume=assume or H100)
    return {f.rule_id for f in report.findings}, {u.rule_id for u in report.undetermined}


def _job(tmp_path: Path, config: str = PR331, line: str = "arctic_training train.yaml") -> Path:
    (tmp_path / "train.yaml").write_text(config)
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n" + line + "\n")
    return script


def test_its_configs_are_claimed_and_generic_keys_claim_nothing() -> None:
    data = parse_yaml((FIX / "run-causal.yml").read_text()).data
    assert detect("yaml", data)[0] == "arctic_training"
    assert detect("yaml", parse_yaml(PR331).data)[0] == "arctic_training"
    generic = {"model": {"name_or_path": "x"}, "data": {"sources": [{"type": "huggingface"}]},
               "seed": 1, "deepspeed": {}, "optimizer": {"learning_rate": 1e-5}}
    assert BY_KIND["arctic_training"].score(generic) == 0


def test_release_config_is_bf16_deepspeed_zero3() -> None:
    got, facts, problems = _read(FIX / "run-causal.yml")
    assert facts["config.kinds"] == ["arctic_training"]
    assert got["fp8"][0] is False
    assert got["distributed"][0] == "deepspeed"
    assert got["zero_stage"][0] == 3
    assert got["precision"][0] == "bf16"
    assert got["micro_batch"][0] == 1
    assert "deepspeed" in got["stack"][0]
    assert not problems


def test_pr331_launch_reads_te_delayed_hybrid(tmp_path: Path) -> None:
    script = _job(tmp_path)
    got, facts, _ = _read(script)
    assert facts["config.arctic_training.fp8_recipe_type"] == "delayedscaling"
    assert (got["fp8"][0], got["backend"][0], got["recipe"][0], got["format"][0]) == \
        (True, "te", "delayed", "hybrid")
    assert got["fp8"][1].endswith("train.yaml:4")
    assert got["zero_stage"][0] == 2            # ArcticTraining's default, no deepspeed block
    assert got["compile"][0] is False
    fired, undetermined = _fired([script, tmp_path / "train.yaml"])
    assert not {r for r in fired if r.startswith("FP8D-ARCTIC")}
    assert "FP8D-ARCTIC-0001" in undetermined      # arctic-training not installed here


def test_recipe_class_defaults_and_unknown_types(tmp_path: Path) -> None:
    blocks = PR331.replace("type: delayedscaling\n    fp8_format: hybrid\n",
                           "type: MXFP8BlockScaling\n")
    got, _, _ = _read(_job(tmp_path, blocks))
    assert (got["recipe"][0], got["format"][0]) == ("mxfp8", "e4m3")
    wrong = PR331.replace("type: delayedscaling", "type: tensorwise")
    got, facts, _ = _read(_job(tmp_path, wrong))
    assert isinstance(got["recipe"][0], Unknown)
    fired, _ = _fired([tmp_path / "train.yaml"])
    assert "FP8D-ARCTIC-0003" in fired


def test_fp8_on_a_release_and_missing_modules(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(PR331)
    fired, _ = _fired([tmp_path / "train.yaml"], {**H100, "pkg.arctic-training": "0.8.0"})
    assert "FP8D-ARCTIC-0001" in fired
    fired, _ = _fired([tmp_path / "train.yaml"],
                      {**H100, "pkg.arctic-training": "0.8.0", "pkg.transformer-engine": "2.8.0"})
    assert "FP8D-ARCTIC-0004" in fired
    bare = PR331.split("  fp8_target_modules:")[0] + "\ndata:\n  sources: []\n"
    (tmp_path / "train.yaml").write_text(bare)
    fired, _ = _fired([tmp_path / "train.yaml"])
    assert "FP8D-ARCTIC-0002" in fired


def test_fp8_recipe_null_is_off(tmp_path: Path) -> None:
    off = PR331.replace("  fp8_recipe:\n    type: delayedscaling\n    fp8_format: hybrid\n"
                        "    amax_history_len: 16\n    amax_compute_algo: max\n",
                        "  fp8_recipe: null\n")
    got, _, _ = _read(_job(tmp_path, off))
    assert got["fp8"][0] is False


def test_hostile_recipe_type_is_bounded(tmp_path: Path) -> None:
    odd = PR331.replace("type: delayedscaling", "type: [1, 2]")
    got, facts, _ = _read(_job(tmp_path, odd))
    assert isinstance(facts["config.arctic_training.fp8_recipe_type"], Unknown)
    assert isinstance(got["recipe"][0], Unknown)
    huge = PR331.replace("type: delayedscaling", "type: " + "x" * 100_000)
    _, facts, _ = _read(_job(tmp_path, huge))
    assert len(facts["config.arctic_training.fp8_recipe_type"]) <= 80


def test_launch_naming_a_file_outside_the_job_is_not_read(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    (tmp_path / "outside.yaml").write_text(PR331)
    script = job / "run.sh"
    script.write_text("#!/bin/bash\narctic_training ../outside.yaml --num_gpus 8\n")
    got, facts, _ = _read(script)
    assert "config.arctic_training.fp8_recipe_type" not in facts
    assert got["fp8"][0] is not True
    assert got["num_gpus"][0] == 8
