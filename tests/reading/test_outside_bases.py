"""A base file that a layered config names outside the job (held-out benchmark, 2026-11-27).

NeMo-RL recipes name their base two folders up (``defaults: ../../grpo_math_1B.yaml``, from
``examples/configs/recipes/llm/``); run outside a git work tree and from another folder, the job
root is the recipe's own folder, so the base lies outside the job. It must be the warning
FP8D-CFG-OUTSIDE at the ``defaults:`` line (issue 21: never read), not the error "cannot be
read"; the recipe itself is read on, and what only the base would decide stays Unknown with that
reason. The same for every reader that follows a base: a ``--config`` / ``--config-name`` base
named by a launch line, a chain below a base found inside, verl's Hydra defaults, a symlink out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

SECRET = "hf_SECRETabcdefghijklmnopqrstuvwxyz0123"
# a base as NeMo-RL's grpo_math_1B.yaml is (reduced): FP8 off, TP 1, packing on, vLLM in bf16
BASE = f"""policy:
  precision: bfloat16
  sequence_packing:
    enabled: true
  megatron_cfg:
    enabled: false
    tensor_model_parallel_size: 1
    fp8_cfg:
      enabled: false
      fp8: e4m3
      fp8_recipe: blockwise
      fp8_param: false
  generation:
    backend: vllm
    vllm_cfg:
      precision: ${{policy.precision}}
note: {SECRET}
"""
# a recipe that turns FP8 on itself (as grpo-moonlight-...-fp8-e2e.yaml does)
FP8_RECIPE = """defaults: ../../base.yaml
policy:
  megatron_cfg:
    enabled: true
    fp8_cfg:
      enabled: true
  generation:
    vllm_cfg:
      precision: fp8
"""
# a recipe whose training precision only the base decides (as ...-fp8-kvcache-megatron.yaml)
KV_RECIPE = """defaults: ../../base.yaml
policy:
  megatron_cfg:
    enabled: true
  generation:
    vllm_cfg:
      precision: fp8
      kv_cache_dtype: fp8
"""


def _tree(root: Path, recipe: str) -> Path:
    (root / "configs" / "recipes" / "llm").mkdir(parents=True)
    (root / "configs" / "base.yaml").write_text(BASE)
    path = root / "configs" / "recipes" / "llm" / "recipe.yaml"
    path.write_text(recipe)
    return path


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty folder beside the job, outside any git work tree."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return tmp_path / "repo"


def _intent(read: Any) -> dict[str, Any]:
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}


def _warned_once(read: Any, path: Path, line: int) -> None:
    assert not [p for p in read.problems if p.level == "error"], read.problems
    found = [p for p in read.problems if p.code == "outside_job"]
    assert [(p.path, p.line, p.level) for p in found] == [(str(path), line, "warning")], found
    assert SECRET not in json.dumps(read.facts, default=str) + repr(read.problems)


def _outside_reason(value: Any) -> None:
    assert isinstance(value, Unknown) and "outside the job" in value.reason, value


def test_a_defaults_base_above_the_root_is_a_warning_and_the_recipe_is_read_on(
        elsewhere: Path) -> None:
    recipe = _tree(elsewhere, FP8_RECIPE)
    read = read_paths([str(recipe)])
    _warned_once(read, recipe, 1)
    assert [p for p, _ in read.files] == [str(recipe)]
    intent = _intent(read)
    # what the recipe states is read
    assert intent["fp8"] is True and intent["backend"] == "te"
    assert intent["rollout.fp8"] is True and intent["stack"] == ["nemo_rl", "megatron"]
    # what only the base decides is Unknown with the reason, never NeMo-RL's KeyError or "off"
    for name in ("format", "recipe", "fp8_params", "tp", "packing"):
        _outside_reason(intent[name])


def test_training_precision_only_the_base_decides_is_unknown_not_no(elsewhere: Path) -> None:
    recipe = _tree(elsewhere, KV_RECIPE)
    read = read_paths([str(recipe)])
    _warned_once(read, recipe, 1)
    intent = _intent(read)
    _outside_reason(intent["fp8"])
    assert intent["rollout.fp8"] is True and intent["rollout.kv_cache_fp8"] is True


def test_naming_the_base_too_or_a_git_work_tree_reads_it(elsewhere: Path) -> None:
    recipe = _tree(elsewhere, KV_RECIPE)
    base = elsewhere / "configs" / "base.yaml"
    both = read_paths([str(recipe), str(base)])          # what the warning's fix says
    assert not [p for p in both.problems if p.code == "outside_job"]
    assert _intent(both)["fp8"] is False
    (elsewhere / ".git").mkdir()                         # a checkout: its top is a job root
    read = read_paths([str(recipe)])
    assert read.problems == [] and _intent(read)["fp8"] is False


def test_run_from_the_repository_top_without_git_reads_the_base(
        elsewhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = _tree(elsewhere, FP8_RECIPE)
    monkeypatch.chdir(elsewhere)                         # 3 folders above the recipe
    read = read_paths(["configs/recipes/llm/recipe.yaml"])
    assert read.problems == [] and _intent(read)["recipe"] == "blockwise"
    assert recipe.exists()


def test_a_symlinked_parent_pointing_out_of_the_job_is_a_warning(elsewhere: Path) -> None:
    job = elsewhere / "job"
    job.mkdir(parents=True)
    (elsewhere / "outside.yaml").write_text(BASE)
    (job / "base.yaml").symlink_to(elsewhere / "outside.yaml")
    recipe = job / "recipe.yaml"
    recipe.write_text(FP8_RECIPE.replace("../../base.yaml", "base.yaml"))
    read = read_paths([str(recipe)])
    _warned_once(read, recipe, 1)
    _outside_reason(_intent(read)["recipe"])


def test_a_launch_lines_config_outside_the_job(elsewhere: Path) -> None:
    recipe = _tree(elsewhere, FP8_RECIPE)
    run = elsewhere / "configs" / "recipes" / "llm" / "run.sh"
    run.write_text("#!/bin/bash\nuv run examples/run_grpo.py --config ../../base.yaml "
                   "policy.megatron_cfg.enabled=true\n")
    read = read_paths([str(run)])
    _warned_once(read, run, 2)
    base = read.facts["config.nemo_rl.base_config"]
    _outside_reason(base)
    assert recipe.exists()


def test_a_chain_below_a_base_found_inside_goes_out(elsewhere: Path) -> None:
    # the launch line's --config is inside; the defaults: it names is not
    recipe = _tree(elsewhere, FP8_RECIPE)
    run = recipe.parent / "run.sh"
    run.write_text("#!/bin/bash\nuv run examples/run_grpo.py --config recipe.yaml\n")
    read = read_paths([str(run)])
    outside = [p for p in read.problems if p.code == "outside_job"]
    assert [(p.path, p.line) for p in outside] == [(str(recipe), 1)]
    assert not [p for p in read.problems if p.level == "error"]
    _outside_reason(read.facts["config.nemo_rl.base_config"])
    assert SECRET not in json.dumps(read.facts, default=str)


def test_verl_hydra_defaults_out_of_the_config_folder(elsewhere: Path) -> None:
    cfg = elsewhere / "cfg"
    cfg.mkdir(parents=True)
    (elsewhere / "trainer_base.yaml").write_text(f"actor_rollout_ref:\n  note: {SECRET}\n")
    job = cfg / "ppo_fp8.yaml"
    job.write_text("defaults:\n  - ../trainer_base\n  - _self_\nactor_rollout_ref:\n  actor:\n"
                   "    strategy: megatron\n    megatron:\n      override_transformer_config:\n"
                   "        fp8: e4m3\n        fp8_recipe: blockwise\n")
    read = read_paths([str(job)], kind="verl")
    _warned_once(read, job, 1)
    _outside_reason(read.facts["config.verl.base_config"])


@pytest.mark.parametrize("kind,line", [
    ("megatron_bridge", "torchrun --nproc_per_node 8 examples/recipes/llama/run_recipe.py "
                        "--recipe llama3_8b_pretrain_config --config-file ../../cfg/base.yaml "
                        "model.tensor_model_parallel_size=2"),
    ("automodel", "automodel ../../cfg/base.yaml --nproc-per-node 8 "
                  "--step_scheduler.max_steps 20"),
])
def test_other_launch_lines_naming_a_base_outside_the_job(elsewhere: Path, kind: str,
                                                          line: str) -> None:
    (elsewhere / "cfg").mkdir(parents=True)
    (elsewhere / "cfg" / "base.yaml").write_text(
        f"model:\n  fp8: hybrid\nfp8:\n  enabled: true\nnote: {SECRET}\n")
    (elsewhere / "a" / "b").mkdir(parents=True)
    run = elsewhere / "a" / "b" / "run.sh"
    run.write_text(f"#!/bin/bash\n{line}\n")
    read = read_paths([str(run)])
    _warned_once(read, run, 2)
    _outside_reason(read.facts[f"config.{kind}.base_config"])
