"""redteam11 (session 38): attacks on what session 37 added (prime-rl's launch and TOMLs,
ColossalAI, miles' refusals, NeMo-RL's source evidence, the shell loop/case lexer, base/digits
and its callers). Each case failed before its fix:

- a here-document before the launch line: its closing line was blanked with its body, so the
  lexer the launch readers share took ``<<EOF`` as never closed and the rest of the script as
  its body (prime-rl, torchtune, ArcticTraining, Cosmos-RL, XTuner: nothing read; jobs/scripts.py,
  jobs/walk.py);
- an ``@`` / ``--config`` file whose top level is a list or a scalar was read as empty: every
  default, FP8 "no" (reading/layered.py);
- prime-rl: an Unknown ``quantization.type`` (``$QT``, or given by one of two launch lines) was
  View.get's default "fp8"; ``quantization = "fp8"`` (no table) was FP8 on;
- ColossalAI: ``use_fp8=None`` was Unknown, and an Unknown's own reason was lost;
- miles: ``if self.train_mxfp8: raise ...`` refused the launch but carried no field: FP8 "no";
- NeMo-RL's source: a comment or string naming ``RayWorkerProc`` was the fix;
- 5,000 leading zeros (``COLUMNS``, ``--cp 000..08``, a TOML string): int() counts them against
  its 4,300-digit limit, an internal error (base/digits.py, frameworks/_view.py);
- a Python script the launch line runs that does not parse was never named (only "cannot tell
  which framework" of the launch script);
- an ``if`` / ``case`` / loop never closed: bash refuses the script; it was read as closed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "benchmarks" / "realjobs"
REV = JOBS / "holdout14-prime-rl-reverse-text-rl-bf16-control" / "files"
REV_TOML = "configs/basic/reverse-text/rl.toml"
FP8 = 'EXTRA="--fp8-format hybrid"'
ZEROS = "0" * 5000


def _intent(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return {k[7:]: v for k, v in values.items()}, read


def _prime(tmp_path: Path, script: str, extra: dict[str, str] | None = None) -> Path:
    job = tmp_path / "job"
    shutil.copytree(REV, job)
    (job / ".git").mkdir()
    for name, text in (extra or {}).items():
        (job / name).write_text(text)
    (job / "run.sh").write_text("#!/bin/bash\n" + script)
    return job / "run.sh"


def _megatron(tmp_path: Path, before: str) -> Any:
    (tmp_path / ".git").mkdir(exist_ok=True)
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n" + before +
                      "\ntorchrun pretrain_gpt.py --bf16 --num-layers 2 $EXTRA\n")
    return _intent(script)


# --- here-documents before the launch line -----------------------------------------------------

@pytest.mark.parametrize("doc", ["cat > notes.txt <<EOF\nuv run rl @ fp8.toml\nEOF\n",
                                 "cat <<'END' | tee x\nhello\nEND\n",
                                 "python - <<EOF\nprint(1)\nEOF\ncat <<-EOF\n\tx\n\tEOF\n"])
def test_a_here_document_before_the_launch_leaves_it_read(tmp_path: Path, doc: str) -> None:
    fp8 = (REV / REV_TOML).read_text() + "\n[trainer.model.quantization]\n"
    intent, read = _intent(_prime(tmp_path, doc + f"uv run rl @ {REV_TOML}\n",
                                  {"fp8.toml": fp8}))
    assert read.facts["config.prime_rl.entry"] == "rl"
    assert intent["fp8"] is False          # the body's FP8 line is text, not the job


def test_a_here_document_before_a_torchtune_launch(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text("cat > /tmp/notes <<EOF\nx\nEOF\n"
                                     "tune run full_finetune_distributed --config "
                                     "llama3/8B_full\n")
    _, read = _intent(tmp_path / "run.sh")
    assert [k for _, k in read.files] == ["torchtune"]


# --- a config whose top level is no mapping ----------------------------------------------------

@pytest.mark.parametrize("name, text", [("c.json", "[1, 2, 3]"), ("c.yaml", "hello\n"),
                                        ("c.yaml", "- trainer\n- inference\n")])
def test_a_config_that_is_no_mapping_is_unknown_with_its_line(tmp_path: Path, name: str,
                                                              text: str) -> None:
    intent, read = _intent(_prime(tmp_path, f"uv run rl @ {name}\n", {name: text}))
    assert isinstance(intent["fp8"], Unknown) and isinstance(intent["rollout.fp8"], Unknown)
    assert any(p.path.endswith(name) and p.line == 1 for p in read.problems)


def test_an_empty_config_is_still_every_default(tmp_path: Path) -> None:
    intent, _ = _intent(_prime(tmp_path, "uv run rl @ c.yaml\n", {"c.yaml": "\n"}))
    assert intent["fp8"] is False


# --- prime-rl: Unknown is no default -----------------------------------------------------------

@pytest.mark.parametrize("script", [
    f"uv run rl @ {REV_TOML} --trainer.model.quantization.type $QT\n",
])
def test_prime_rl_unknown_quantization_type_is_unknown(tmp_path: Path, script: str) -> None:
    intent, _ = _intent(_prime(tmp_path, script))
    assert isinstance(intent["fp8"], Unknown)
    assert intent.get("recipe") != "blockwise"


def test_prime_rl_launch_in_a_function_never_called_is_no_launch(tmp_path: Path) -> None:
    # (was a case above, Unknown: the two launch lines differed. Session 43's multi-launch
    # policy -- a launch asking FP8 among BF16 ones makes the job FP8 -- read it a confident
    # FP8 yes; bash never runs the function, so the one launch is BF16: shell18,
    # reading/shellexpand.py _reached)
    intent, _ = _intent(_prime(tmp_path, (
        f"fp8() {{\n  uv run rl @ {REV_TOML} --trainer.model.quantization.type mxfp8\n}}\n"
        f"uv run rl @ {REV_TOML}\n")))
    assert intent["fp8"] is False
    assert intent.get("recipe") != "blockwise"


def test_prime_rl_quantization_that_is_no_table_is_unknown(tmp_path: Path) -> None:
    text = (REV / REV_TOML).read_text() + '\n[trainer.model]\nquantization = "fp8"\n'
    intent, _ = _intent(_prime(tmp_path, f"uv run rl @ {REV_TOML}\n", {REV_TOML: text}))
    assert isinstance(intent["fp8"], Unknown)


def test_prime_rl_weight_transfer_from_a_variable_is_unknown(tmp_path: Path) -> None:
    intent, _ = _intent(_prime(tmp_path, f"uv run rl @ {REV_TOML} "
                                         "--weight-broadcast.quantize-in-weight-transfer $WB\n"))
    assert isinstance(intent["rollout.fp8"], Unknown) and intent["fp8"] is False


# --- ColossalAI use_fp8 -----------------------------------------------------------------------

def _colossal(tmp_path: Path, body: str) -> dict[str, Any]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(
        "import os\nimport colossalai\nfrom colossalai.booster import Booster\n"
        "from colossalai.booster.plugin import HybridParallelPlugin\n"
        "colossalai.launch_from_torch()\n" + body + "booster = Booster(plugin=plugin)\n")
    (tmp_path / "run.sh").write_text("colossalai run --nproc_per_node 8 train.py\n")
    return _intent(tmp_path / "run.sh")[0]


def test_colossalai_use_fp8_none_is_off(tmp_path: Path) -> None:
    assert _colossal(tmp_path, "plugin = HybridParallelPlugin(use_fp8=None)\n")["fp8"] is False


def test_colossalai_two_plugins_keep_their_reason(tmp_path: Path) -> None:
    got = _colossal(tmp_path, "plugin = HybridParallelPlugin(use_fp8=False)\n"
                              "def unused():\n    plugin = HybridParallelPlugin(use_fp8=True)\n")
    assert isinstance(got["fp8"], Unknown) and "line" in got["fp8"].reason


# --- miles: a raise under a test of the field -------------------------------------------------

MILES = JOBS / "holdout14-miles-py-deepseek-v32-h100-rollout-mxfp8-train-mxfp8-refused" / "files"
_ASSERT = ('assert not self.train_mxfp8, "MXFP8 training is not supported on H100/H200 '
           '(no native MXFP8)"')


@pytest.mark.parametrize("check", [
    'if self.train_mxfp8:\n                raise ValueError("no MXFP8 here")',
    'if not self.train_mxfp8:\n                pass\n            else:\n'
    '                raise ValueError("no")',
])
def test_miles_raise_under_a_field_test_names_the_ask(tmp_path: Path, check: str) -> None:
    script = tmp_path / "scripts" / "run_deepseek_v32.py"
    script.parent.mkdir()
    text = (MILES / "scripts" / "run_deepseek_v32.py").read_text()
    script.write_text(text.replace(_ASSERT, check, 1))
    (tmp_path / "run.sh").write_text("python scripts/run_deepseek_v32.py train --hardware H100 "
                                     "--train-mxfp8\n")
    intent, read = _intent(tmp_path / "run.sh")
    assert read.facts["config.slime.refused.train_mxfp8"] is True
    assert (intent["fp8"], intent["recipe"]) == (True, "mxfp8")


# --- NeMo-RL source: names the code uses ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "# TODO: patch RayWorkerProc too\nfrom vllm.v1.executor.ray_executor import "
    "RayDistributedExecutor\n",
    "from vllm.v1.executor.ray_executor import RayDistributedExecutor\n"
    "NOTE = 'RayExecutorV2 is not patched'\n",
])
def test_nemo_rl_ray_patch_is_not_read_from_a_comment(tmp_path: Path, text: str) -> None:
    from preflight.frameworks.nemo_rl_source import ray_v2

    (tmp_path / "fp8.py").write_text(text)
    assert ray_v2(str(tmp_path / "fp8.py"))[0] is False


def test_nemo_rl_ray_patch_read_from_the_code(tmp_path: Path) -> None:
    from preflight.frameworks.nemo_rl_source import ray_v2

    (tmp_path / "fp8.py").write_text("import x\n\nx.RayWorkerProc.initialize_worker = f\n")
    assert ray_v2(str(tmp_path / "fp8.py")) [0] is True
    assert ray_v2(str(tmp_path / "fp8.py"))[1].line == 3


# --- leading zeros ------------------------------------------------------------------------------

def test_ascii_int_takes_leading_zeros() -> None:
    from preflight.base.digits import ascii_int

    assert ascii_int(ZEROS + "80") == 80 and ascii_int(ZEROS) == 0
    assert ascii_int(ZEROS + "1" * 19) is None


@pytest.mark.parametrize("script, extra", [
    (f"uv run rl @ {REV_TOML} --trainer.model.cp {ZEROS}8\n", {}),
    (f"uv run rl @ {REV_TOML}\n",
     {REV_TOML: (REV / REV_TOML).read_text() + f'\n[trainer.model]\ntp = "{ZEROS}8"\n'}),
])
def test_a_number_with_thousands_of_leading_zeros_is_read(tmp_path: Path, script: str,
                                                          extra: dict[str, str]) -> None:
    intent, _ = _intent(_prime(tmp_path, script, extra))
    assert 8 in (intent.get("cp"), intent.get("tp"))


def test_megatron_size_with_leading_zeros(tmp_path: Path) -> None:
    intent, _ = _megatron(tmp_path, f"EXTRA='--tensor-model-parallel-size {ZEROS}2'")
    assert intent["tp"] == 2


def test_columns_with_leading_zeros_is_no_internal_error(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": ZEROS + "80", "LINES": ZEROS + "40"}
    proc = subprocess.run([sys.executable, "-m", "preflight", "rules", "list"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-400:]


# --- a launched Python script that does not parse ---------------------------------------------

def test_a_launched_script_that_does_not_parse_is_named(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text("from transformers import TrainingArguments\n"
                                       "args = TrainingArguments(output_dir='x', bf16=True)\n"
                                       "x = (((\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\nset -e\npython train.py --lr 1\n")
    read = read_paths([str(tmp_path / "run.sh")])
    (problem,) = [p for p in read.problems if p.level == "error"]
    assert problem.path.endswith("run.sh") and problem.line == 3
    assert "train.py:3" in problem.message


# --- compound commands never closed -------------------------------------------------------------

@pytest.mark.parametrize("before, line", [
    ("if true; then\n" + FP8, 2), ("while true; do\n" + FP8, 2),
    ("case x in x) " + FP8 + ";;", 2), ("for x in a; do\n if true; then " + FP8 + "; fi\n", 2),
    ("if true; then\n while false; do :\n" + FP8 + "\nfi", 5),     # at the `fi`, as bash
    ("while false; do :; fi\n" + FP8, 2), ("esac\n" + FP8, 2),
])
def test_an_unclosed_compound_command_is_a_problem_at_its_line(tmp_path: Path, before: str,
                                                               line: int) -> None:
    intent, read = _megatron(tmp_path, before)
    assert intent["fp8"] is not True
    assert any(p.level == "error" and p.line == line and p.path.endswith("train.sh")
               for p in read.problems), [str(p) for p in read.problems]


@pytest.mark.parametrize("before", [
    "if true; then " + FP8 + "; fi", "while false; do :; done\n" + FP8,
    "case x in x) " + FP8 + ";; esac", "echo if while case\n" + FP8,
    "f() { if true; then " + FP8 + "; fi; }\nf",
])
def test_closed_compound_commands_are_read(tmp_path: Path, before: str) -> None:
    assert _megatron(tmp_path, before)[0]["fp8"] is True


# --- an object shared with a job module, changed by setattr / __dict__ --------------------------

TE_LLAMA = JOBS / "holdout14-te-llama-tutorial-accelerate-fp8-te-llama2-7b-h100" / "files"
_TE = "docs/examples/te_llama/"
_SET = 'hyperparams.mixed_precision = "fp8"'


def _te_llama(tmp_path: Path, change: str, extra: dict[str, str] | None = None) -> Any:
    job = tmp_path / "job"
    shutil.copytree(TE_LLAMA, job)
    run = job / _TE / "run_fp8.py"
    text = run.read_text()
    assert _SET in text
    run.write_text(text.replace(_SET, change))
    for name, body in (extra or {}).items():
        (job / _TE / name).parent.mkdir(parents=True, exist_ok=True)
        (job / _TE / name).write_text(body)
    return _intent(run)[0]["fp8"]


def test_setattr_with_a_literal_name_is_a_set(tmp_path: Path) -> None:
    assert _te_llama(tmp_path, 'setattr(hyperparams, "mixed_precision", "fp8")') is True


@pytest.mark.parametrize("change", [
    'hyperparams.__dict__["mixed_precision"] = "fp8"',
    'vars(hyperparams).update(mixed_precision="fp8")',
    'name = "mixed_precision"\nsetattr(hyperparams, name, "fp8")',
])
def test_attributes_changed_by_names_not_given_are_unknown(tmp_path: Path, change: str) -> None:
    assert isinstance(_te_llama(tmp_path, change), Unknown)


def test_reading_the_object_changes_nothing(tmp_path: Path) -> None:
    assert _te_llama(tmp_path, _SET + "\nprint(vars(hyperparams))") is True


def test_a_package_wins_over_a_module_of_its_name(tmp_path: Path) -> None:
    # importlib's FileFinder looks for utils/__init__.py before utils.py
    got = _te_llama(tmp_path, _SET, {"utils/__init__.py": "hyperparams = None\n"})
    assert got is not True


# --- launchers named by their path --------------------------------------------------------------

@pytest.mark.parametrize("line, kind", [
    ("/opt/conda/bin/python train.py", "hf_trainer"),
    ("$VENV/bin/python3 train.py", "hf_trainer"),
    ("/usr/local/bin/torchrun --nproc_per_node 8 train.py", "hf_trainer"),
    ("~/.local/bin/llamafactory-cli train t.yaml", "llamafactory"),
    ("/usr/bin/axolotl train a.yaml", "axolotl"),
])
def test_a_launcher_given_by_its_path_is_read(tmp_path: Path, line: str, kind: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text("from transformers import TrainingArguments\n"
                                       "args = TrainingArguments(output_dir='x', bf16=True)\n")
    (tmp_path / "t.yaml").write_text("stage: sft\nfinetuning_type: full\nfp8: true\n")
    (tmp_path / "a.yaml").write_text("base_model: x\nbf16: true\n")
    (tmp_path / "run.sh").write_text(line + "\n")
    _, read = _intent(tmp_path / "run.sh")
    assert kind in [k for _, k in read.files]


@pytest.mark.parametrize("line", ["cat logs/python train.py", "ls out/torchrun train.py"])
def test_a_launcher_name_inside_another_path_is_no_launch(tmp_path: Path, line: str) -> None:
    from preflight.reading.launch import launcher_commands

    assert not list(launcher_commands(line + "\n"))


def test_prime_rl_yaml_has_no_defaults_chain(tmp_path: Path) -> None:
    # pydantic-config includes no other file: `defaults:` in an `@ c.yaml` is a key, not a chain
    intent, read = _intent(_prime(tmp_path, "uv run rl @ c.yaml\n", {
        "c.yaml": "defaults:\n  - f.yaml\ninference:\n  vllm: {}\norchestrator: {}\n",
        "f.yaml": "trainer:\n  model:\n    quantization:\n      type: mxfp8\n"}))
    assert intent["fp8"] is False
    assert not any(p.endswith("f.yaml") for p, _ in read.files)


@pytest.mark.parametrize("script, fp8, rollout", [
    (f'uv run rl @ "$(dirname "$0")/{REV_TOML}" --trainer.model.quantization.type mxfp8\n',
     True, False),
    (f'D="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"\nuv run rl @ $D/{REV_TOML}\n',
     False, False),
])
def test_prime_rl_paths_from_the_scripts_folder_are_read(tmp_path: Path, script: str,
                                                          fp8: bool, rollout: bool) -> None:
    # the launch readers that take `launch.args` got the script-folder marker as text
    intent, _ = _intent(_prime(tmp_path, script))
    assert (intent["fp8"], intent["rollout.fp8"]) == (fp8, rollout)


def test_prime_rl_script_folder_path_out_of_the_job_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "secret.toml").write_text("[trainer.model.quantization]\n")
    intent, read = _intent(_prime(tmp_path, 'uv run rl @ "$(dirname "$0")/../secret.toml"\n'))
    assert isinstance(intent["fp8"], Unknown)
    assert "\x01" not in intent["fp8"].reason


def test_torchtune_settings_from_variables_are_unknown(tmp_path: Path) -> None:
    # View.get gives the default for an Unknown: `compile=$C` read as compile off
    (tmp_path / ".git").mkdir()
    (tmp_path / "my.yaml").write_text("dtype: bf16\ncompile: false\nmodel:\n"
                                      "  _component_: torchtune.models.llama3.llama3_8b\n")
    (tmp_path / "run.sh").write_text("tune run full_finetune_distributed --config ./my.yaml "
                                     "compile=$C dtype=$D\n")
    intent, _ = _intent(tmp_path / "run.sh")
    assert isinstance(intent["compile"], Unknown) and "$C" in intent["compile"].reason
    assert isinstance(intent["precision"], Unknown) and "$D" in intent["precision"].reason


@pytest.mark.parametrize("launch, name, text", [
    ("llamafactory-cli train bad.yaml", "bad.yaml", "stage: sft\nfp8: [\n"),
    ("llamafactory-cli sft t.json", "t.json", "[1]"),
    ("accelerate launch --config_file acc.yaml t.py", "acc.yaml", "- 1\n"),
    ("axolotl train ax.yaml", "ax.yaml", "- 1\n"),
])
def test_a_named_config_that_cannot_be_read_leaves_fp8_unknown(tmp_path: Path, launch: str,
                                                               name: str, text: str) -> None:
    # an error at the config's line, and "FP8: no" from the defaults beside it
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(text)
    (tmp_path / "t.py").write_text("import torch\n")
    (tmp_path / "run.sh").write_text(launch + "\n")
    intent, read = _intent(tmp_path / "run.sh")
    assert isinstance(intent["fp8"], Unknown)
    assert any(p.path.endswith(name) and p.level == "error" for p in read.problems)


def test_a_named_config_that_is_read_still_decides(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "t.yaml").write_text("stage: sft\nfinetuning_type: full\nbf16: true\n")
    (tmp_path / "run.sh").write_text("llamafactory-cli train t.yaml\n")
    assert _intent(tmp_path / "run.sh")[0]["fp8"] is False
