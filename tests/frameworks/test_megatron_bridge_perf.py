"""Megatron-Bridge's performance launcher (``scripts/performance/setup_experiment.py -c X``),
read from its launch line (fixtures/configs/megatron_bridge_perf: the README's example bash file
at v0.6.0 / 067f987d): ``-c`` picks the mixed-precision preset (argument_parser.py choices,
utils/precision.py get_precision_config, v0.4.0-v0.6.0), forwarded ``key=value`` words win, a
value argparse refuses or one the text does not give is Unknown, and the launcher's files are
never read as NeMo 2's (holdout11)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import preflight
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "configs" / "megatron_bridge_perf"
LINE = "python scripts/performance/setup_experiment.py -m deepseek -mr deepseek_v3 -g gb300 "


def _read(path: Path) -> tuple[dict[str, Any], Any]:
    read = read_paths([str(path)], None)
    values, prov = derive(Facts(read.facts, read.provenance))
    return {k[7:]: (v, prov.get(k, "")) for k, v in values.items()}, read


def _job(tmp_path: Path, body: str) -> Path:
    job = tmp_path / "job"
    shutil.copytree(FIX, job, dirs_exist_ok=True)
    (job / "launch.sh").write_text("#!/bin/bash\n" + body + "\n")
    return job / "launch.sh"


def test_readme_example_is_mxfp8_through_megatron_bridge() -> None:
    intent, read = _read(FIX / "launch.sh")
    assert intent["fp8"][0] is True
    assert intent["recipe"][0] == "mxfp8"
    assert intent["format"][0] == "e4m3"        # bf16_with_mxfp8_mixed @ v0.6.0
    assert intent["backend"][0] == "te"
    assert intent["stack"][0] == ["megatron_bridge", "megatron"]
    assert intent["recipe"][1].endswith("launch.sh:20")          # the -c line
    assert [k for _, k in read.files] == ["megatron_bridge"]
    assert read.facts["config.megatron_bridge.perf.gpu"] == "gb300"
    assert read.facts["config.megatron_bridge.perf.model_recipe_name"] == "deepseek_v3"


@pytest.mark.parametrize("flags, fp8, recipe", [
    ("-c bf16", False, None),
    ("", False, None),                                   # default bf16
    ("-c fp8_cs", True, "tensorwise"),
    ("--compute_dtype fp8_cs", True, "tensorwise"),
    ("--compute_dtype=fp8_sc", True, "blockwise"),
    ("-c nvfp4", True, "nvfp4"),
    ("-c fp8_mx -tp 2 -ep 8", True, "mxfp8"),
])
def test_compute_dtype(tmp_path: Path, flags: str, fp8: bool, recipe: str | None) -> None:
    intent, _ = _read(_job(tmp_path, LINE + flags))
    assert intent["fp8"][0] is fp8
    if recipe is not None:
        assert intent["recipe"][0] == recipe
    if "-tp 2" in flags:
        assert intent["tp"][0] == 2 and intent["ep"][0] == 8


def test_fp8_cs_keeps_no_bf16_layers(tmp_path: Path) -> None:
    _, read = _read(_job(tmp_path, LINE + "-c fp8_cs"))
    assert read.facts["config.megatron_bridge.mixed_precision.first_last_layers_bf16"] is False


def test_forwarded_override_wins_over_c(tmp_path: Path) -> None:
    # setup_experiment forwards argv; run_script applies unknown key=value words after the recipe
    intent, _ = _read(_job(tmp_path, LINE + "-c fp8_mx mixed_precision=bf16_mixed"))
    assert intent["fp8"][0] is False
    intent, _ = _read(_job(tmp_path, LINE + "-c fp8_cs mixed_precision.fp8_recipe=blockwise"))
    assert intent["recipe"][0] == "blockwise"


@pytest.mark.parametrize("flags, why", [
    ("-c fp8_ds", "choice of no release"),        # neither interface takes it
    ("-c FP8_MX", "choice of no release"),
    ("-c fp8 --fp8_recipe tw", "choice of no release"),   # fp8 is v0.1.x's; tw is no recipe
    ("-c fp8 -fr $RECIPE", "--fp8_recipe, not known"),
    ("-c $DTYPE", "-c/--compute_dtype is not known"),
    ("-c fp8_mx --use_recipes", "--use_recipes"),
])
def test_values_the_text_cannot_decide(tmp_path: Path, flags: str, why: str) -> None:
    intent, read = _read(_job(tmp_path, LINE + flags))
    fp8 = intent["fp8"][0]
    assert isinstance(fp8, Unknown) and why in fp8.reason
    if "no release" in why:
        assert any(p.line == 2 and ("compute_dtype" in p.message or "fp8_recipe" in p.message)
                   for p in read.problems)
    else:
        assert not read.problems


@pytest.mark.parametrize("body", [
    "# " + LINE + "-c fp8_mx\n" + LINE + "-c bf16",             # a comment
    'DECOY="-c fp8_mx"\n' + LINE + "-c bf16",                  # an unused variable
    'echo "' + LINE + '-c fp8_mx"\n' + LINE + "-c bf16",       # an echo
    LINE + "-c bf16 --wandb_experiment_name fp8_mx",           # a value naming fp8
])
def test_decoys_do_not_switch_fp8_on(tmp_path: Path, body: str) -> None:
    intent, _ = _read(_job(tmp_path, body))
    assert intent["fp8"][0] is False


def test_two_launches_that_differ_are_unknown(tmp_path: Path) -> None:
    intent, _ = _read(_job(tmp_path, LINE + "-c bf16\n" + LINE + "-c fp8_mx"))
    assert isinstance(intent["fp8"][0], Unknown)


def test_launcher_files_are_not_nemo2(tmp_path: Path) -> None:
    # setup_experiment.py imports NeMo-Run like NeMo 2's perf scripts: holdout11 read it as NeMo 2
    _, read = _read(_job(tmp_path, LINE + "-c fp8_mx"))
    assert "nemo2" not in [k for _, k in read.files]
    assert not any(n.startswith("config.nemo2.") for n in read.facts)


def test_mxfp8_on_gb300_draws_no_error(tmp_path: Path) -> None:
    run = _job(tmp_path, LINE + "-c fp8_mx")
    found = preflight.check([str(run)], smoke=False, assume={
        "gpu": "GB300", "pkg.transformer-engine": "2.14.0", "pkg.megatron-core": "0.17.0",
        "pkg.megatron-bridge": "0.4.0"}).findings
    ids = {f.rule_id for f in found}
    assert not ids & {"FP8D-HW-0001", "FP8D-HW-0004", "FP8D-MBR-0001", "FP8D-MEG-0013"}
    h100 = preflight.check([str(run)], smoke=False, assume={
        "gpu": "H100", "pkg.transformer-engine": "2.14.0", "pkg.megatron-core": "0.17.0"})
    assert "FP8D-HW-0004" in {f.rule_id for f in h100.findings}      # MXFP8 needs Blackwell


@pytest.mark.parametrize("body", [
    'MBRIDGE_PATH=/opt/Megatron-Bridge\nuv run python ${MBRIDGE_PATH}/scripts/performance/'
    "setup_experiment.py -m deepseek -mr deepseek_v3 -g gb300 -c fp8_mx",
    "cd /opt/Megatron-Bridge && python3 scripts/performance/run_script.py -m deepseek "
    "-mr deepseek_v3 -g gb300 --compute_dtype fp8_mx",
])
def test_launcher_paths(tmp_path: Path, body: str) -> None:
    intent, _ = _read(_job(tmp_path, body))
    assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"


@pytest.mark.parametrize("flags, fp8", [
    ("-cfp8_mx", True),                        # argparse: a short option's attached value
    ("--compute fp8_mx", True),                # allow_abbrev: a unique prefix
    ("--compute_d=fp8_mx", True),
    ("-c fp8_mx --compute_dtype bf16", False),  # the last occurrence wins, whatever spelling
    ("--compute_dtype bf16 -c fp8_mx", True),
    ("-cp 2 -c fp8_mx", True),                 # -cp is context_parallel_size, not -c p
    ("-cp 2", False),
    ("--use_recipe -c fp8_mx", "unknown"),     # --use_recipes, abbreviated
    # argparse stops at an ambiguous prefix (--compute_dtype, --config_variant, --container_image
    # ...: argument_parser.py @ v0.6.0 51885cf1); was read as not given, bf16 (redteam8)
    ("--co fp8_mx", "unknown"),
    ("--c=fp8_mx", "unknown"),
    ("--com fp8_mx", True),
    ("--us -c fp8_mx", "unknown"),
])
def test_compute_dtype_as_argparse_reads_it(tmp_path: Path, flags: str, fp8: Any) -> None:
    # redteam8: argument_parser.py @ v0.6.0 builds a plain ArgumentParser (allow_abbrev on) and
    # setup_experiment.py calls parse_known_args: these spellings were read as "not given" (bf16)
    intent, _ = _read(_job(tmp_path, LINE + flags))
    if fp8 == "unknown":
        assert isinstance(intent["fp8"][0], Unknown)
    else:
        assert intent["fp8"][0] is fp8


@pytest.mark.parametrize("flags, recipe", [
    # v0.1.0rc3-v0.2.0rc6 (the NeMo 25.09 image): -c bf16|fp8 and -fr/--fp8_recipe ds|cs|mx|ss
    # (argument_parser.py l.86-107, utils/helpers.py l.92-111 @ v0.1.0rc4 6725f704); holdout23
    # gpu-recipes-a4 llama31-70b: `--compute_dtype fp8 --fp8_recipe cs` drew FP8D-CFG-UNREADABLE
    ("--compute_dtype fp8 --fp8_recipe cs", "tensorwise"),
    ("-c fp8 -fr cs", "tensorwise"),
    ("-c fp8 -frmx", "mxfp8"),                    # a short option's attached value
    ("-c fp8 --fp8=ss", "blockwise"),             # allow_abbrev: --fp8_recipe is the only --f...
    ("-c fp8", "delayed"),                        # --fp8_recipe's default: ds
    ("-c fp8 -fr ds", "delayed"),
    ("-c fp8_cs", "tensorwise"),                  # the later interface, v0.2.0-v0.6.0
])
def test_both_interfaces(tmp_path: Path, flags: str, recipe: str) -> None:
    intent, read = _read(_job(tmp_path, LINE + flags))
    assert intent["fp8"][0] is True and intent["recipe"][0] == recipe
    assert not read.problems
    releases = read.facts["config.megatron_bridge.perf.releases"]
    assert releases.startswith("v0.1.0rc3") == ("fp8_cs" not in flags)


def test_old_bf16_ignores_fp8_recipe(tmp_path: Path) -> None:
    # get_precision_config @ v0.1.0rc4: -fr is read only under fp8
    intent, read = _read(_job(tmp_path, LINE + "-c bf16 --fp8_recipe cs"))
    assert intent["fp8"][0] is False and not read.problems


def test_old_fp8_cs_on_b200_draws_no_error(tmp_path: Path) -> None:
    run = _job(tmp_path, "python scripts/performance/run_script.py --model_name llama3 "
                         "--model_size 70b --compute_dtype fp8 --fp8_recipe cs --gpu b200 "
                         "--use_tokendrop True -a dummy -p dummy train.manual_gc=true")
    found = preflight.check([str(run)], smoke=False, assume={
        "gpu": "B200", "pkg.transformer-engine": "2.7.0", "pkg.megatron-core": "0.14.0",
        "pkg.megatron-bridge": "0.1.0"}).findings
    assert not [f for f in found if f.severity == "error"]


@pytest.mark.parametrize("flags", [
    "-c fp8 --fp8_recipe",                          # no value: argparse stops
    "-c fp8 --fp8_recipe " + "x" * 200_000,         # a huge word
    "-c fp8 " + "-fr cs " * 2000 + "-fr $'\\x00'",  # many, the last one opaque
    "-c fp8 --fp8_recipe=",
])
def test_old_recipe_hostile(tmp_path: Path, flags: str) -> None:
    intent, read = _read(_job(tmp_path, LINE + flags))
    assert isinstance(intent["recipe"][0], Unknown) or intent["fp8"][0] is not True
    assert all(p.line == 2 for p in read.problems)


_COPY = ("from argument_parser import parse_cli_args\n\n"
         "def main(model_recipe_name: str, compute_dtype: str) -> None:\n"
         "    args, _ = parse_cli_args().parse_known_args()\n")
_CUSTOM = ("cd /opt/Megatron-Bridge\npython scripts/performance/custom_setup_experiment.py "
           "--gpu b200 --model_family_name deepseek --model_recipe_name deepseek_v3 "
           "--compute_dtype fp8_mx -ep 8")


@pytest.mark.parametrize("copy, fp8", [
    (_COPY, True),                                          # the job's copy: upstream's parser
    (None, "unknown"),                                      # no copy in the job
    ("import argparse\np = argparse.ArgumentParser()\n", "unknown"),   # its own parser
    (_COPY.replace("model_recipe_name", "recipe"), "unknown"),
])
def test_job_own_launcher_copy(tmp_path: Path, copy: str | None, fp8: Any) -> None:
    # holdout23 gpu-recipes-a4: `cp $CUSTOM_SETUP_EXPERIMENT_SCRIPT_PATH scripts/performance/`
    # then `python scripts/performance/custom_setup_experiment.py --compute_dtype fp8_mx ...`
    run = _job(tmp_path, _CUSTOM)
    if copy is not None:
        (run.parent / "custom_setup_experiment.py").write_text(copy)
    intent, read = _read(run)
    assert [k for _, k in read.files] == ["megatron_bridge"]
    if fp8 == "unknown":
        assert isinstance(intent["fp8"][0], Unknown) and "own launcher" in intent["fp8"][0].reason
    else:
        assert intent["fp8"][0] is True and intent["recipe"][0] == "mxfp8"
    assert not read.problems


def test_job_own_launcher_copy_hostile(tmp_path: Path) -> None:
    run = _job(tmp_path, _CUSTOM)
    (run.parent / "elsewhere.py").write_text(_COPY)
    (run.parent / "custom_setup_experiment.py").symlink_to(run.parent / "elsewhere.py")
    intent, _ = _read(run)
    assert isinstance(intent["fp8"][0], Unknown)
    (run.parent / "custom_setup_experiment.py").unlink()
    (run.parent / "custom_setup_experiment.py").write_bytes(b"\x00\xff" * 10 + b"x" * (2 << 20))
    intent, _ = _read(run)
    assert isinstance(intent["fp8"][0], Unknown)
