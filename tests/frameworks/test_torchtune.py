"""torchtune read from its public recipe configs (fixtures/configs/torchtune, README cites the
repository and commit) and from ``tune run`` launch lines, as torchtune parses them at
meta-pytorch/torchtune bd2a0fc7: detection on its own keys only, the recipe that runs (only
full_finetune_distributed reads ``enable_fp8_training``), overrides (``~key``, the
``_component_`` shorthand, ``None``), shipped config names Unknown, and the FP8 rules."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import preflight
from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND, detect
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading.parse import parse_yaml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "torchtune"
H100 = {"gpu": "H100", "gpu.count": "8", "pkg.torch": "2.9.1+cu128", "pkg.torchao": "0.14.0",
        "pkg.torchtune": "0.7.0.dev20250801", "cuda.torch_build": "12.8"}


def _read(*paths: Path | str) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}, read.facts, list(read.problems)


def _fired(paths: list[Path], assume: dict[str, str] | None = None) -> tuple[set[str], set[str]]:
    report = preflight.check([str(p) for p in paths], smoke=False, assume=assume or H100)
    return {f.rule_id for f in report.findings}, {u.rule_id for u in report.undetermined}


def _job(tmp_path: Path, line: str, config: str = "llama3_1_8B_full.yaml") -> Path:
    (tmp_path / "configs").mkdir(exist_ok=True)
    shutil.copy(FIX / config, tmp_path / "configs" / "train.yaml")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n" + line + "\n")
    return script


RUN = ("tune run --nproc_per_node 8 full_finetune_distributed --config configs/train.yaml "
       "enable_fp8_training=True fp8_recipe_name=tensorwise")


def test_recipe_yamls_are_torchtunes_and_generic_keys_claim_nothing() -> None:
    for name in ("llama3_1_8B_full.yaml", "llama3_1_8B_lora.yaml",
                 "llama4_scout_17B_16E_full.yaml"):
        data = parse_yaml((FIX / name).read_text()).data
        assert detect("yaml", data)[0] == "torchtune", name
    generic = {"output_dir": "/tmp/x", "seed": 1, "tokenizer": {"path": "t"}, "batch_size": 2,
               "compile": False, "dtype": "bf16"}
    assert BY_KIND["torchtune"].score(generic) == 0


def test_holdout9_fp8_tensorwise_without_compile(tmp_path: Path) -> None:
    script = _job(tmp_path, RUN)
    got, facts, _ = _read(script)
    assert got["fp8"][0] is True and got["fp8"][1].endswith("run.sh:2")
    assert (got["backend"][0], got["recipe"][0]) == ("torchao", "tensorwise")
    assert got["compile"][0] is False and got["precision"][0] == "bf16"
    assert got["distributed"][0] == "fsdp2" and got["num_gpus"][0] == 8
    assert got["activation_checkpointing"][0] is True and got["micro_batch"][0] == 2
    assert got["packing"][0] is False and got["stack"][0] == ["torchtune"]
    assert facts["config.torchtune.recipe_reads_fp8"] is True
    fired, _ = _fired([script])
    assert "FP8D-TAO-0004" in fired and not {f for f in fired if f.startswith("FP8D-TUNE")}


def test_compile_on_the_line_and_rowwise(tmp_path: Path) -> None:
    got, _, _ = _read(_job(tmp_path, RUN.replace("tensorwise", "rowwise") + " compile=True"))
    assert got["compile"][0] is True and got["recipe"][0] == "rowwise"
    got, _, _ = _read(_job(tmp_path, RUN + " compile.model=False compile.loss=True"))
    assert got["compile"][0] is False


def test_lora_recipe_ignores_the_fp8_switch(tmp_path: Path) -> None:
    line = ("tune run --nproc_per_node 2 lora_finetune_distributed --config configs/train.yaml "
            "enable_fp8_training=True")
    script = _job(tmp_path, line, "llama3_1_8B_lora.yaml")
    got, facts, _ = _read(script)
    assert facts["config.torchtune.recipe_reads_fp8"] is False
    assert got["fp8"][0] is False and got["fp8_source"][0].endswith("run.sh:2")
    fired, _ = _fired([script])
    assert "FP8D-TUNE-0001" in fired and "FP8D-TAO-0004" not in fired


def test_released_torchtune_has_no_fp8(tmp_path: Path) -> None:
    fired, _ = _fired([_job(tmp_path, RUN)], {**H100, "pkg.torchtune": "0.6.1"})
    assert "FP8D-TUNE-0002" in fired


def test_shipped_config_name_is_not_read(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("tune download meta-llama/Meta-Llama-3.1-8B-Instruct --output-dir /tmp/m\n"
                      "tune run --nnodes 1 --nproc_per_node 4 full_finetune_distributed "
                      "--config llama3_1/8B_full enable_fp8_training=True\n")
    got, facts, _ = _read(script)
    # the shipped config's settings, alike at v0.6.1 and bd2a0fc7 (preflight/data/...json)
    assert facts["config.torchtune.base_config"] == "shipped:llama3_1/8B_full"
    assert got["fp8"][0] is True and got["compile"][0] is False
    assert "shipped llama3_1/8B_full" in got["compile"][1] and got["num_gpus"][0] == 4
    assert "FP8D-TAO-0004" in _fired([script])[0]
    script.write_text("tune run full_finetune_distributed --config llama3_1/8B_full "
                      "compile=True enable_fp8_training=True\n")
    assert _read(script)[0]["compile"][0] is True
    script.write_text("tune run full_finetune_distributed --config llama9/70B_nothing "
                      "enable_fp8_training=True\n")
    got, facts, _ = _read(script)
    base = facts["config.torchtune.base_config"]
    assert isinstance(base, Unknown) and "llama9/70B_nothing" in base.reason
    assert got["fp8"][0] is True and isinstance(got["compile"][0], Unknown)
    fired, undetermined = _fired([script])
    assert "FP8D-TAO-0004" not in fired and "FP8D-TAO-0004" in undetermined
    script.write_text("tune run full_finetune_distributed --config llama9/70B_nothing\n")
    got, _, _ = _read(script)
    assert isinstance(got["fp8"][0], Unknown)      # a YAML not read may set it


def test_shipped_setting_that_changed_between_refs_is_unknown() -> None:
    from preflight.frameworks.torchtune_shipped import _table, shipped
    name = next(n for n, e in _table()["configs"].items() if "dataset.packed" in e["differs"])
    values, where = shipped(name)  # type: ignore[misc]
    assert isinstance(values["dataset"]["packed"], Unknown) and name in where


def test_overrides_as_torchtune_merges_them(tmp_path: Path) -> None:
    line = (RUN + " ~enable_activation_checkpointing model=torchtune.models.llama3_1.llama3_1_70b"
            " fp8_recipe_name=None dtype=fp32 tokenizer.max_seq_len=4096 dataset.packed=True")
    got, facts, problems = _read(_job(tmp_path, line))
    assert facts["config.torchtune.model._component_"] == "torchtune.models.llama3_1.llama3_1_70b"
    assert facts["config.torchtune.enable_activation_checkpointing"] is None
    assert facts["config.torchtune.fp8_recipe_name"] is None and got["recipe"][0] == "tensorwise"
    assert got["precision"][0] == "fp32" and got["seq_len"][0] == 4096
    assert got["packing"][0] is True and not problems


def test_refused_arguments_name_their_line(tmp_path: Path) -> None:
    line = RUN + " \\\n  --max_steps 3 \\\n  checkpointer.checkpoint_dir=a=b \\\n  ~model._component_"
    _, _, problems = _read(_job(tmp_path, line))
    lines = sorted(p.line for p in problems if p.path.endswith("run.sh"))
    assert lines == [3, 4, 5]


def test_custom_recipe_judged_by_its_text(tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "mine.py").write_text(
        "def main(cfg):\n    model = build(cfg)\n    return train(model)\n")
    line = "tune run --nproc_per_node 8 recipes/mine.py --config configs/train.yaml " \
           "enable_fp8_training=True"
    script = _job(tmp_path, line)
    got, facts, _ = _read(script)
    assert facts["config.torchtune.recipe_builtin"] is False
    assert got["fp8"][0] is False and "FP8D-TUNE-0001" in _fired([script])[0]
    (tmp_path / "recipes" / "mine.py").write_text(
        "def main(cfg):\n    fp8 = cfg.get('enable_fp8_training', False)\n")
    got, _, _ = _read(script)
    assert got["fp8"][0] is True
    script.write_text(line.replace("recipes/mine.py", "recipes/absent.py") + "\n")
    got, _, _ = _read(script)
    assert isinstance(got["fp8"][0], Unknown)


def test_fp8_rules_on_parallelism(tmp_path: Path) -> None:
    line = ("tune run --nproc_per_node 8 full_finetune_distributed --config configs/train.yaml "
            "enable_fp8_training=True")
    fired, _ = _fired([_job(tmp_path, line, "llama4_scout_17B_16E_full.yaml")])
    assert "FP8D-TUNE-0006" in fired
    fired, _ = _fired([_job(tmp_path, line + " tensor_parallel_dim=1",
                            "llama4_scout_17B_16E_full.yaml")])
    assert "FP8D-TUNE-0006" not in fired
    fired, _ = _fired([_job(tmp_path, line + " context_parallel_dim=2 fp8_recipe_name=all_axiswise")])
    assert {"FP8D-TUNE-0003", "FP8D-TUNE-0005"} <= fired
    fired, _ = _fired([_job(tmp_path, line)], {**H100, "pkg.torch": "2.7.1"})
    assert "FP8D-TUNE-0004" in fired


def test_quoted_false_is_true_to_the_recipe(tmp_path: Path) -> None:
    cfg = tmp_path / "train.yaml"
    cfg.write_text((FIX / "llama3_1_8B_full.yaml").read_text() +
                   "enable_fp8_training: 'false'\n")
    got, _, _ = _read(cfg)
    assert got["fp8"][0] is True       # `if self._enable_fp8_training:` on a non-empty str


def test_tune_cp_writes_the_packages_files_at_run_time(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("tune cp llama3_1/8B_full my_cfg\n"
                      "tune cp full_finetune_distributed my_recipe.py\n"
                      "tune run --nproc_per_node 8 my_recipe.py --config my_cfg.yaml "
                      "enable_fp8_training=True\n")
    (tmp_path / "my_cfg.yaml").write_text("compile: True\ncheckpointer: {_component_: x}\n")
    got, facts, _ = _read(script)
    base = facts["config.torchtune.base_config"]
    assert isinstance(base, Unknown) and "tune cp llama3_1/8B_full" in base.reason
    assert isinstance(got["compile"][0], Unknown)    # the copy in the folder is overwritten
    assert facts["config.torchtune.recipe"] == "full_finetune_distributed"
    assert facts["config.torchtune.recipe_builtin"] is True and got["fp8"][0] is True
    fired, _ = _fired([script], {**H100, "pkg.torchtune": "0.6.1"})
    assert "FP8D-TUNE-0002" in fired
    script.write_text("tune cp lora_finetune_distributed mine.py\n"
                      "tune run mine.py --config my_cfg.yaml enable_fp8_training=True\n")
    assert "FP8D-TUNE-0001" in _fired([script])[0]


def test_gpu_without_fp8_and_nodes(tmp_path: Path) -> None:
    script = _job(tmp_path, RUN.replace("--nproc_per_node 8", "--nnodes 2 --nproc_per_node=8"))
    got, _, _ = _read(script)
    assert got["num_gpus"][0] == 16
    fired, _ = _fired([script], {**H100, "gpu": "A100"})
    assert "FP8D-HW-0001" in fired
    assert "FP8D-HW-0001" not in _fired([script])[0]
