"""torchtune launch lines read as torchtune reads them, against hostile jobs (redteam6, issue 21).

Each case gave a wrong FP8 verdict on the code before (meta-pytorch/torchtune bd2a0fc7, omegaconf
v2.3.0):

- override values are loaded by ``OmegaConf.from_dotlist`` with PyYAML's YAML 1.1 resolvers
  (omegaconf basecontainer.py ``merge_with_dotlist``): ``enable_fp8_training=off`` / ``no`` is
  False and ``~`` null there; they were read as strings, so FP8 "yes";
- ``--virtual-local-rank`` is a bare torchrun flag: taken as taking a value, ``--nproc_per_node``
  became its value and ``8`` the recipe (FP8 Unknown and a false "job would not start" error);
- a ``--config`` that names a shipped config is the package's file even when the job holds a
  file of that name (_cli/run.py ``_get_config`` before the path): the job's copy was read;
- a custom recipe "reads" ``enable_fp8_training`` only in its code: a comment naming it made the
  recipe read FP8 (FP8D-TUNE-0001 quiet), and so did a ``# tune cp full_finetune_distributed``
  comment, taken as the copy that writes the recipe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

CFG = ("checkpointer: {_component_: torchtune.training.FullModelHFCheckpointer}\n"
       "dtype: bf16\ncompile: False\n")
LINE = "tune run --nproc_per_node 8"


def _read(job: Path, files: dict[str, str], target: str = "run.sh") -> tuple[Any, dict[str, Any]]:
    for name, text in files.items():
        (job / name).parent.mkdir(parents=True, exist_ok=True)
        (job / name).write_text(text)
    read = read_paths([str(job / target)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return read, dict(values)


@pytest.mark.parametrize(("word", "on"), [
    ("off", False), ("no", False), ("NO", False), ("Off", False), ("~", False), ("null", False),
    ("on", True), ("yes", True), ("true", True), ("'false'", True), ('"no"', True)])
def test_override_values_are_yaml_1_1_as_omegaconf_loads_them(tmp_path: Path, word: str,
                                                               on: bool) -> None:
    # shell words as they reach torchtune: `'false'` and `"no"` keep their quotes for YAML
    script = f"{LINE} full_finetune_distributed --config c.yaml enable_fp8_training=\\{word[0]}" \
             f"{word[1:-1]}\\{word[-1]}\n" if word[0] in "'\"" else \
             f"{LINE} full_finetune_distributed --config c.yaml enable_fp8_training={word}\n"
    read, got = _read(tmp_path, {"c.yaml": CFG, "run.sh": script})
    assert got["intent.fp8"] is on
    assert not read.problems


def test_virtual_local_rank_takes_no_value(tmp_path: Path) -> None:
    read, got = _read(tmp_path, {
        "c.yaml": CFG + "enable_fp8_training: true\n",
        "run.sh": "tune run --virtual-local-rank --nproc_per_node 8 full_finetune_distributed "
                  "--config c.yaml\n"})
    assert read.facts["config.torchtune.recipe"] == "full_finetune_distributed"
    assert got["intent.fp8"] is True and got["intent.num_gpus"] == 8
    assert not read.problems


def test_a_shipped_config_name_is_the_packages_even_with_a_file_of_that_name(
        tmp_path: Path) -> None:
    read, got = _read(tmp_path, {
        "llama3_1/8B_full": CFG + "enable_fp8_training: true\ncompile: true\n",
        "run.sh": f"{LINE} full_finetune_distributed --config llama3_1/8B_full\n"})
    assert read.facts["config.torchtune.base_config"] == "shipped:llama3_1/8B_full"
    assert got["intent.fp8"] is False       # the shipped 8B_full asks for no FP8


@pytest.mark.parametrize("run", [
    f"{LINE} mine.py --config c.yaml\n",
    f"# tune cp full_finetune_distributed mine.py\n{LINE} mine.py --config c.yaml\n"])
def test_a_recipe_that_only_names_the_key_in_words_does_not_read_it(tmp_path: Path,
                                                                    run: str) -> None:
    recipe = ('"""A recipe; see enable_fp8_training in the docs."""\n'
              "# enable_fp8_training is ignored here\n"
              "def recipe_main(cfg):\n    return cfg.get('dtype')\n")
    read, got = _read(tmp_path, {"c.yaml": CFG + "enable_fp8_training: true\n",
                                 "mine.py": recipe, "run.sh": run})
    assert read.facts["config.torchtune.recipe_reads_fp8"] is False
    assert got["intent.fp8"] is False and got.get("intent.fp8_source")   # asked, not run


@pytest.mark.parametrize("code", ["cfg.get('enable_fp8_training', False)",
                                  "cfg.enable_fp8_training"])
def test_a_recipe_whose_code_reads_the_key_reads_it(tmp_path: Path, code: str) -> None:
    read, got = _read(tmp_path, {"c.yaml": CFG + "enable_fp8_training: true\n",
                                 "mine.py": f"def recipe_main(cfg):\n    return {code}\n",
                                 "run.sh": f"{LINE} mine.py --config c.yaml\n"})
    assert read.facts["config.torchtune.recipe_reads_fp8"] is True and got["intent.fp8"] is True


def test_a_recipe_that_is_not_python_is_unknown(tmp_path: Path) -> None:
    read, got = _read(tmp_path, {"c.yaml": CFG + "enable_fp8_training: true\n",
                                 "mine.py": "def (:\n  enable_fp8_training\n",
                                 "run.sh": f"{LINE} mine.py --config c.yaml\n"})
    assert isinstance(read.facts["config.torchtune.recipe_reads_fp8"], Unknown)
    assert isinstance(got["intent.fp8"], Unknown)


def test_an_echoed_command_above_does_not_hide_the_launch(tmp_path: Path) -> None:
    # the launch pattern matched the newline before `tune run`, so the line checked for being a
    # message was the `echo` above it: the script was "no framework", its FP8 line unread
    read, got = _read(tmp_path, {
        "c.yaml": CFG,
        "run.sh": "echo 'tune run full_finetune_distributed --config c.yaml'\n"
                  f"{LINE} full_finetune_distributed --config c.yaml enable_fp8_training=True\n"})
    assert read.facts["config.torchtune.enable_fp8_training"] is True
    assert got["intent.fp8"] is True


def test_tune_cp_to_a_name_with_a_slash_writes_that_name_dot_py(tmp_path: Path) -> None:
    # cp.py L96-L98: pathlib's `Path("mine/")` is `mine`, given the suffix: mine.py is written,
    # so the job's stale mine.py (which never reads the key) is not what runs
    read, got = _read(tmp_path, {
        "c.yaml": CFG + "enable_fp8_training: true\n",
        "mine.py": "def recipe_main(cfg):\n    return cfg.dtype\n",
        "run.sh": f"tune cp full_finetune_distributed mine/\n{LINE} mine.py --config c.yaml\n"})
    assert read.facts["config.torchtune.recipe"] == "full_finetune_distributed"
    assert got["intent.fp8"] is True


@pytest.mark.parametrize("words", ["enable_fp8_training=True ~enable_fp8_training",
                                   "~enable_fp8_training enable_fp8_training=True"])
def test_removals_apply_to_the_file_before_every_override(tmp_path: Path, words: str) -> None:
    # _utils.py L161-L173: `~key` removes the key from the YAML's values; the key=value words are
    # merged over them afterwards (L198-L202), wherever the `~` stood on the line
    read, got = _read(tmp_path, {"c.yaml": CFG + "enable_fp8_training: false\n",
                                 "run.sh": f"{LINE} full_finetune_distributed --config c.yaml "
                                           f"{words}\n"})
    assert got["intent.fp8"] is True
    assert not read.problems


def test_removing_a_key_the_file_lacks_stops_the_job(tmp_path: Path) -> None:
    read, _ = _read(tmp_path, {"c.yaml": CFG,
                               "run.sh": f"{LINE} full_finetune_distributed --config c.yaml "
                                         "~enable_fp8_training\n"})
    problem = [p for p in read.problems if "enable_fp8_training" in p.message]
    assert problem and problem[0].line == 1 and problem[0].path.endswith("run.sh")


@pytest.mark.parametrize("value", ["${oc.env:FP8,false}", "${oc.env:FP8}", "${not_here}"])
def test_an_interpolation_resolved_at_run_time_is_unknown_not_its_text(tmp_path: Path,
                                                                       value: str) -> None:
    # OmegaConf resolves it when the recipe reads the key; the text itself (true) was FP8 on
    read, got = _read(tmp_path, {"c.yaml": CFG.replace("compile: False\n", "") +
                                 f"enable_fp8_training: '{value}'\ncompile: '{value}'\n",
                                 "run.sh": f"{LINE} full_finetune_distributed --config c.yaml\n"})
    assert isinstance(got["intent.fp8"], Unknown) and isinstance(got["intent.compile"], Unknown)
    # a reference to a key of the file is resolved as OmegaConf does
    read, got = _read(tmp_path, {"c.yaml": CFG + "fp8: false\nenable_fp8_training: ${fp8}\n"})
    assert got["intent.fp8"] is False


@pytest.mark.parametrize("value", ["'true'", "'false'", "1", "'yes'", "[1]"])
def test_the_rules_see_the_switch_as_the_recipe_tests_it(tmp_path: Path, value: str) -> None:
    # `if self._enable_fp8_training:` (full_finetune_distributed.py L211, L617): each of these is
    # on; FP8D-TUNE-0003 (context parallelism refused with FP8, L623-L626) compared the raw value
    # to true and stayed quiet while the job would stop
    import preflight

    (tmp_path / ".git").mkdir()
    _read(tmp_path, {"c.yaml": CFG + f"context_parallel_dim: 2\nenable_fp8_training: {value}\n",
                     "run.sh": f"{LINE} full_finetune_distributed --config c.yaml\n"})
    report = preflight.check([str(tmp_path / "run.sh")], smoke=False, assume={
        "gpu": "H100", "gpu.count": "8", "pkg.torchtune": "0.7.0.dev20250601",
        "pkg.torchao": "0.12.0", "pkg.torch": "2.8.0", "cuda.torch_build": "12.8"})
    assert "FP8D-TUNE-0003" in {f.rule_id for f in report.findings}


@pytest.mark.parametrize("flag", ["-n", "--no-clobber"])
def test_tune_cp_no_clobber_keeps_the_jobs_file(tmp_path: Path, flag: str) -> None:
    # cp.py L102-L105: with --no-clobber an existing destination is not overwritten, so the job's
    # own mine.py (which never reads the key) runs, not the package's recipe
    read, got = _read(tmp_path, {
        "c.yaml": CFG + "enable_fp8_training: true\n",
        "mine.py": "def recipe_main(cfg):\n    return cfg.dtype\n",
        "run.sh": f"tune cp {flag} full_finetune_distributed mine.py\n{LINE} mine.py "
                  "--config c.yaml\n"})
    assert read.facts["config.torchtune.recipe_reads_fp8"] is False
    assert got["intent.fp8"] is False and got.get("intent.fp8_source")
    # without the file in the job, the copy is the package's recipe
    (tmp_path / "mine.py").unlink()
    read, got = _read(tmp_path, {})
    assert read.facts["config.torchtune.recipe"] == "full_finetune_distributed"


@pytest.mark.parametrize(("recipe", "helper"), [
    ("from recipes.full_finetune_distributed import FullFinetuneRecipeDistributed\n"
     "class Mine(FullFinetuneRecipeDistributed):\n    pass\n", None),
    ("from helpers import build\ndef recipe_main(cfg):\n    return build(cfg)\n",
     "def build(cfg):\n    return cfg.get('enable_fp8_training')\n"),
    ("from .helpers import build\n", None)])
def test_a_recipe_built_on_imported_code_may_read_the_key(tmp_path: Path, recipe: str,
                                                          helper: str | None) -> None:
    # a subclass of torchtune's own recipe (its `recipes` package ships in the wheel) or the job's
    # module doing the work: "never reads it" was a false FP8D-TUNE-0001 and FP8 "no"
    files = {"c.yaml": CFG + "enable_fp8_training: true\n", "mine.py": recipe,
             "run.sh": f"{LINE} mine.py --config c.yaml\n"}
    if helper:
        files["helpers.py"] = helper
    read, got = _read(tmp_path, files)
    assert isinstance(read.facts["config.torchtune.recipe_reads_fp8"], Unknown)
    assert isinstance(got["intent.fp8"], Unknown)
