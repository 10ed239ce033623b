"""verl's trainer entry points and the Hydra configs shipped beside them (not in a job folder).

A verl job is started by a module that declares ``@hydra.main(config_path="config",
config_name=...)``: verl's own ``verl.trainer.main_ppo`` and ``verl.experimental.<x>.*main*``,
and the recipes of verl-recipe (checked out as ``recipe/`` inside verl, and verl's own
``recipe/`` before it moved out), run as ``python3 -m recipe.dapo.main_dapo``. Their configs
are files of the installed package or of that checkout, so a job folder never holds them;
what fp8-doctor needs from them is which packaged trainer config they stand on
(``defaults: [ppo_trainer | ppo_megatron_trainer, _self_]``): none of those below sets a key
:data:`preflight.frameworks.verl.PACKAGED` answers (the engine, the rollout quantization,
the Megatron sizes, remove-padding, rollout_is), read at the commits cited.
"""

from __future__ import annotations

import re

# a module that runs verl's PPO trainer: verl/trainer/main_ppo, verl/experimental/<x>/*main*,
# recipe/<x>[/<y>]/*main* run from verl's folder (verl-recipe 48ea0a79: dapo/main_dapo.py,
# gkd/megatron/main_gkd.py, spo/spo_main_ppo.py ...); main_eval / main_generation score or
# generate, they do not train
ENTRY = re.compile(
    r"(?:^|[/.])(?:verl[./]trainer[./](?:main_ppo|sft_trainer(?:_ray)?)|"
    r"verl[./]experimental[./]\w+[./]\w*main\w*)"
    r"(?:\.py)?$|(?:^|verl/)recipe[./](?:\w+[./]){1,3}(?!main_eval|main_generation)\w*main\w*"
    r"(?:\.py)?$")
HINT = re.compile(r"verl[./]trainer[./](?:main_ppo|sft_trainer\b|sft_trainer_ray)|verl[./]experimental[./]\w+[./]\w*main"
                  r"|(?:(?<![\w/.-])|(?<=verl/))recipe[./](?:\w+[./]){1,3}"
                  r"(?!main_eval|main_generation)\w*main")

_VERL = "verl b178a3cd (2026-01-29)"
_RECIPE = "verl-recipe 4da0651e"

# the config_name each module's @hydra.main declares (used without --config-name)
HYDRA_MAIN: dict[str, str] = {
    "verl/trainer/main_ppo": "ppo_trainer.yaml",
    "verl/experimental/fully_async_policy/fully_async_main": "fully_async_ppo_trainer.yaml",
    "verl/experimental/one_step_off_policy/main_ppo": "one_step_off_ppo_trainer.yaml",
    "verl/experimental/transfer_queue/main_ppo": "ppo_trainer.yaml",
    "recipe/dapo/main_dapo": "dapo_trainer.yaml",
    # verl v0.9.0 sft_trainer.py l.460, sft_trainer_ray.py l.388 (verl_sft.py)
    "verl/trainer/sft_trainer": "sft_trainer_engine.yaml",
    "verl/trainer/sft_trainer_ray": "sft_trainer_engine.yaml",
}

# (folder of the module, config file under its config/) -> (packaged trainer config it stands
# on, where that was read)
SHIPPED: dict[tuple[str, str], tuple[str, str]] = {
    ("verl/trainer", "ppo_trainer.yaml"): ("ppo_trainer", "verl v0.9.0 ppo_trainer.yaml"),
    ("verl/trainer", "sft_trainer_engine.yaml"): (
        "sft_trainer_engine", "verl v0.9.0 sft_trainer_engine.yaml (defaults: engine@engine: "
                              "fsdp)"),
    ("verl/trainer", "ppo_megatron_trainer.yaml"): (
        "ppo_megatron_trainer", "verl v0.9.0 ppo_megatron_trainer.yaml"),
    ("verl/experimental/fully_async_policy", "fully_async_ppo_trainer.yaml"): (
        "ppo_trainer", f"{_VERL} verl/experimental/fully_async_policy/config/"
                       "fully_async_ppo_trainer.yaml (defaults: ppo_trainer)"),
    ("verl/experimental/fully_async_policy", "fully_async_ppo_megatron_trainer.yaml"): (
        "ppo_megatron_trainer", f"{_VERL} verl/experimental/fully_async_policy/config/"
                                "fully_async_ppo_megatron_trainer.yaml (defaults: "
                                "ppo_megatron_trainer)"),
    ("verl/experimental/one_step_off_policy", "one_step_off_ppo_trainer.yaml"): (
        "ppo_trainer", f"{_VERL} verl/experimental/one_step_off_policy/config/"
                       "one_step_off_ppo_trainer.yaml (defaults: ppo_trainer)"),
    ("verl/experimental/one_step_off_policy", "one_step_off_ppo_megatron_trainer.yaml"): (
        "ppo_megatron_trainer", f"{_VERL} verl/experimental/one_step_off_policy/config/"
                                "one_step_off_ppo_megatron_trainer.yaml (defaults: "
                                "ppo_megatron_trainer)"),
    ("recipe/dapo", "dapo_trainer.yaml"): (
        "ppo_trainer", f"{_RECIPE} dapo/config/dapo_trainer.yaml (defaults: ppo_trainer)"),
    ("recipe/dapo", "dapo_megatron_trainer.yaml"): (
        "ppo_megatron_trainer", f"{_RECIPE} dapo/config/dapo_megatron_trainer.yaml (defaults: "
                                "ppo_megatron_trainer)"),
}


def module_path(entry: str) -> str:
    """``recipe.dapo.main_dapo`` / ``recipe/dapo/main_dapo.py`` -> ``recipe/dapo/main_dapo``
    (from its ``verl/`` or ``recipe/`` part on)."""
    path = entry.removesuffix(".py").replace(".", "/") if not entry.endswith(".py") else \
        entry.removesuffix(".py")
    at = max(path.rfind("verl/trainer/"), path.rfind("verl/experimental/"))
    if at < 0:
        hit = re.search(r"(?:^|/)(recipe/)", path)
        at = hit.start(1) if hit else 0
    return path[at:]


def shipped(entry: str, cpath: str, file: str) -> tuple[str, str] | None:
    """(packaged trainer config, source) when ``--config-path CPATH --config-name FILE`` of the
    module ``entry`` names a config verl or verl-recipe ships, else None."""
    if cpath.rstrip("/") != "config":
        return None
    folder = module_path(entry).rpartition("/")[0]
    return SHIPPED.get((folder, file))
