"""A ``@hydra.main`` function's config composed as Hydra 1.3.2 does it (reading/pyhydra.py) and
fed to where the script uses it.

Faithful reductions of real public files:

- NVIDIA/bionemo-framework @ 3a9d005bffaa711e5964211d3ba34c5e373eb624,
  bionemo-recipes/recipes/esm2_native_te/: train_fsdp2.py l.46 (``@hydra.main(config_path=
  "hydra_config", config_name="L0_sanity", version_base="1.2")``), l.100-107 (the recipe class
  from ``hydra.utils.get_class(args.fp8_config.fp8_recipe)``), hydra_config/defaults.yaml
  l.50-60 (fp8_config / fp4_config), hydra_config/L0_sanity.yaml l.1-3 (``defaults: [defaults,
  _self_]``) and README.md's launch line ``python train_fsdp2.py --config-name L0_sanity
  fp8_config.enabled=true``. The model's ``te.autocast(recipe=...)`` is reduced to one call in the
  script (the recipe's own path through modeling_esm_te.py is not this test's subject).
- facebookresearch/hydra @ v1.3.2 (7ef3acab), examples/tutorials/basic/your_first_hydra_app/
  5_defaults/: my_app.py (``@hydra.main(version_base=None, config_path="conf",
  config_name="config")``), conf/config.yaml (``defaults: [{db: mysql}]``), conf/db/mysql.yaml,
  conf/db/postgresql.yaml (a config group chosen on the command line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.jobs.read import read_paths
from preflight.reading import hydracompose
from preflight.reading.pysource import Module, parse
from preflight.reading.pyvalues import Call, Ref, Unresolved

_BIONEMO = '''\
import hydra
import transformer_engine.pytorch
from omegaconf import DictConfig
from transformer_engine.common.recipe import Format


@hydra.main(config_path="hydra_config", config_name="L0_sanity", version_base="1.2")
def main(args: DictConfig) -> float | None:
    fp8_recipe = None
    if args.fp8_config.enabled:
        fp8_recipe = hydra.utils.get_class(args.fp8_config.fp8_recipe)(
            fp8_format=Format[args.fp8_config.fp8_format], **args.fp8_config.fp8_recipe_kwargs
        )
    record(args.fp8_config.enabled, fp8_recipe, args.use_torch_compile, args.dataset.tokenizer_name)
    with transformer_engine.pytorch.autocast(enabled=args.fp8_config.enabled, recipe=fp8_recipe):
        pass


if __name__ == "__main__":
    main()
'''
_DEFAULTS = '''\
config_name_or_path: ???
use_torch_compile: false
dataset:
  tokenizer_name: ${config_name_or_path}
fp8_config:
  enabled: false
  fp8_recipe: transformer_engine.common.recipe.DelayedScaling
  fp8_format: "HYBRID"
  fp8_recipe_kwargs: {}
fp4_config:
  enabled: false
  fp4_recipe: transformer_engine.common.recipe.NVFP4BlockScaling
  fp4_format: "E2M1"
  fp4_recipe_kwargs: {}
'''
_SANITY = '''\
defaults:
  - defaults
  - _self_

config_name_or_path: ./model_configs/nvidia/esm2_t6_8M_UR50D
use_torch_compile: true
'''


def _bionemo(tmp: Path, script: str = _BIONEMO) -> Path:
    (tmp / "hydra_config").mkdir(exist_ok=True)
    (tmp / "hydra_config" / "defaults.yaml").write_text(_DEFAULTS)
    (tmp / "hydra_config" / "L0_sanity.yaml").write_text(_SANITY)
    (tmp / "train_fsdp2.py").write_text(script)
    return tmp / "train_fsdp2.py"


def _record(script: Path, *argv: str) -> tuple[Any, ...]:
    m = Module(str(script), parse(str(script), script.read_text()), tuple(argv))
    return next(c for c, _ in m.calls() if c.name == "record").args


def test_the_override_reaches_the_if_and_the_recipe_class(tmp_path: Path) -> None:
    enabled, recipe, compiled, tokenizer = _record(
        _bionemo(tmp_path), "--config-name", "L0_sanity", "fp8_config.enabled=true")
    assert enabled is True and compiled is True          # L0_sanity's _self_ after defaults
    assert isinstance(recipe, Call) and recipe.func == "transformer_engine.common.recipe." \
        "DelayedScaling"
    assert recipe.kwargs["fp8_format"] == Ref("transformer_engine.common.recipe.Format.HYBRID")
    assert tokenizer == "./model_configs/nvidia/esm2_t6_8M_UR50D"    # ${config_name_or_path}


def test_without_the_override_fp8_stays_off(tmp_path: Path) -> None:
    enabled, recipe, _, _ = _record(_bionemo(tmp_path), "--config-name=L0_sanity")
    assert enabled is False and recipe is None


def test_the_decorators_config_name_is_the_default(tmp_path: Path) -> None:
    assert _record(_bionemo(tmp_path), "fp8_config.enabled=true")[0] is True
    assert _record(_bionemo(tmp_path), "-cn", "L0_sanity", "++fp8_config.enabled=1")[0] == 1


def test_without_a_launch_line_the_config_is_unresolved(tmp_path: Path) -> None:
    script = _bionemo(tmp_path)
    m = Module(str(script), parse(str(script), script.read_text()), None)
    got = next(c for c, _ in m.calls() if c.name == "record").args[0]
    assert isinstance(got, Unresolved) and "launch line" in got.reason


@pytest.mark.parametrize("flag, recipe, fmt", [
    ("fp8_config.enabled=true", "delayed", "hybrid"),
])
def test_intent_from_run_sh(tmp_path: Path, flag: str, recipe: str, fmt: str) -> None:
    _bionemo(tmp_path)
    (tmp_path / "run.sh").write_text(f"python train_fsdp2.py --config-name L0_sanity {flag}\n")
    read = read_paths([str(tmp_path / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is True and values["intent.recipe"] == recipe
    off = tmp_path / "off"
    off.mkdir()
    _bionemo(off)
    (off / "run.sh").write_text("python train_fsdp2.py --config-name L0_sanity\n")
    read = read_paths([str(off / "run.sh")], None)
    values, _ = derive(Facts(read.facts, read.provenance))
    assert values["intent.fp8"] is False


# facebookresearch/hydra v1.3.2 examples/tutorials/basic/your_first_hydra_app/5_defaults
_MY_APP = '''\
from omegaconf import DictConfig, OmegaConf

import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def my_app(cfg: DictConfig) -> None:
    record(cfg.db.driver, cfg.db.user, cfg.get("x"), cfg.db.get("user", 1), cfg.get("fp8", True),
           OmegaConf.to_container(cfg.db, resolve=True))
'''


def _my_app(tmp: Path, config: str = "defaults:\n  - db: mysql\n") -> Path:
    (tmp / "conf" / "db").mkdir(parents=True)
    (tmp / "conf" / "config.yaml").write_text(config)
    (tmp / "conf" / "db" / "mysql.yaml").write_text("driver: mysql\nuser: omry\npass: secret\n")
    (tmp / "conf" / "db" / "postgresql.yaml").write_text(
        "driver: postgresql\nuser: postgres_user\npass: drowssap\ntimeout: 10\n")
    (tmp / "my_app.py").write_text(_MY_APP)
    return tmp / "my_app.py"


@pytest.mark.parametrize("argv, driver, user", [
    ((), "mysql", "omry"),                                 # the group's default, under `db`
    (("db=postgresql",), "postgresql", "postgres_user"),   # a group override picks the option
    (("db=postgresql", "db.user=me"), "postgresql", "me"),
    (("~db", "+db=postgresql"), "postgresql", "postgres_user"),
])
def test_config_groups(tmp_path: Path, argv: tuple[str, ...], driver: str, user: str) -> None:
    got = _record(_my_app(tmp_path), *argv)
    assert got[:2] == (driver, user)


def test_get_and_to_container(tmp_path: Path) -> None:
    got = _record(_my_app(tmp_path), "+x=7")
    assert got[2:5] == (7, "omry", True)
    assert got[5] == {"driver": "mysql", "user": "omry", "pass": "secret"} and \
        type(got[5]) is dict


def test_self_first_lets_the_group_win(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    got = _record(_my_app(tmp_path / "a", "defaults:\n  - _self_\n  - db: mysql\ndb:\n  user: me\n"))
    assert got[1] == "omry"
    got = _record(_my_app(tmp_path / "b", "defaults:\n  - db: mysql\ndb:\n  user: me\n"))
    assert got[1] == "me"          # no _self_: Hydra appends it last (defaults_list.py l.252)


@pytest.mark.parametrize("argv, why", [
    (("db.port=1",), "key not in the config"),             # struct: `+` needed
    (("~db.port",), "no such key"),
    (("+db.user=x",), "already set"),
    (("db=sqlite",), "sqlite.yaml"),                       # a missing group option
    (("cache=redis",), "cache"),                           # no such group / key
    (("--multirun", "db=mysql,postgresql"), "multirun"),
    (("db.user=$USER",), "run knows"),
    (("--cfg", "job"), "print"),
    (("--config-dir", "/etc"), "not follow"),
])
def test_what_hydra_refuses_or_the_text_does_not_give_is_unresolved(
        tmp_path: Path, argv: tuple[str, ...], why: str) -> None:
    got = _record(_my_app(tmp_path), *argv)[0]
    assert isinstance(got, Unresolved) and why in got.reason


def test_optional_missing_option_and_null_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    got = _record(_my_app(tmp_path / "a", "defaults:\n  - optional db: sqlite\ndb:\n  driver: x\n"
                          "  user: y\n"))
    assert got[:2] == ("x", "y")
    got = _record(_my_app(tmp_path / "b", "defaults:\n  - db: null\n"))
    assert isinstance(got[0], Unresolved)      # no db key at all


# hostile inputs
def test_a_defaults_cycle_is_unresolved(tmp_path: Path) -> None:
    script = _my_app(tmp_path, "defaults:\n  - other\n")
    (tmp_path / "conf" / "other.yaml").write_text("defaults:\n  - config\n")
    got = _record(script)[0]
    assert isinstance(got, Unresolved) and "cycle" in got.reason


def test_an_interpolation_cycle_is_not_a_crash(tmp_path: Path) -> None:
    script = _my_app(tmp_path, "defaults:\n  - db: mysql\na: ${b}\nb: ${a}\n")
    assert _record(script)[:2] == ("mysql", "omry")


def test_ten_thousand_overrides_are_bounded(tmp_path: Path) -> None:
    got = _record(_my_app(tmp_path), *(f"+k{i}=1" for i in range(10_000)))[0]
    assert isinstance(got, Unresolved) and str(hydracompose.MAX_OVERRIDES) in got.reason


def test_non_utf8_yaml_is_unresolved_naming_the_file(tmp_path: Path) -> None:
    script = _my_app(tmp_path)
    (tmp_path / "conf" / "db" / "mysql.yaml").write_bytes(b"driver: \xff\xfe\n")
    got = _record(script)[0]
    assert isinstance(got, Unresolved) and "mysql.yaml" in got.reason


@pytest.mark.parametrize("decorator", [
    '@hydra.main(config_path=None, config_name="config")',
    '@hydra.main(config_name="config", version_base="1.3")',   # >= 1.2: config_path None
    '@hydra.main(config_path="/etc", config_name="config")',
    '@hydra.main(config_path="pkg://x.conf", config_name="config")',
    '@hydra.main(config_path=PATH, config_name="config")',
])
def test_config_path_hydra_or_the_text_does_not_give(tmp_path: Path, decorator: str) -> None:
    script = _my_app(tmp_path)
    script.write_text(_MY_APP.replace(
        '@hydra.main(version_base=None, config_path="conf", config_name="config")', decorator))
    assert isinstance(_record(script)[0], Unresolved)


def test_config_path_outside_the_job_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "db").mkdir(parents=True)
    (outside / "config.yaml").write_text("defaults:\n  - db: mysql\n")
    (outside / "db" / "mysql.yaml").write_text("driver: SECRET\nuser: x\n")
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    (job / "my_app.py").write_text(_MY_APP.replace('config_path="conf"',
                                                   'config_path="../outside"'))
    (job / "run.sh").write_text("python my_app.py\n")
    read = read_paths([str(job / "run.sh")], None)
    assert "SECRET" not in repr(read.facts)


def test_a_symlinked_config_out_of_the_job_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("driver: SECRET\nuser: x\n")
    job = tmp_path / "job"
    job.mkdir()
    (job / ".git").mkdir()
    _my_app(job)
    os.remove(job / "conf" / "db" / "mysql.yaml")
    os.symlink(secret, job / "conf" / "db" / "mysql.yaml")
    (job / "run.sh").write_text("python my_app.py\n")
    read = read_paths([str(job / "run.sh")], None)
    assert "SECRET" not in repr(read.facts)


def test_instantiate_of_a_target_is_that_call(tmp_path: Path) -> None:
    script = _my_app(tmp_path, "defaults:\n  - db: mysql\nrecipe:\n  _target_: "
                     "transformer_engine.common.recipe.MXFP8BlockScaling\n  margin: 0\n")
    script.write_text(_MY_APP.replace(
        "record(cfg.db.driver, cfg.db.user, cfg.get(\"x\"), cfg.db.get(\"user\", 1), "
        "cfg.get(\"fp8\", True),\n           OmegaConf.to_container(cfg.db, resolve=True))",
        "record(hydra.utils.instantiate(cfg.recipe), hydra.utils.get_class(cfg.db.driver))"))
    made, cls = _record(script)
    assert isinstance(made, Call) and made.name == "MXFP8BlockScaling" and made.kwargs == {
        "margin": 0}
    assert cls == Ref("mysql")


def test_nemo_hydra_runner_binds_the_same_way(tmp_path: Path) -> None:
    script = _my_app(tmp_path)
    text = _MY_APP.replace("import hydra\n", "from nemo.core.config import hydra_runner\n")
    script.write_text(text.replace(
        '@hydra.main(version_base=None, config_path="conf", config_name="config")',
        '@hydra_runner(config_path="conf", config_name="config")'))
    assert _record(script, "db=postgresql")[0] == "postgresql"
    script.write_text(text.replace(
        '@hydra.main(version_base=None, config_path="conf", config_name="config")',
        '@hydra_runner(config_name="config")'))
    assert isinstance(_record(script)[0], Unresolved)     # its default path is not one value


def test_a_plain_dicts_keys_are_no_attributes(tmp_path: Path) -> None:
    script = tmp_path / "t.py"
    script.write_text('d = {"fp8": True}\nrecord(d.fp8, d["fp8"])\n')
    got = _record(script)
    assert isinstance(got[0], Unresolved) and got[1] is True


def test_a_global_package_header_merges_at_the_top(tmp_path: Path) -> None:
    script = _my_app(tmp_path, "defaults:\n  - db: mysql\n  - exp: fp8\n")
    (tmp_path / "conf" / "exp").mkdir()
    (tmp_path / "conf" / "exp" / "fp8.yaml").write_text("# @package _global_\ndb:\n  user: fp8\n")
    assert _record(script)[:2] == ("mysql", "fp8")
    (tmp_path / "conf" / "exp" / "fp8.yaml").write_text("# @package foo.bar\ndb:\n  user: x\n")
    got = _record(script)[0]
    assert isinstance(got, Unresolved) and "@package" in got.reason


@pytest.mark.parametrize("argv", [("db=../../secret",), ("--config-name", "../../secret")])
def test_a_config_name_leaving_the_config_folder_is_not_read(tmp_path: Path,
                                                             argv: tuple[str, ...]) -> None:
    (tmp_path / "secret.yaml").write_text("driver: SECRET\nuser: x\ndb:\n  driver: SECRET\n")
    (tmp_path / "job").mkdir()
    got = _record(_my_app(tmp_path / "job"), *argv)[0]
    assert isinstance(got, Unresolved) and "outside the config folder" in got.reason


def test_a_huge_defaults_list_is_unresolved_not_cut(tmp_path: Path) -> None:
    entries = "".join(f"  - optional g{i}: x\n" for i in range(100))   # 10,000: parse refuses
    got = _record(_my_app(tmp_path, "defaults:\n  - db: mysql\n" + entries))[0]
    assert isinstance(got, Unresolved) and "defaults list" in got.reason


def test_a_primary_config_in_a_folder_names_its_siblings(tmp_path: Path) -> None:
    script = _my_app(tmp_path)
    (tmp_path / "conf" / "exp").mkdir()
    (tmp_path / "conf" / "exp" / "run.yaml").write_text("defaults:\n  - base\n  - _self_\n"
                                                        "db:\n  user: run\n")
    (tmp_path / "conf" / "exp" / "base.yaml").write_text("db:\n  driver: base\n  user: b\n")
    assert _record(script, "--config-name", "exp/run")[:2] == ("base", "run")
