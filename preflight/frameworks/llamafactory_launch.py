"""LLaMA-Factory launch lines: ``llamafactory-cli train X.yaml [key=value ...]`` (or ``lmf``; v1's
``sft`` / ``dpo`` / ``rm`` too), and
LLaMA-Factory's ``src/train.py`` run by ``accelerate launch`` / ``torchrun`` / ``python`` with a
YAML or with TrainingArguments-style ``--flags`` (issue 22 item 3: a wrapper read as itself, so
its stack -- LLaMA-Factory on the HF Trainer on accelerate -- and its defaults apply).

How LLaMA-Factory reads its arguments (hparams/parser.py ``read_args`` l.68-82 at v0.9.4): a
first argument ending in ``.yaml`` / ``.yml`` / ``.json`` is loaded with OmegaConf and the rest
merged over it as a dotlist (``OmegaConf.from_cli``: ``key=value``); otherwise every argument goes
to ``HfArgumentParser`` as ``--flag value``. ``llamafactory-cli train`` runs the same arguments
(launcher.py l.38-155: ``run_exp``, or ``torchrun ... launcher.py`` with them on several GPUs).

Which script is LLaMA-Factory's: ``.../LLaMA-Factory/src/train.py`` (any spelling of the checkout
folder), ``llamafactory/launcher.py``, or any script whose arguments LLaMA-Factory alone takes
(``--stage`` with one of its stages, ``--finetuning_type``), as its YAML reader's ``score`` decides
for a file. Its flags become ``config.llamafactory.<flag>`` (what its YAML gives), the YAML is
linked as a LLaMA-Factory config, and the ``key=value`` words after it win over that file.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.reading import launch
from preflight.reading.parse import usable_key
from preflight.reading.types import ReaderOutput

KIND = "llamafactory"
# The sub-commands that train. v0's launcher (src/llamafactory/launcher.py l.60, 154 at v0.9.5
# 7af90952) takes `train`; with USE_V1=1, cli.py hands the line to v1's launcher, whose
# _DIST_TRAIN_COMMANDS are train, sft, dpo and rm (src/llamafactory/v1/launcher.py l.31, 142-155
# at v0.9.5 and at ff6d4d12: train/sft -> run_sft, dpo -> run_dpo, rm -> run_rm); its guide
# launches with `sft`. Both names are the same entry point (pyproject.toml [project.scripts]
# l.78-80 at v0.9.5). `sft`/`dpo`/`rm` without USE_V1 is v0's "Unknown command" (no run): still
# read as the job's launch line, since which launcher runs is the environment's.
VERBS = ("train", "sft", "dpo", "rm")
_CLI = launch.BIN + r"(?:llamafactory-cli|lmf)[ \t]+"   # also by path: .../bin/lmf
COMMAND = re.compile(_CLI + r"(?:" + "|".join(VERBS) + r")\b")
# the commands that do not train (v0 launcher.py l.136-164, v1 launcher.py l.123-140 at v0.9.5):
# the YAML each names belongs to the job (a folder scan must not take `llamafactory-cli export
# merge.yaml` for a second job) but is not its config
OTHER = re.compile(_CLI + r"(?:api|chat|eval|export|merge|webchat|webui)\b")
TRAINS = tuple((cli, verb) for cli in ("llamafactory-cli", "lmf") for verb in VERBS)
"""Its commands that train (:data:`OTHER` do not): :attr:`Launch.trains`."""
SCRIPT = re.compile(r"(?i)(?:^|/)(?:llama[-_]?factory[^/]*/src/train|llamafactory/launcher)\.py$")
STAGES = frozenset({"pt", "sft", "rm", "ppo", "dpo", "kto"})
_CONFIG = (".yaml", ".yml", ".json")
_DOTLIST = re.compile(r"^([A-Za-z_][\w.]*)=(.*)$", re.S)
# What `fp8: true` with `fp8_backend: te` hands accelerate (v0.9.5 7af9095 train/fp8_utils.py
# patch_accelerator_for_fp8): Accelerator.__init__ patched to pass this handler (TERecipeKwargs
# where accelerate has it, from 1.4.0; FP8RecipeKwargs(backend="TE") before) and
# mixed_precision="fp8".
TE_HANDLER = {"fp8_format": "HYBRID", "amax_history_len": 16, "amax_compute_algo": "max"}


def te_handler_facts(fp8: Any, backend: Any) -> dict[str, Any]:
    """The accelerate settings ``fp8: true`` amounts to. With ``fp8_backend: te``: the handler
    and backend of the patched ``Accelerator.__init__`` (above). With any other backend: only
    ``ACCELERATE_MIXED_PRECISION=fp8``, which LLaMA-Factory puts in the training process's own
    environment before the Trainer builds its Accelerator (train/fp8_utils.py
    configure_fp8_environment: l.123 at v0.9.4, l.134 at v0.9.5; FP8_BACKEND, which it also sets,
    is a name accelerate never reads), with no recipe handler: accelerate's rules on that
    variable (FP8D-ACC-0001 under DeepSpeed) reach the job through ``env.*``. (The te path sets
    it too, but passes ``mixed_precision="fp8"`` and its handler in code.)"""
    if fp8 is not True:
        return {}
    if str(backend or "").lower() != "te":
        return {"env.ACCELERATE_MIXED_PRECISION": "fp8"}
    acc = "config.accelerate"
    return {f"{acc}.kwargs_handlers": ["TERecipeKwargs"], f"{acc}.fp8_config.backend": "TE",
            **{f"{acc}.kwargs_handlers.TERecipeKwargs.{k}": v for k, v in TE_HANDLER.items()}}


def launched(script: str, words: list[launch.Token], variables: dict[str, str]) -> bool:
    """Whether ``script`` run with ``words`` is LLaMA-Factory's training entry point."""
    if SCRIPT.search(script):
        return True
    found, _ = launch.flags(words, set(), stop_at_positional=False)
    given = {flag: launch.value(raw, variables) for flag, raw, _ in found}
    return str(given.get("stage")) in STAGES or "finetuning_type" in given


def script_args(out: launch.Out, words: list[launch.Token], variables: dict[str, str]) -> None:
    """LLaMA-Factory's arguments -> ``config.llamafactory.*`` (a YAML first: linked, its
    ``key=value`` overrides here; else ``--flags``); ``--deepspeed ds.json`` is followed."""
    first = str(launch.value(words[0][0], variables)) if words else ""
    if words and not first.startswith("-") and first.lower().endswith(_CONFIG):
        out.link(first, KIND, words[0][1], "train.py CONFIG")
        for word, pos in words[1:]:
            match = _DOTLIST.match(word)
            if match and usable_key(match.group(1)):
                out.put(f"config.{KIND}.{match.group(1)}",
                        launch.value(match.group(2), variables), pos)
        return
    found, _ = launch.flags(words, set(), stop_at_positional=False)
    out.put_flags(found, KIND, variables, follow={"deepspeed": ".json"})
    at = next((p for f, _, p in found if f == "fp8_backend"),
              next((p for f, _, p in found if f == "fp8"), 0))
    for name, value in te_handler_facts(out.facts.get(f"config.{KIND}.fp8"),
                                        out.facts.get(f"config.{KIND}.fp8_backend")).items():
        out.put(name, value, at)


def read(path: str, text: str, outer: dict[str, str] | None = None) -> ReaderOutput:
    """The first ``llamafactory-cli train`` line of a launch script; the YAML of any other
    ``llamafactory-cli`` command (export, chat, ...) linked as not the job's config."""
    return launch.read_tool_script(path, text, outer, train=COMMAND, other=OTHER, kind=KIND,
                                   key="llamafactory-cli", train_args=script_args,
                                   config_ends=_CONFIG)
