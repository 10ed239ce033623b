"""FlashRL's FLASHRL_CONFIG as the rollout precision of verl and SkyRL jobs (frameworks/flashrl.py),
set by an export or by ``uv run --env-file`` (frameworks/envfile.py): firing, quiet and hostile
cases (an env file that is huge, binary, a symlink out of the job, a FIFO)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import envfile
from preflight.intent import derive
from preflight.jobs.read import read_paths

VERL = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct "
        "actor_rollout_ref.rollout.name={engine} actor_rollout_ref.actor.imp_ratio_cap={cap}\n")
SKYRL = ("uv run --isolated --extra flashrl {flags} -- python -m skyrl_train.entrypoints.main_base "
         "generator.backend=vllm trainer.algorithm.use_tis=true "
         "trainer.policy.model.path=Qwen/Qwen2.5-0.5B-Instruct\n")


def _intent(path: Path) -> dict[str, Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov[k]) for k, v in values.items()}


def _verl(tmp_path: Path, head: str, engine: str = "vllm", cap: str = "-1") -> dict[str, Any]:
    script = tmp_path / "run.sh"
    script.write_text(head + VERL.format(engine=engine, cap=cap))
    return _intent(script)


def _skyrl(tmp_path: Path, env: str | None, flags: str = "--env-file .env.fp8",
           head: str = "") -> dict[str, Any]:
    if env is not None:
        (tmp_path / ".env.fp8").write_text(env)
    script = tmp_path / "run.sh"
    script.write_text(head + SKYRL.format(flags=flags))
    return _intent(script)


def _line(source: str) -> tuple[str, int]:
    path, _, line = str(source).rpartition(":")
    return Path(path).name, int(line)


@pytest.mark.parametrize("value", ["fp8", "'fp8_vllm'", "fp8_fast", "fp8_vllm_fast"])
def test_verl_export_fp8_is_an_fp8_rollout(tmp_path: Path, value: str) -> None:
    intent = _verl(tmp_path, f"export FLASHRL_LOGGING_LEVEL=DEBUG\nexport FLASHRL_CONFIG={value}\n")
    assert intent["rollout.fp8"][0] is True
    assert _line(intent["rollout.fp8"][1]) == ("run.sh", 2)
    assert intent["rollout.recipe"][0] == "tensorwise"
    assert intent["rollout.is_correction"][0] is False          # imp_ratio_cap=-1: off


def test_verl_positive_imp_ratio_cap_is_the_correction(tmp_path: Path) -> None:
    intent = _verl(tmp_path, "export FLASHRL_CONFIG=fp8\n", cap="2")
    assert intent["rollout.is_correction"][0] is True
    assert intent["rollout.fp8"][0] is True


@pytest.mark.parametrize("value", [
    "bf16",
    "LiyuanLucasLiu/Qwen2.5-32B-quantized.w8a8/flashrl_config.bf16.yaml",   # holdout19 control
    "LiyuanLucasLiu/Qwen2.5-32B-quantized.w8a8/flashrl_config.yaml",        # INT8 (w8a8)
])
def test_verl_bf16_and_int8_profiles_are_not_fp8(tmp_path: Path, value: str) -> None:
    intent = _verl(tmp_path, f"export FLASHRL_CONFIG={value}\n")
    assert intent["rollout.fp8"][0] is False


def test_verl_a_hub_profile_whose_name_says_nothing_is_unknown(tmp_path: Path) -> None:
    intent = _verl(tmp_path, "export FLASHRL_CONFIG=someone/some-model/profile.yaml\n")
    assert isinstance(intent["rollout.fp8"][0], Unknown)
    assert "FLASHRL_CONFIG" in intent["rollout.fp8"][0].reason


@pytest.mark.parametrize(("configs", "fp8"), [
    ("- fn: int8\n", False), ("- fn: bf16\n- fn: int8\n", False),
    ("- fn: bf16\n- fn: fp8_channel\n", True), ("- fn: fp8_vllm\n  quantization: fp8\n", True)])
def test_verl_a_profile_in_the_job_is_read(tmp_path: Path, configs: str, fp8: bool) -> None:
    (tmp_path / "profile.yaml").write_text("configs:\n" + configs)
    intent = _verl(tmp_path, "export FLASHRL_CONFIG=profile.yaml\n")
    assert intent["rollout.fp8"][0] is fp8


def test_verl_quiet_without_export_or_on_another_engine(tmp_path: Path) -> None:
    # a shell variable not exported never reaches the Python process
    assert _verl(tmp_path, "FLASHRL_CONFIG=fp8\n")["rollout.fp8"][0] is False
    # FlashRL patches SGLang only with SGLANG_PATCH set
    assert _verl(tmp_path, "export FLASHRL_CONFIG=fp8\n", engine="sglang")["rollout.fp8"][0] \
        is False


def test_skyrl_uv_env_file_fp8_vllm(tmp_path: Path) -> None:
    intent = _skyrl(tmp_path, '# flashrl\nFLASHRL_CONFIG="fp8_vllm"\n# FLASHRL_LOGGING_LEVEL=DEBUG\n')
    assert intent["rollout.fp8"][0] is True
    assert _line(intent["rollout.fp8"][1]) == (".env.fp8", 2)
    assert intent["rollout.is_correction"][0] is True


def test_skyrl_the_scripts_export_wins_over_the_env_file(tmp_path: Path) -> None:
    # uv loads env files with dotenvy::from_path: a variable already set is not overridden
    intent = _skyrl(tmp_path, "FLASHRL_CONFIG=fp8\n", head="export FLASHRL_CONFIG=bf16\n")
    assert intent["rollout.fp8"][0] is False


@pytest.mark.parametrize("flags", ["--no-env-file --env-file .env.fp8", ""])
def test_skyrl_quiet_without_the_env_file(tmp_path: Path, flags: str) -> None:
    assert _skyrl(tmp_path, "FLASHRL_CONFIG=fp8\n", flags=flags)["rollout.fp8"][0] is False


def test_skyrl_env_file_outside_the_job_is_unknown_never_opened(tmp_path: Path) -> None:
    job, away = tmp_path / "job", tmp_path / "away"
    job.mkdir()
    away.mkdir()
    (away / "secret.env").write_text("FLASHRL_CONFIG=fp8\n")
    os.symlink(away / "secret.env", job / ".env.fp8")
    intent = _skyrl(job, None)
    assert isinstance(intent["rollout.fp8"][0], Unknown)


@pytest.mark.parametrize("kind", ["huge", "binary", "fifo"])
def test_skyrl_hostile_env_file_is_unknown(tmp_path: Path, kind: str) -> None:
    env = tmp_path / ".env.fp8"
    if kind == "huge":
        env.write_text("FLASHRL_CONFIG=fp8\n" + "X=" + "a" * 30_000_000 + "\n")
    elif kind == "binary":
        env.write_bytes(b"FLASHRL_CONFIG=fp8\n\x00\xff\xfe" * 100)
    else:
        os.mkfifo(env)
    intent = _skyrl(tmp_path, None)
    assert isinstance(intent["rollout.fp8"][0], Unknown)


def test_dotenv_syntax() -> None:
    text = ("# c\nexport A=1\nB = 'x $(rm -rf /) y'\nC=\"a\\\"b\" # note\nD=plain # note\n"
            "E=\"multi\nline\"\nF=${HOME}/x\nG=\"$(whoami)\"\n!bad line\nH=after\n")
    got = {n: (v, line) for n, v, line in envfile.parse(text, "f.env")}
    assert got["A"] == ("1", 2)
    assert got["B"][0] == "x $(rm -rf /) y"       # single quotes: literal, nothing runs
    assert got["C"][0] == 'a"b' and got["D"][0] == "plain"
    assert got["E"] == ("multi\nline", 6)
    assert isinstance(got["F"][0], Unknown) and isinstance(got["G"][0], Unknown)
    assert "H" not in got                           # dotenvy stops at the line it cannot parse


def test_verl_a_value_known_only_at_run_time_is_unknown(tmp_path: Path) -> None:
    # never judged by the text of its reason (it names fp8)
    intent = _verl(tmp_path, "export FLASHRL_CONFIG=$(cat fp8_profile_name)\n")
    assert isinstance(intent["rollout.fp8"][0], Unknown)


def test_verl_prefix_assignment_and_a_container(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("FLASHRL_CONFIG=fp8 " + VERL.format(engine="vllm", cap="-1"))
    assert _intent(script)["rollout.fp8"][0] is True
    # a container starts from its own environment: the script's export does not reach it
    script.write_text("export FLASHRL_CONFIG=fp8\ndocker run img " +
                      VERL.format(engine="vllm", cap="-1"))
    assert _intent(script)["rollout.fp8"][0] is False


def test_skyrl_a_later_env_file_wins(tmp_path: Path) -> None:
    (tmp_path / "a.env").write_text("FLASHRL_CONFIG=bf16\n")
    (tmp_path / "b.env").write_text("FLASHRL_CONFIG=fp8\n")
    intent = _skyrl(tmp_path, None, flags="--env-file a.env --env-file=b.env")
    assert intent["rollout.fp8"][0] is True
    assert _line(intent["rollout.fp8"][1]) == ("b.env", 1)
