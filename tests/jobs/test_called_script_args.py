"""A job script that runs another with arguments (``bash recipe.sh a.b=c``): the called
script's ``"$@"`` / ``$1`` / ``shift`` hold them (reading/shellargs.py, reading/shellbind.py),
every reader of its launch lines sees them, and each setting they give is reported at the
caller's ``file:line``, where the user edits it (issue 22; holdout11's verl job:
run.sh:8 -> run_qwen3_5_27b_fsdp.sh:157 ``"$@"``, FP8D-RL-0001 was missed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from preflight.facts import Unknown
from preflight.jobs.read import read_paths
from preflight.reading.types import ConfigRead

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "realjobs"
QUANT = "config.verl.actor_rollout_ref.rollout.quantization"
GPUS = "config.verl.trainer.n_gpus_per_node"

# A faithful reduction of volcengine/verl @ 3f388066192c138aa19338f49accbe8bb9f72f33
# examples/grpo_trainer/run_qwen2-7b.sh (l.5-43: the launch line, most overrides left out),
# which ends in an unquoted `$@` (so does the file at tags v0.4.1, v0.5.0 and v0.6.0:
# ddd86f527a4af75095e4677b02b5aa272913a088, l.4-41).
QWEN2 = """set -x

# export VLLM_ATTENTION_BACKEND=XFORMERS

python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.model.path=Qwen/Qwen2-7B-Instruct \\
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \\
    actor_rollout_ref.rollout.name=vllm \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1 \\
    trainer.total_epochs=15 $@
"""
RECIPE = "examples/grpo_trainer/run_qwen2-7b.sh"


def _job(tmp_path: Path, run: str, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or {RECIPE: QWEN2}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + run)
    return tmp_path / "run.sh"


def _read(path: Path) -> ConfigRead:
    return read_paths([str(path)])


def _at(read: ConfigRead, name: str) -> tuple[str, int | None]:
    src = read.provenance[name]
    path, _, line = str(src).rpartition(":")
    return os.path.basename(path), int(line)


def test_holdout11_verl_override_reaches_main_ppo_through_its_recipe() -> None:
    job = REAL / "holdout11-verl-qwen35-27b-fsdp-sglang-fp8-rollout-ignored-linear-attn-no-tis"
    read = _read(job / "files" / "run.sh")
    assert read.facts[QUANT] == "fp8"
    assert _at(read, QUANT) == ("run.sh", 8)
    # the recipe's own settings stay at its lines
    assert read.facts["config.verl.actor_rollout_ref.rollout.name"] == "sglang"
    assert _at(read, "config.verl.actor_rollout_ref.rollout.name") == (
        "run_qwen3_5_27b_fsdp.sh", 110)


@pytest.mark.parametrize("run", [
    f"bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=4\n",
    f"sh ./{RECIPE} actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=4\n",
    f"./{RECIPE} actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=4\n",
    f"exec bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=4\n",
    f"env X=1 bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8 "
    "trainer.n_gpus_per_node=4\n",
    f"srun -N 1 bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8 "
    "trainer.n_gpus_per_node=4\n",
    f"nohup bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8 "
    "trainer.n_gpus_per_node=4 > log 2>&1 &\n",
    f"source {RECIPE} actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=4\n",
    f". {RECIPE} actor_rollout_ref.rollout.quantization=fp8 trainer.n_gpus_per_node=4\n",
    f'Q=fp8\nARGS=(actor_rollout_ref.rollout.quantization=$Q "trainer.n_gpus_per_node=4")\n'
    f'bash {RECIPE} "${{ARGS[@]}}"\n',
])
def test_the_recipe_gets_its_callers_words(tmp_path: Path, run: str) -> None:
    read = _read(_job(tmp_path, run))
    assert read.facts[QUANT] == "fp8"
    assert read.facts[GPUS] == 4                      # the caller's, after the script's 8
    line = run.count("\n") + 1                        # the calling line (after the #! line)
    assert _at(read, QUANT) == ("run.sh", line + (0 if "ARGS=(" not in run else -1))
    assert _at(read, "config.verl.actor_rollout_ref.rollout.name")[0] == "run_qwen2-7b.sh"


def test_a_recipe_run_by_hand_gets_no_invented_arguments(tmp_path: Path) -> None:
    (tmp_path / "r.sh").write_text(QWEN2)
    read = _read(tmp_path / "r.sh")
    assert QUANT not in read.facts and read.facts[GPUS] == 8
    # ...and one that takes a setting from $1 leaves it Unknown, with the reason
    (tmp_path / "r1.sh").write_text("#!/bin/bash\npython3 -m verl.trainer.main_ppo "
                                    "actor_rollout_ref.rollout.quantization=$1\n")
    value = _read(tmp_path / "r1.sh").facts[QUANT]
    assert isinstance(value, Unknown) and "given when the script is run" in value.reason


def test_shift_and_positional_words(tmp_path: Path) -> None:
    recipe = ("#!/bin/bash\nMODE=$1\nshift\nQ=${2:-null}\n"
              "python3 -m verl.trainer.main_ppo trainer.project_name=$MODE "
              "actor_rollout_ref.rollout.quantization=$Q \"${@:3}\"\n")
    read = _read(_job(tmp_path, "bash r.sh grpo x fp8 trainer.n_gpus_per_node=2\n",
                      {"r.sh": recipe}))
    assert read.facts["config.verl.trainer.project_name"] == "grpo"
    assert read.facts[QUANT] == "fp8" and read.facts[GPUS] == 2
    # the override word is written in r.sh (its value comes from run.sh); "${@:3}" is run.sh's
    assert _at(read, QUANT) == ("r.sh", 5) and _at(read, GPUS) == ("run.sh", 2)


def test_through_two_scripts_the_word_stays_where_it_is_written(tmp_path: Path) -> None:
    files = {RECIPE: QWEN2, "mid.sh": f"#!/bin/bash\nX=1\nbash {RECIPE} \"$@\" algorithm.x=1\n"}
    read = _read(_job(tmp_path, "# the job\nbash mid.sh actor_rollout_ref.rollout.quantization=fp8\n",
                      files))
    assert read.facts[QUANT] == "fp8" and _at(read, QUANT) == ("run.sh", 3)
    assert _at(read, "config.verl.algorithm.x") == ("mid.sh", 3)


def test_a_function_of_the_recipe_gets_the_scripts_arguments(tmp_path: Path) -> None:
    recipe = ("#!/bin/bash\nmain() {\n  local mode=$1\n  shift\n"
              "  python3 -m verl.trainer.main_ppo trainer.project_name=$mode \"$@\"\n}\n"
              "main \"$@\"\n")
    read = _read(_job(tmp_path, "bash r.sh grpo actor_rollout_ref.rollout.quantization=fp8\n",
                      {"r.sh": recipe}))
    assert read.facts[QUANT] == "fp8" and read.facts["config.verl.trainer.project_name"] == "grpo"
    assert _at(read, QUANT) == ("run.sh", 2)


def test_run_twice_with_different_arguments_is_unknown_naming_both(tmp_path: Path) -> None:
    run = (f"bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8\n"
           f"bash {RECIPE} actor_rollout_ref.rollout.quantization=null trainer.nnodes=1\n")
    read = _read(_job(tmp_path, run))
    value = read.facts[QUANT]
    assert isinstance(value, Unknown) and "run.sh:2" in value.reason and "run.sh:3" in value.reason
    assert read.facts[GPUS] == 8                   # what both runs give alike stays known
    same = _read(_job(tmp_path, f"bash {RECIPE} trainer.nnodes=2\nbash {RECIPE} trainer.nnodes=2\n"))
    assert same.facts["config.verl.trainer.nnodes"] == 2


def test_two_launch_scripts_running_one_recipe_differently(tmp_path: Path) -> None:
    _job(tmp_path, f"bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8\n")
    (tmp_path / "run2.sh").write_text(f"#!/bin/bash\nbash {RECIPE}\n")
    read = read_paths([str(tmp_path / "run.sh"), str(tmp_path / "run2.sh")])
    assert isinstance(read.facts[QUANT], Unknown)


def test_accelerate_options_passed_on_to_accelerate_launch(tmp_path: Path) -> None:
    files = {"launch.sh": "#!/bin/bash\nset -e\naccelerate launch \"$@\" train.py\n",
             "train.py": "from accelerate import Accelerator\nacc = Accelerator()\n"}
    read = _read(_job(tmp_path, "bash launch.sh --mixed_precision fp8 --num_processes 8\n", files))
    assert read.facts["config.accelerate.mixed_precision"] == "fp8"
    assert _at(read, "config.accelerate.mixed_precision") == ("run.sh", 2)


def test_recursion_between_scripts_ends(tmp_path: Path) -> None:
    files = {"a.sh": "#!/bin/bash\nbash b.sh \"$@\" x=1\n",
             "b.sh": "#!/bin/bash\nbash a.sh \"$@\" y=2\n"
                     "python3 -m verl.trainer.main_ppo \"$@\"\n"}
    read = _read(_job(tmp_path, "bash a.sh actor_rollout_ref.rollout.quantization=fp8\n", files))
    assert read.facts[QUANT] == "fp8"


def test_a_caller_outside_the_job_gives_nothing(tmp_path: Path) -> None:
    job = tmp_path / "job"
    (job / "examples/grpo_trainer").mkdir(parents=True)
    (job / RECIPE).write_text(QWEN2)
    (tmp_path / "outside.sh").write_text(
        f"#!/bin/bash\nbash job/{RECIPE} actor_rollout_ref.rollout.quantization=fp8\n")
    read = read_paths([str(job / RECIPE)])
    assert QUANT not in read.facts


def test_symlinked_recipe_inside_the_job(tmp_path: Path) -> None:
    _job(tmp_path, "bash link.sh actor_rollout_ref.rollout.quantization=fp8\n")
    (tmp_path / "link.sh").symlink_to(tmp_path / RECIPE)
    read = _read(tmp_path / "run.sh")
    assert read.facts[QUANT] == "fp8" and _at(read, QUANT) == ("run.sh", 2)


@pytest.mark.parametrize("count", [30_000, 100_000])
def test_a_flood_of_arguments_is_bounded(tmp_path: Path, count: int) -> None:
    words = " ".join(f"x{n}" for n in range(count))
    read = _read(_job(tmp_path, f"bash {RECIPE} {words} actor_rollout_ref.rollout.quantization=fp8\n"))
    # never read as "not set": past MAX_WORDS the arguments are unknown (a cut: the walk states
    # unread_args); 10^5 words pass the caller's own expansion budget, so nothing is read
    assert QUANT not in read.facts
    if count < 100_000:
        assert isinstance(read.facts.get("config.verl.unread_args"), Unknown)


def test_shift_past_the_arguments_moves_nothing(tmp_path: Path) -> None:
    recipe = "#!/bin/bash\nshift 1000\npython3 -m verl.trainer.main_ppo \"$@\"\n"
    read = _read(_job(tmp_path, "bash r.sh actor_rollout_ref.rollout.quantization=fp8\n",
                      {"r.sh": recipe}))
    assert read.facts[QUANT] == "fp8"                # bash: "shift count out of range"


def test_bash_agrees_on_shift_past_the_end(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    import subprocess
    out = subprocess.run([bash, "-c", 'shift 1000; printf "%s" "$#:$1"', "_", "a"],
                         capture_output=True, timeout=20)
    assert out.stdout == b"1:a"


def test_megatron_flags_take_the_callers_positional_words(tmp_path: Path) -> None:
    # Megatron-LM's example scripts take their paths as $1 .. $5 (examples/gpt3/
    # train_gpt3_175b_distributed.sh); a knob passed so reaches the flag reader too
    files = {"train.sh": "#!/bin/bash\nFMT=$1\nCKPT=$2\ntorchrun --nproc_per_node 8 "
                         "pretrain_gpt.py --bf16 --fp8-format $FMT --save $CKPT\n"}
    read = _read(_job(tmp_path, "bash train.sh hybrid /ckpt\n", files))
    assert read.facts["config.megatron.fp8_format"] == "hybrid"
    # a `shift` after the assignment moves nothing it took; one before moves $1 (the flag
    # reader walks the script in order: frameworks/megatron_walk.py), and by hand: not known
    files["train.sh"] = files["train.sh"].replace("CKPT=$2\n", "CKPT=$2\nshift\n")
    assert _read(_job(tmp_path, "bash train.sh hybrid /ckpt\n", files)).facts[
        "config.megatron.fp8_format"] == "hybrid"
    files["train.sh"] = files["train.sh"].replace("shift\n", "").replace("FMT=$1", "shift\nFMT=$1")
    assert _read(_job(tmp_path, "bash train.sh hybrid /ckpt\n", files)).facts[
        "config.megatron.fp8_format"] == "/ckpt"
    assert _read(tmp_path / "train.sh").facts.get("config.megatron.fp8_format") != "hybrid"


def test_a_folder_read_in_any_order_binds_the_callers_words(tmp_path: Path) -> None:
    # a folder scan may read mid.sh alone first (its own "$@" unknown): read again by run.sh,
    # what it passes on replaces that, never two differing runs
    files = {RECIPE: QWEN2, "mid.sh": f"#!/bin/bash\nbash {RECIPE} algorithm.x=1 \"$@\"\n"}
    _job(tmp_path, "bash mid.sh actor_rollout_ref.rollout.quantization=fp8\n", files)
    for paths in ([str(tmp_path)], [str(tmp_path / "run.sh")]):
        read = read_paths(paths)
        assert read.facts[QUANT] == "fp8", paths
        assert read.facts["config.verl.algorithm.x"] == 1


@pytest.mark.parametrize("run", [
    f"# bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8\nbash {RECIPE}\n",
    f"echo bash {RECIPE} actor_rollout_ref.rollout.quantization=fp8\nbash {RECIPE}\n",
    f"cat <<EOF\nbash {RECIPE} actor_rollout_ref.rollout.quantization=fp8\nEOF\nbash {RECIPE}\n",
])
def test_decoy_calls_give_no_words(tmp_path: Path, run: str) -> None:
    read = _read(_job(tmp_path, run))
    assert QUANT not in read.facts and read.facts[GPUS] == 8


def test_hostile_words_are_read_as_words(tmp_path: Path) -> None:
    # quotes, $( ), backslashes, a leading # and a newline in the caller's words: each one
    # word, never run, never a command of the recipe
    run = (f"bash {RECIPE} 'trainer.project_name=it'\"'\"'s $(rm -rf /)' 'trainer.a=x\\' "
           "'#trainer.b=1' $'trainer.c=1\\n--fp8' actor_rollout_ref.rollout.quantization=fp8\n")
    # (quoted "$@": each word whole; run_qwen2-7b.sh's unquoted $@ splits "it's $(rm" as bash does)
    read = _read(_job(tmp_path, run, {RECIPE: QWEN2.replace(" $@\n", ' "$@"\n')}))
    assert read.facts[QUANT] == "fp8" and _at(read, QUANT) == ("run.sh", 2)
    # the same words written on the launch line itself read the same
    (tmp_path / "direct.sh").write_text(QWEN2.replace(" $@\n", " " + run.split(" ", 2)[2]))
    direct = read_paths([str(tmp_path / "direct.sh")])
    names = [n for n in direct.facts if n.startswith("config.verl.trainer.")]
    assert {n: read.facts.get(n) for n in names} == {n: direct.facts[n] for n in names}
    assert read.facts["config.verl.trainer.a"] == "x\\"


def test_a_sourced_scripts_own_arguments_are_not_the_sourcing_scripts(tmp_path: Path) -> None:
    # `source env.sh e4m3`: env.sh's $1 is e4m3, not train.sh's (hybrid); the flag reader
    # does not follow that, so it leaves the value unread rather than take train.sh's $1
    files = {"env.sh": "#!/bin/bash\nFMT=$1\n",
             "train.sh": "#!/bin/bash\nsource env.sh e4m3\ntorchrun --nproc_per_node 8 "
                         "pretrain_gpt.py --bf16 --fp8-format $FMT\n"}
    read = _read(_job(tmp_path, "bash train.sh hybrid\n", files))
    assert read.facts.get("config.megatron.fp8_format") != "hybrid"
