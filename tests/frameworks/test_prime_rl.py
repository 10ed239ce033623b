"""prime-rl (PrimeIntellect-ai/prime-rl v0.8.1.dev67): ``uv run rl @ x.toml`` and its sub-commands,
the TOMLs they compose, and what they say: trainer FP8 (``[trainer.model.quantization]``), the
vLLM rollout's FP8 (``[inference.vllm] quantization``, an FP8 checkpoint, FP8 weight transfer,
``kv_cache_dtype``), the default loss's importance-ratio correction. The three holdout14 jobs'
configs (verbatim at 559b4477) are the firing and quiet cases; hostile launch lines and TOMLs
(huge, malformed, repeated ``@``, out of the job, a variable) end in problems or Unknown."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import BY_KIND
from preflight.frameworks.prime_rl_launch import HINT, MAX_FILES, entry_of
from preflight.intent import derive
from preflight.jobs.read import read_paths

JOBS = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs"
AIR = JOBS / "holdout14-prime-rl-glm45-air-swe-vllm-online-fp8-rollout-bf16-train-dppo" / "files"
GLM5 = JOBS / "holdout14-prime-rl-glm5-swe-pd-disagg-fp8-checkpoint-rollout-bf16-train" / "files"
REV = JOBS / "holdout14-prime-rl-reverse-text-rl-bf16-control" / "files"
REV_TOML = "configs/basic/reverse-text/rl.toml"


def _read(*paths: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(p) for p in paths], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _job(tmp_path: Path, line: str, files: Path = REV, extra: dict[str, str] | None = None,
         ) -> Path:
    job = tmp_path / "job"
    shutil.copytree(files, job, dirs_exist_ok=True)
    (job / ".git").mkdir(exist_ok=True)
    for name, text in (extra or {}).items():
        (job / name).parent.mkdir(parents=True, exist_ok=True)
        (job / name).write_text(text)
    (job / "run.sh").write_text("#!/bin/bash\n" + line + "\n")
    return job / "run.sh"


def test_online_fp8_rollout_bf16_trainer_dppo() -> None:
    intent, read = _read(AIR / "run.sh")
    assert intent["stack"][0] == ["prime_rl"]
    assert intent["fp8"][0] is False and intent["precision"][0] == "bf16"
    assert intent["rollout.engine"][0] == "vllm"
    assert intent["rollout.fp8"][0] is True
    assert intent["rollout.fp8"][1].endswith("glm-4.5-air/swe.toml:153")   # quantization = "fp8"
    assert intent["rollout.is_correction"][0] is True
    assert intent["rollout.kv_cache_fp8"][0] is False
    assert intent["cp"][0] == 4 and intent["seq_len"][0] == 131072
    assert read.facts["config.prime_rl.entry"] == "rl"


def test_fp8_checkpoint_rollout_with_fp8_weight_transfer() -> None:
    intent, _ = _read(GLM5 / "run.sh")
    assert intent["fp8"][0] is False
    assert intent["rollout.fp8"][0] is True
    assert "glm-5.2/swe.toml:28" in intent["rollout.fp8"][1]      # model = "zai-org/GLM-5-FP8"
    assert "glm-5.2/swe.toml:14" in intent["rollout.fp8"][1]      # quantize_in_weight_transfer
    assert intent["ep"][0] == 8 and intent["rollout.is_correction"][0] is True


def test_bf16_control_is_quiet() -> None:
    intent, _ = _read(REV / "run.sh")
    assert intent["fp8"][0] is False and intent["rollout.fp8"][0] is False
    assert intent["rollout.kv_cache_fp8"][0] is False
    assert intent["compile"][0] is True                  # CompileConfig() by default


@pytest.mark.parametrize("path", [AIR / "examples/advanced/glm-4.5-air/swe.toml",
                                  GLM5 / "examples/advanced/glm-5.2/swe.toml"])
def test_toml_alone_is_claimed_and_read(path: Path) -> None:
    intent, read = _read(path)
    assert [k for _, k in read.files] == ["prime_rl"]
    assert intent["rollout.fp8"][0] is True and intent["fp8"][0] is False


@pytest.mark.parametrize("table, fp8, recipe, backend", [
    ("[trainer.model.quantization]\n", True, "blockwise", Unknown),
    ('[trainer.model.quantization]\ntype = "mxfp8"\n', True, "mxfp8", "torchao"),
    ('[trainer.model]\nquantization = "None"\n', False, None, None),
])
def test_trainer_quantization(tmp_path: Path, table: str, fp8: bool, recipe: Any,
                              backend: Any) -> None:
    text = (REV / REV_TOML).read_text() + "\n" + table
    intent, _ = _read(_job(tmp_path, f"uv run rl @ {REV_TOML}", extra={REV_TOML: text}))
    assert intent["fp8"][0] is fp8
    if recipe is not None:
        assert intent["recipe"][0] == recipe
        got = intent["backend"][0]
        assert isinstance(got, Unknown) if backend is Unknown else got == backend


def test_unknown_quantization_type_is_unknown(tmp_path: Path) -> None:
    line = f"uv run rl @ {REV_TOML} --trainer.model.quantization.type nvfp4"
    intent, _ = _read(_job(tmp_path, line))
    assert isinstance(intent["fp8"][0], Unknown)


def test_cli_overrides_win_and_are_kebab_case(tmp_path: Path) -> None:
    line = (f"uv run rl @ {REV_TOML} --trainer.model.quantization.type mxfp8 "
            "--inference.vllm.kv-cache-dtype fp8_e4m3 --no-trainer.model.compile "
            "--inference.vllm.quantization fp8")
    intent, _ = _read(_job(tmp_path, line))
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert intent["rollout.kv_cache_fp8"][0] is True
    assert intent["compile"][0] is False
    assert intent["rollout.fp8"][0] is True and intent["rollout.fp8"][1].endswith("run.sh:2")


def test_files_compose_in_order_and_per_section(tmp_path: Path) -> None:
    extra = {"a.toml": '[inference.vllm]\nquantization = "fp8"\n',
             "b.toml": '[inference.vllm]\nquantization = "None"\n',
             "t.toml": '[model.quantization]\ntype = "mxfp8"\n'}
    line = f"uv run rl @ {REV_TOML} @ a.toml @ b.toml --trainer @ t.toml"
    intent, read = _read(_job(tmp_path, line, extra=extra))
    assert intent["rollout.fp8"][0] is False                 # b.toml came last
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert intent["fp8"][1].endswith("t.toml:2")


@pytest.mark.parametrize("line, entry", [
    ("uv run trainer @ t.toml", "trainer"),
    ("torchrun --nproc-per-node 8 src/prime_rl/trainer/rl/train.py @ t.toml", "trainer"),
    ("python -m prime_rl.trainer.rl.train @ t.toml", "trainer"),
])
def test_trainer_entry_nests_its_model(tmp_path: Path, line: str, entry: str) -> None:
    extra = {"t.toml": '[model.quantization]\n'}
    intent, read = _read(_job(tmp_path, line, extra=extra))
    assert read.facts["config.prime_rl.entry"] == entry
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"
    # the trainer starts no rollout: its vLLM server is another launch, not named here; over the
    # trainer's BF16 model (ModelConfig's Qwen/Qwen3-0.6B) its FP8 is that launch's to say, so
    # none is stated (rollout_apart.put), and the engine's provenance says why
    assert "rollout.fp8" not in intent and intent["rollout.engine"][0] == "vllm"
    assert "launched apart" in intent["rollout.engine"][1]


def test_inference_entry_reads_its_vllm(tmp_path: Path) -> None:
    extra = {"i.toml": '[vllm]\nmodel = "Qwen/Qwen3-8B"\nquantization = "fp8"\n'}
    intent, _ = _read(_job(tmp_path, "uv run inference @ i.toml", extra=extra))
    assert intent["rollout.fp8"][0] is True and intent["fp8"][0] is False


def test_no_inference_table_reads_the_server_started_elsewhere_at_vllm_defaults(
        tmp_path: Path) -> None:
    text = (REV / REV_TOML).read_text().replace("[inference]\n", "")
    intent, _ = _read(_job(tmp_path, f"uv run rl @ {REV_TOML}", extra={REV_TOML: text}))
    assert "rollout.fp8" not in intent and "launched apart" in intent["rollout.engine"][1]
    assert "rollout.kv_cache_fp8" not in intent
    assert intent["rollout.is_correction"][0] is True


def test_no_inference_table_over_an_fp8_model_is_an_fp8_rollout(tmp_path: Path) -> None:
    text = (REV / REV_TOML).read_text().replace("[inference]\n", "")
    line = f"uv run rl @ {REV_TOML} --model.name Qwen/Qwen3-8B-FP8"
    intent, _ = _read(_job(tmp_path, line, extra={REV_TOML: text}))
    assert intent["rollout.fp8"][0] is True


def test_custom_loss_is_unknown_correction(tmp_path: Path) -> None:
    line = f"uv run rl @ {REV_TOML} --trainer.loss.type custom --trainer.loss.import-path m.f"
    intent, _ = _read(_job(tmp_path, line))
    assert isinstance(intent["rollout.is_correction"][0], Unknown)


def test_fp8_transfer_into_a_bf16_model_is_unknown(tmp_path: Path) -> None:
    line = f"uv run rl @ {REV_TOML} --weight-broadcast.quantize-in-weight-transfer"
    intent, _ = _read(_job(tmp_path, line))
    assert isinstance(intent["rollout.fp8"][0], Unknown)


def test_local_checkpoint_outside_the_job_is_unknown(tmp_path: Path) -> None:
    line = f"uv run rl @ {REV_TOML} --model.name /models/my-policy"
    intent, _ = _read(_job(tmp_path, line))
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert intent["fp8"][0] is False


# --- hostile ---------------------------------------------------------------------------------

def test_toml_outside_the_job_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside.toml").write_text('[inference.vllm]\nquantization = "fp8"\n')
    intent, read = _read(_job(tmp_path, "uv run rl @ ../outside.toml"))
    assert isinstance(intent["fp8"][0], Unknown)
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert not any(p.endswith("outside.toml") for p, _ in read.files)


def test_malformed_toml_is_a_problem_with_its_line(tmp_path: Path) -> None:
    extra = {"bad.toml": "[trainer]\nx = 1\n[inference\n"}
    intent, read = _read(_job(tmp_path, "uv run rl @ bad.toml", extra=extra))
    assert isinstance(intent["fp8"][0], Unknown)
    assert any(p.path.endswith("bad.toml") and p.line == 3 for p in read.problems)


def test_huge_toml_is_refused(tmp_path: Path) -> None:
    extra = {"big.toml": "[inference.vllm]\n" + "".join(f"k{i} = {i}\n" for i in range(120_000))}
    intent, read = _read(_job(tmp_path, "uv run rl @ big.toml", extra=extra))
    assert intent["fp8"][0] is not False and intent["rollout.fp8"][0] is not False
    assert read.problems


def test_repeated_at_files_are_bounded(tmp_path: Path) -> None:
    line = "uv run rl " + " ".join([f"@ {REV_TOML}"] * (MAX_FILES + 40))
    intent, read = _read(_job(tmp_path, line))
    assert any(p.path.endswith("run.sh") and p.line == 2 for p in read.problems)
    assert intent["rollout.fp8"][0] is False


def test_at_without_a_file_is_refused_at_its_line(tmp_path: Path) -> None:
    _, read = _read(_job(tmp_path, "uv run rl @"))
    assert any(p.path.endswith("run.sh") and p.line == 2 and p.level == "error"
               for p in read.problems)


@pytest.mark.parametrize("line", ["uv run rl @ $CFG", "uv run rl @ ''",
                                  "uv run rl stray @ x.toml"])
def test_files_not_known_leave_fp8_unknown(tmp_path: Path, line: str) -> None:
    intent, _ = _read(_job(tmp_path, line))
    assert isinstance(intent["fp8"][0], Unknown)
    assert isinstance(intent["rollout.fp8"][0], Unknown)


@pytest.mark.parametrize("line", [f"uv run rl @ {REV_TOML} $EXTRA_ARGS",
                                  f'uv run rl @ {REV_TOML} "$@"'])
def test_words_not_known_leave_fp8_unknown(tmp_path: Path, line: str) -> None:
    intent, _ = _read(_job(tmp_path, line))
    assert isinstance(intent["fp8"][0], Unknown)
    assert isinstance(intent["rollout.fp8"][0], Unknown)


def test_cyclic_symlinked_toml_is_not_followed(tmp_path: Path) -> None:
    path = _job(tmp_path, "uv run rl @ loop.toml")
    (path.parent / "loop.toml").symlink_to(path.parent / "loop.toml")
    intent, read = _read(path)
    assert isinstance(intent["fp8"][0], Unknown)


# --- quiet -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["python train.py --config rl.toml",
                                  "accelerate launch trainer.py", "cosmos-rl --config x.toml",
                                  "torchrun --nproc-per-node 8 rl_train.py @ x"])
def test_other_commands_are_not_prime_rl(text: str) -> None:
    assert not HINT.search(text)


def test_rl_as_an_argument_is_no_launch(tmp_path: Path) -> None:
    intent, read = _read(_job(tmp_path, f"echo rl @ {REV_TOML}\npython train.py"))
    assert "config.prime_rl.entry" not in read.facts


@pytest.mark.parametrize("word, entry", [
    ("rl", "rl"), (".venv/bin/trainer", "trainer"), ("prime_rl.entrypoints.rl", "rl"),
    ("src/prime_rl/trainer/sft/train.py", "sft"), ("prime_rl.orchestrator.orchestrator",
                                                    "orchestrator"), ("train.py", None)])
def test_entry_points(word: str, entry: str | None) -> None:
    assert entry_of(word) == entry


def test_other_tomls_are_not_claimed() -> None:
    score = BY_KIND["prime_rl"].score
    assert score({"train": {"fp8": {"enable_fp8": True}}, "rollout": {}, "policy": {}}) == 0
    assert score({"job": {"dump_folder": "x"}, "training": {"steps": 1}}) == 0
    assert score({"trainer": {"x": 1}}) == 0


# redteam11's open items (fwrl5): pydantic-config's semantics at PrimeIntellect-ai/pydantic-config
# 010bec17 and prime-rl's layouts at v0.8.0 / 559b4477


def test_a_files_quantization_true_is_refused_not_on(tmp_path: Path) -> None:
    # a bare `--x` becomes {} on the command line only; a TOML's `true` reaches pydantic,
    # which has no validator making it a table for ModelConfig.quantization
    script = _job(tmp_path, f"uv run rl @ {REV_TOML} @ q.toml",
                  extra={"q.toml": "[trainer.model]\nquantization = true\n"})
    intent, _ = _read(script)
    assert isinstance(intent["fp8"][0], Unknown)
    assert intent["fp8"][1].rpartition(":")[0].endswith("q.toml")


def test_an_empty_quantization_table_is_fp8(tmp_path: Path) -> None:
    script = _job(tmp_path, f"uv run rl @ {REV_TOML} @ q.toml",
                  extra={"q.toml": "[trainer.model.quantization]\n"})
    intent, _ = _read(script)
    assert intent["fp8"][0] is True and intent["recipe"][0] == "blockwise"


def test_an_unknown_algorithm_is_no_known_correction(tmp_path: Path) -> None:
    script = _job(tmp_path, f"uv run rl @ {REV_TOML} --orchestrator.algo.type $ALGO")
    intent, _ = _read(script)
    assert isinstance(intent["rollout.is_correction"][0], Unknown)


def test_v080_inference_model_name_and_quantization(tmp_path: Path) -> None:
    script = _job(tmp_path, f"uv run rl @ {REV_TOML} @ old.toml", extra={
        "old.toml": "[inference]\nquantization = \"fp8\"\n\n[inference.model]\n"
                    "name = \"Qwen/Qwen3-4B-FP8\"\n"})
    intent, _ = _read(script)
    assert intent["rollout.fp8"][0] is True
    assert intent["rollout.fp8"][1].rpartition(":")[0].endswith("old.toml")
