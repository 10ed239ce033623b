"""AReaL experiment files from a hostile pull request, the Hydra side (issue 21, redteam5).

AReaL composes ``--config X.yaml`` with Hydra searching only that file's folder
(``hydra_init(config_path=<its folder>)``, areal/api/cli_args.py ``parse_cli_args`` at
inclusionAI/AReaL 0073c330): it ships no config groups of its own, so a ``defaults:`` entry that
is not in that folder is a file this job copy lacks (or Hydra stops the job). Each of these was
read as "no FP8 setting" (exit 0): a missing entry, an absolute one (``/etc/passwd``: Hydra's
config root, never the file system's), a config group entry reaching out of the job; and entries
after ``_self_`` override the file's own values in Hydra, where the reader let the file win. A
file of keys every trainer uses (``experiment_name``, ``trial_name``, ``saver``, ``recover``) was
claimed as AReaL's and said FP8 "no" too (frameworks/_claim.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.frameworks import detect, score
from preflight.intent import derive
from preflight.jobs.read import ConfigRead, read_paths

_RECORDING: list[list[str]] = []
HEAD = "experiment_name: e\ntrial_name: t\ncluster: {n_gpus_per_node: 8}\n"
FSDP = HEAD + "actor: {backend: 'fsdp:d8'}\nrollout: {backend: 'sglang:d8'}\n"
MEGATRON_FP8 = HEAD + ("actor: {backend: 'megatron:d8', megatron: {fp8_config: {mode: e4m3}}}\n"
                       "rollout: {backend: 'sglang:d8'}\n")


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], str):
        _RECORDING[-1].append(os.path.realpath(args[0]))


@pytest.fixture()
def opened() -> Iterator[list[str]]:
    if not getattr(sys, "_fp8d_areal5_hook", False):
        sys.addaudithook(_hook)
        sys._fp8d_areal5_hook = True  # type: ignore[attr-defined]
    seen: list[str] = []
    _RECORDING.append(seen)
    yield seen
    _RECORDING.remove(seen)


def _fp8(read: ConfigRead) -> Any:
    values, _ = derive(Facts(read.facts, read.provenance))
    return values["intent.fp8"]


def test_a_file_of_generic_keys_is_not_areals_and_not_fp8_no(tmp_path: Path) -> None:
    data = {"experiment_name": "e", "trial_name": "t", "saver": {"freq_steps": 1},
            "recover": {"mode": "auto"}, "stats_logger": {}, "evaluator": {}}
    assert score("areal", data) == 0
    assert detect("yaml", data) == (None, [])
    (tmp_path / "c.yaml").write_text("experiment_name: e\ntrial_name: t\nsaver: {freq_steps: 1}\n"
                                     "recover: {mode: auto}\nuse_fp8: true\n")
    assert _fp8(read_paths([str(tmp_path / "c.yaml")])) is not False


def test_an_own_key_still_claims_it() -> None:
    for extra in ({"allocation_mode": "sglang:d4+megatron:d4", "saver": {}},
                  {"actor": {"backend": "megatron:d8"}},
                  {"cluster": {"fileroot": "/x"}, "rollout": {}}):
        assert score("areal", {"experiment_name": "e", "trial_name": "t", **extra}) > 0, extra


@pytest.mark.parametrize("entry", ["nothere", "/etc/passwd", "{actor: ../../outside/x}",
                                   "sub/missing"])
def test_a_defaults_entry_not_read_leaves_fp8_unknown(tmp_path: Path, entry: str,
                                                      opened: list[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text(MEGATRON_FP8)
    job = tmp_path / "job"
    job.mkdir()
    (job / "c.yaml").write_text(f"defaults:\n  - {entry}\n  - _self_\n" + FSDP.replace(
        "fsdp:d8", "megatron:d8"))
    start = len(opened)                  # what the test itself wrote is not the reader's
    read = read_paths([str(job / "c.yaml")])
    assert isinstance(read.facts.get("config.areal.base_config"), Unknown)
    assert isinstance(_fp8(read), Unknown)
    assert not [p for p in opened[start:] if p.startswith((str(outside), "/etc/passwd"))]


def test_through_the_launch_line_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("defaults:\n  - nothere\n  - _self_\n" +
                                     FSDP.replace("fsdp:d8", "megatron:d8"))
    (tmp_path / "run.sh").write_text("python3 -m areal.infra.launcher.local train.py "
                                     "--config c.yaml scheduler.type=local\n")
    read = read_paths([str(tmp_path / "run.sh")])
    assert isinstance(_fp8(read), Unknown)


def test_entries_after_self_override_the_files_own_values(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(FSDP)
    (tmp_path / "first.yaml").write_text("defaults:\n  - _self_\n  - base\n" + MEGATRON_FP8)
    (tmp_path / "last.yaml").write_text("defaults:\n  - base\n  - _self_\n" + MEGATRON_FP8)
    first = read_paths([str(tmp_path / "first.yaml")])
    last = read_paths([str(tmp_path / "last.yaml")])
    assert first.facts["config.areal.actor.backend"] == "fsdp:d8"
    assert _fp8(first) is False          # the FP8 config is the Megatron engine's, not FSDP's
    assert last.facts["config.areal.actor.backend"] == "megatron:d8"
    assert _fp8(last) is True


def test_a_complete_chain_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(MEGATRON_FP8)
    (tmp_path / "c.yaml").write_text("defaults:\n  - base\n  - _self_\n" + HEAD +
                                     "rollout: {backend: 'sglang:d8'}\n")
    read = read_paths([str(tmp_path / "c.yaml")])
    assert _fp8(read) is True
    assert not isinstance(read.facts.get("config.areal.base_config"), Unknown)


@pytest.mark.parametrize("override, fp8", [
    ("actor.megatron.fp8_config=null", False), ("'~actor.megatron.fp8_config'", False),
    ("actor.megatron.fp8_config.recipe=blockwise", True),
])
def test_a_launch_line_that_removes_the_fp8_config_turns_it_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, override: str, fp8: bool) -> None:
    """Hydra's ``key=null`` replaces the mapping; the base file, read again on its own, kept
    ``fp8_config.mode`` in the job and FP8 stayed on (the launch line turned it off)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(MEGATRON_FP8)
    (tmp_path / "run.sh").write_text("python3 -m areal.infra.launcher.local train.py "
                                     f"--config c.yaml {override}\n")
    assert _fp8(read_paths([str(tmp_path / "run.sh")])) is fp8
