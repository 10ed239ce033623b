"""The job's own NeMo-RL checkout as evidence of fixes its version cannot tell
(frameworks/nemo_rl_source.py): a main checkout reports 0.6.0, so FP8D-NRL-0005 / 0006 go by
``config.nemo_rl.source.*`` where the job holds ``nemo_rl/`` (holdout8's FP8 recipe, with an FP8
KV cache, TP2 generation and colocation added). Hostile source files stay Unknown, never raise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import preflight
from preflight.facts import Unknown
from preflight.frameworks.nemo_rl_source import is_mx, kv_scales, pads_weight, ray_v2
from preflight.jobs.read import read_paths

JOB = (Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs" /
       "holdout8-nemo-rl-llama31-8b-fp8-async-1off" / "files")
RECIPE = ("examples/configs/recipes/llm/performance/"
          "grpo-llama3.1-8b-instruct-2n8g-fp8-async-1off.yaml")
MAIN = {"gpu": "H100", "pkg.nemo-rl": "0.6.0", "pkg.vllm": "0.25.1"}
GRPO = "nemo_rl/algorithms/grpo.py"
FP8 = "nemo_rl/models/generation/vllm/quantization/fp8.py"
CALL = ("def refit(policy, size, kv_scales=None):\n"
        "    return policy.stream_weights_via_ipc_zmq(\n        buffer_size_bytes=size,{kw}\n    )\n")
V1 = "from vllm.v1.executor.ray_executor import RayDistributedExecutor\n"
V2 = V1 + "from vllm.v1.executor.ray_executor_v2 import RayWorkerProc\n"


def _job(tmp_path: Path, grpo: str | None, fp8: str | None) -> Path:
    job = tmp_path / "RL"
    shutil.copytree(JOB, job)
    recipe = job / RECIPE
    recipe.write_text(recipe.read_text().replace(
        "      use_deep_gemm: true", "      use_deep_gemm: true\n      kv_cache_dtype: fp8\n"
        "      tensor_parallel_size: 2\n    colocated:\n      enabled: true"))
    for rel, text in ((GRPO, grpo), (FP8, fp8)):
        if text is not None:
            (job / rel).parent.mkdir(parents=True, exist_ok=True)
            (job / rel).write_text(text)
    return job


def _fired(path: Path) -> set[str]:
    return {f.rule_id for f in preflight.check([str(path)], smoke=False, assume=MAIN).findings}


def test_no_source_in_the_job_goes_by_the_version(tmp_path: Path) -> None:
    job = _job(tmp_path, None, None)
    assert not any(".source." in n for n in read_paths([str(job)]).facts)
    assert {"FP8D-NRL-0005", "FP8D-NRL-0006"} <= _fired(job)


def test_main_checkout_with_both_fixes_is_quiet(tmp_path: Path) -> None:
    job = _job(tmp_path, CALL.format(kw="\n        kv_scales=kv_scales,"), V2)
    read = read_paths([str(job)])
    assert read.facts["config.nemo_rl.source.colocated_refit_kv_scales"] is True
    assert read.provenance["config.nemo_rl.source.colocated_refit_kv_scales"].endswith(
        "grpo.py:2")
    assert read.facts["config.nemo_rl.source.ray_v2_fp8_patch"] is True
    assert not {"FP8D-NRL-0005", "FP8D-NRL-0006"} & _fired(job)


def test_checkout_without_the_fixes_fires(tmp_path: Path) -> None:
    job = _job(tmp_path, CALL.format(kw=""), V1)
    read = read_paths([str(job)])
    assert read.facts["config.nemo_rl.source.colocated_refit_kv_scales"] is False
    assert read.facts["config.nemo_rl.source.ray_v2_fp8_patch"] is False
    assert {"FP8D-NRL-0005", "FP8D-NRL-0006"} <= _fired(job)


def test_checkout_outside_the_named_file_is_not_read(tmp_path: Path) -> None:
    job = _job(tmp_path, CALL.format(kw="\n        kv_scales=kv_scales,"), V2)
    read = read_paths([str(job / RECIPE)])        # the boundary: the file named, not the checkout
    assert not any(".source." in n for n in read.facts)


@pytest.mark.parametrize("text", ["def f(:\n", "x = 1\n", "(" * 5000 + ")" * 5000,
                                  "\x00binary"])
def test_hostile_grpo_is_unknown(tmp_path: Path, text: str) -> None:
    path = tmp_path / "grpo.py"
    path.write_text(text)
    value, where = kv_scales(str(path))
    assert isinstance(value, Unknown) and where.path == str(path)


def test_fp8_file_naming_no_executor_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "fp8.py"
    path.write_text("x = 1\n")
    assert isinstance(ray_v2(str(path))[0], Unknown)


def test_source_symlinked_out_of_the_job_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "nemo_rl" / "algorithms").mkdir(parents=True)
    (outside / GRPO).write_text(CALL.format(kw="\n        kv_scales=kv_scales,"))
    job = _job(tmp_path, None, None)
    (job / "nemo_rl").symlink_to(outside / "nemo_rl")
    read = read_paths([str(job)])
    # the checkout is there but its grpo.py is outside the job: not read, not known
    got = read.facts.get("config.nemo_rl.source.colocated_refit_kv_scales")
    assert isinstance(got, Unknown)
    report = preflight.check([str(job)], smoke=False, assume=MAIN)
    assert "FP8D-NRL-0005" in {u.rule_id for u in report.undetermined}


# FP8D-NRL-0007: vllm_cfg.is_mx (MXFP8 rollout, PR 1887 on main) is ignored by a checkout whose
# quantization/fp8.py never reads it (v0.7.0 and older build 128x128 blocks whatever it says).
MX = V2 + "def init_fp8(vllm_cfg):\n    is_mx = bool(vllm_cfg.get(\"is_mx\"))\n"


def _mx_job(tmp_path: Path, fp8: str | None) -> Path:
    grpo = None if fp8 is None else CALL.format(kw="\n        kv_scales=kv_scales,")
    job = _job(tmp_path, grpo, fp8)
    recipe = job / RECIPE
    recipe.write_text(recipe.read_text().replace(
        "      use_deep_gemm: true", "      use_deep_gemm: true\n      is_mx: true"))
    return job


def test_is_mx_read_from_fp8_py(tmp_path: Path) -> None:
    path = tmp_path / "fp8.py"
    path.write_text(MX)
    value, where = is_mx(str(path))
    assert value is True and where.path == str(path) and where.line == 4
    path.write_text(V2)
    assert is_mx(str(path))[0] is False
    assert isinstance(is_mx(str(tmp_path / "missing.py"))[0], Unknown)


def test_checkout_without_is_mx_fires_nrl_0007(tmp_path: Path) -> None:
    job = _mx_job(tmp_path, V2)
    read = read_paths([str(job)])
    assert read.facts["config.nemo_rl.policy.generation.vllm_cfg.is_mx"] is True
    assert read.facts["config.nemo_rl.source.vllm_is_mx"] is False
    assert "FP8D-NRL-0007" in _fired(job)


def test_checkout_reading_is_mx_is_quiet(tmp_path: Path) -> None:
    job = _mx_job(tmp_path, MX)
    assert read_paths([str(job)]).facts["config.nemo_rl.source.vllm_is_mx"] is True
    assert "FP8D-NRL-0007" not in _fired(job)


def test_is_mx_without_source_goes_by_the_version(tmp_path: Path) -> None:
    job = _mx_job(tmp_path, None)
    assert "FP8D-NRL-0007" not in _fired(job)            # 0.6.0: a main checkout or the release
    report = preflight.check([str(job)], smoke=False, assume={**MAIN, "pkg.nemo-rl": "0.7.0"})
    assert "FP8D-NRL-0007" in {f.rule_id for f in report.findings}


# FP8D-NRL-0009: the pre-0.5 generation/fp8.py still rebuilding weights with vLLM 0.10's
# _maybe_pad_weight (before PR 1432) stops at load on vLLM 0.11; the version alone cannot tell.
OLD_FP8 = "nemo_rl/models/generation/fp8.py"
PAD = ("def process_weights_after_loading(self, layer):\n    weight = layer.weight.data\n"
       "    weight = self._maybe_pad_weight(weight)\n")
FIXED = ("def process_weights_after_loading(self, layer):\n    from vllm.model_executor.layers."
         "quantization.utils.fp8_utils import process_fp8_weight_block_strategy\n")
RC0 = {"gpu": "H100", "pkg.nemo-rl": "0.5.0rc0", "pkg.vllm": "0.11.0"}


def _old_checkout(tmp_path: Path, fp8: str | None) -> Path:
    job = _job(tmp_path, CALL.format(kw=""), None)
    if fp8 is not None:
        (job / OLD_FP8).parent.mkdir(parents=True, exist_ok=True)
        (job / OLD_FP8).write_text(fp8)
    return job


def _rc0_fired(job: Path) -> set[str]:
    return {f.rule_id for f in preflight.check([str(job)], smoke=False, assume=RC0).findings}


def test_pads_weight_read_from_old_fp8_py(tmp_path: Path) -> None:
    path = tmp_path / "fp8.py"
    path.write_text(PAD)
    value, where = pads_weight(str(path))
    assert value is True and where.path == str(path) and where.line == 3
    path.write_text(FIXED)
    assert pads_weight(str(path))[0] is False
    assert isinstance(pads_weight(str(tmp_path / "missing.py"))[0], Unknown)
    path.write_bytes(b"\xff\xfe\x00" * 50)
    got = pads_weight(str(path))[0]                     # not text: never raises, never True
    assert got is False or isinstance(got, Unknown)


def test_checkout_before_pr_1432_fires_nrl_0009(tmp_path: Path) -> None:
    job = _old_checkout(tmp_path, PAD)
    read = read_paths([str(job)])
    assert read.facts["config.nemo_rl.source.fp8_vllm010_weight_patch"] is True
    assert read.provenance["config.nemo_rl.source.fp8_vllm010_weight_patch"].endswith("fp8.py:3")
    assert "FP8D-NRL-0009" in _rc0_fired(job)


def test_checkout_after_pr_1432_is_quiet(tmp_path: Path) -> None:
    job = _old_checkout(tmp_path, FIXED)
    assert read_paths([str(job)]).facts["config.nemo_rl.source.fp8_vllm010_weight_patch"] is False
    assert "FP8D-NRL-0009" not in _rc0_fired(job)


def test_without_the_file_the_version_decides_nothing(tmp_path: Path) -> None:
    job = _old_checkout(tmp_path, None)
    assert "config.nemo_rl.source.fp8_vllm010_weight_patch" not in read_paths([str(job)]).facts
    assert "FP8D-NRL-0009" not in _rc0_fired(job)       # 0.5.0rc0: before or after PR 1432
    report = preflight.check([str(job)], smoke=False, assume={**RC0, "pkg.nemo-rl": "0.4.0"})
    assert "FP8D-NRL-0009" not in {f.rule_id for f in report.findings}   # 0.4.x pins vLLM 0.10


def test_old_checkout_with_the_vllm_it_pins_is_quiet(tmp_path: Path) -> None:
    job = _old_checkout(tmp_path, PAD)
    report = preflight.check([str(job)], smoke=False, assume={**RC0, "pkg.vllm": "0.10.0"})
    assert "FP8D-NRL-0009" not in {f.rule_id for f in report.findings}
