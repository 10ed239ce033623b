"""``config.megatron.validated_args``: whether Megatron-LM's own argument checks run on a job's
Megatron settings (issue 23: rules that must not misfire).

Several Megatron rules cite a check in ``megatron/training/arguments.py`` ``validate_args``
(FP8D-MEG-0001: ``--fp8-param-gather`` needs the distributed optimizer). That function runs only
where ``megatron.training`` parses the arguments; a framework that builds Megatron-Core's
``TransformerConfig`` / ``DistributedDataParallelConfig`` itself never runs it, so those rules
would report a refusal that never comes. Checks inside Megatron-Core itself
(``TransformerConfig.__post_init__``, ``DistributedDataParallelConfig.__post_init__``, TE layers)
run whoever builds the config: their rules are not gated on this fact.

Each producer of ``config.megatron.*`` states it, read at a tag:

- **Megatron-LM** (``pretrain_*.py``): ``parse_and_validate_args`` runs ``validate_args``
  (megatron/training/arguments.py:87-107 @ core_v0.19.0; initialize.py:84-88 @ core_v0.13.0)
  -- except with ``--yaml-cfg``, where ``validate_yaml`` runs instead
  (megatron/training/yaml_arguments.py), which has none of the FP8 / FP4 checks (read at
  core_v0.13.0 and core_v0.19.0): false there.
- **slime**: ``parse_args`` calls Megatron's ``validate_args`` unless ``--debug-rollout-only``
  (slime/utils/arguments.py:1584-1585 and slime/backends/megatron_utils/arguments.py:72-75 @
  v0.3.1; arguments.py:1239-1240 @ v0.2.0, unconditionally for the Megatron backend).
- **ROLL**: never imports ``megatron.training`` at v0.3.0 (``git grep megatron.training``: no
  hit); mcore_adapter's ``TrainingArguments.__post_init__`` re-checks only
  ``overlap_param_gather`` (mcore_adapter/src/mcore_adapter/training_args.py:399-405), none of
  the FP8 / FP4 checks; ``McaModelConfig`` runs ``TransformerConfig.__post_init__`` after the
  arguments are set (models/model_config.py:181-186, 388).
- **AReaL**: never imports ``megatron.training`` at 4aef98d8 (nor v1.0.4, v0.5.3); its Megatron
  engine builds the model through mbridge (``get_model``, "copied from
  megatron/training/training.py but remove args", mbridge/core/util.py:41-45 @ 310e8fb, the
  commit AReaL pins) or Megatron-Bridge's model provider (v0.4.0, pinned), neither of which
  validates arguments; AReaL checks none of the FP8 / FP4 conditions itself (only FP8 training
  needs FP8 weights, megatron_engine.py:1188-1208, FP8D-AREAL-0001).
- **a job's own script** (``torchrun train.py --fp8-format hybrid``): its imports decide
  (:mod:`.megatron_script`): ``megatron.training`` validates, only ``megatron.core`` does not
  (its own argparse reads the flags), unreadable imports leave it Unknown.

``config.megatron.parsed_args`` is the step before: whether Megatron-LM's argument *parser*
(``parse_args``: argparse with Megatron's flags and their ``choices``) reads the settings, the
evidence of FP8D-MEG-0006 ("unrecognized arguments", "invalid choice"). It runs for every
Megatron-LM launch line, ``--yaml-cfg`` included (arguments.py:87-88 parses the command line
before validate_yaml @ core_v0.19.0), and for slime (Megatron's ``parse_args`` with slime's
flags added, slime/backends/megatron_utils/arguments.py:184-186 @ v0.3.1, even with
``--debug-rollout-only``); not for ROLL, AReaL, nor a job script importing only
``megatron.core``. ``config.megatron.drops_unknown`` is true where a Megatron setting the
installed release lacks is dropped instead of stopping the job: a parser that is
``parse_known_args`` (``ignore_unknown_args=True``, arguments.py:128-131 @ core_v0.19.0) --
slime from v0.2.3 (megatron_utils/arguments.py:97 @ v0.2.3, :186 @ v0.3.1; v0.2.0-v0.2.2 call
``parse_args`` as Megatron-LM does), a job script passing ``ignore_unknown_args=True`` --, and
ROLL and AReaL, which set only the config fields the installed Megatron-Core has
(mcore_adapter models/model_config.py:141-143 @ ROLL v0.3.0; megatron_engine.py:1175-1180 @
AReaL 4aef98d8, with a log warning).

``config.megatron.post_init_sees_fp8`` is false where Megatron-Core's ``TransformerConfig.
__post_init__`` never checks the FP8 settings stated here: AReaL (4aef98d8) lets its bridge build
the config first, then sets the FP8 fields by ``setattr`` (megatron_engine.py:338-368,
1154-1180), and takes ``fp8_param`` from ``fp8_config.param`` (which always comes with a mode),
not from ``ddp.fp8_param_gather``. Absent elsewhere: Megatron-LM and slime build the config with
them (``core_transformer_config_from_args``), ROLL runs ``__post_init__`` after copying them
(mcore_adapter models/model_config.py:181-186 @ v0.3.0). Rules citing a ``__post_init__`` FP8
check whose failure does not come later either are gated on it (FP8D-MEG-0014).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from preflight.facts import Unknown
from preflight.frameworks.megatron_script import Entry

NAME = "config.megatron.validated_args"
PARSED = "config.megatron.parsed_args"
DROPS = "config.megatron.drops_unknown"
POST_INIT = "config.megatron.post_init_sees_fp8"

ROLL = (False, "ROLL v0.3.0: mcore_adapter builds Megatron-Core's configs itself and never "
               "imports megatron.training (training_args.py:399-405 re-checks only "
               "overlap_param_gather): Megatron-LM's validate_args does not run")
AREAL = (False, "AReaL 4aef98d8: the Megatron engine builds the model through mbridge / "
                "Megatron-Bridge's model provider and never imports megatron.training: "
                "Megatron-LM's validate_args does not run")
ROLL_PARSED = (False, "ROLL v0.3.0: mcore_adapter sets Megatron-Core's config fields from its own "
                      "dataclass (models/model_config.py:141-156) and never imports "
                      "megatron.training: Megatron-LM's parse_args does not run")
ROLL_DROPS = (True, "ROLL v0.3.0 mcore_adapter models/model_config.py:141-143: a setting "
                    "Megatron-Core's config lacks (not hasattr) is skipped")
AREAL_DROPS = (True, "AReaL 4aef98d8 areal/engine/megatron_engine.py:1175-1180: an FP8 field "
                     "TransformerConfig lacks is skipped with a log warning")
AREAL_POST_INIT = (False, "AReaL 4aef98d8: the bridge builds TransformerConfig (its __post_init__ "
                          "runs) before the engine sets the FP8 fields on it by setattr "
                          "(megatron_engine.py:338-368, 1154-1180; mbridge bridge.py:57 @ "
                          "310e8fb), and fp8_param comes from fp8_config.param, not "
                          "ddp.fp8_param_gather")
AREAL_PARSED = (False, "AReaL 4aef98d8: the Megatron engine sets Megatron-Core's configs from "
                       "its own dataclasses and never imports megatron.training: Megatron-LM's "
                       "parse_args does not run")
_YAML = ("megatron/training/arguments.py:101-107 @ core_v0.19.0 (initialize.py:84-88 @ "
         "core_v0.13.0): with --yaml-cfg, validate_yaml runs instead of validate_args, without "
         "its FP8 / FP4 checks")


def megatron_lm(facts: Mapping[str, Any], prov: Mapping[str, str], prefix: str,
                entry: Entry | None = None, yaml_on_launch: Any = None
                ) -> dict[str, tuple[Any, str]]:
    """``validated_args``, ``parsed_args`` and ``drops_unknown`` with their provenance
    for a Megatron-LM launch line or argument file read under ``prefix``: the training script it
    runs (``entry``, :mod:`.megatron_script`; None: no script, an argument file) decides whether
    Megatron-LM's parser runs at all, ``--yaml-cfg`` whether validate_args does
    (``yaml_on_launch``: whether the launches that run carry it, :func:`.megatron_script.carried`;
    None: not known apart from the text, whose ``--yaml-cfg`` then decides)."""
    if entry is not None and entry.parsed is not True:
        why = entry.parsed
        if isinstance(why, Unknown):
            return {NAME: (why, entry.source), PARSED: (why, entry.source)}
        return {NAME: (False, entry.source), PARSED: (False, entry.source)}
    where = entry.source if entry is not None else next(iter(prov.values()), "config")
    ignores = entry.ignores_unknown if entry is not None else False
    return {NAME: _validated(facts, prov, prefix, where, yaml_on_launch), PARSED: (True, where),
            DROPS: (ignores, where)}


def _validated(facts: Mapping[str, Any], prov: Mapping[str, str], prefix: str, where: str,
               yaml_on_launch: Any = None) -> tuple[Any, str]:
    """validate_args runs where Megatron-LM parses the flags, unless ``--yaml-cfg`` is on the
    launch that runs (an echoed or dead one is no argument: redteam6)."""
    key = f"{prefix}.yaml_cfg"
    if key not in facts or yaml_on_launch is False:
        return True, where
    if isinstance(yaml_on_launch, Unknown):
        return Unknown(f"whether --yaml-cfg is given decides whether validate_args runs "
                       f"({_YAML}): {yaml_on_launch.reason}"), prov.get(key, "config")
    value = facts[key]
    if isinstance(value, Unknown):
        return Unknown(f"whether --yaml-cfg is given decides whether validate_args runs "
                       f"({_YAML}); its value is not known: {value.reason}"), prov.get(key, "config")
    return False, _source(prov.get(key), _YAML)


def yaml_file(model_args: bool, source: str) -> tuple[Any, str]:
    """A Megatron YAML read alone: a functional-test case (``MODEL_ARGS``: command-line flags,
    validated) or a ``--yaml-cfg`` file (validate_yaml: not)."""
    return (True, source) if model_args else (False, _source(source, _YAML))


def slime(facts: Mapping[str, Any], prov: Mapping[str, str], prefix: str,
          on_launch: Any = None) -> tuple[Any, str]:
    """slime validates Megatron's arguments unless it only rolls out (``--debug-rollout-only``,
    slime/utils/arguments.py:1584 @ v0.3.1: then no Megatron training runs at all);
    ``on_launch``: whether the launches that run carry it (None: the text's flag decides)."""
    key = f"{prefix}.debug_rollout_only"
    value = facts.get(key)
    if on_launch is False:
        value = None            # an echoed or dead --debug-rollout-only (redteam6)
    elif isinstance(on_launch, Unknown):
        value = on_launch
    if isinstance(value, Unknown):
        return Unknown(f"--debug-rollout-only decides whether slime runs Megatron's "
                       f"validate_args (slime/utils/arguments.py:1584 @ v0.3.1): "
                       f"{value.reason}"), prov.get(key, "config")
    if value is True:
        return False, _source(prov.get(key), "slime v0.3.1 slime/utils/arguments.py:1584: "
                                             "--debug-rollout-only skips Megatron's "
                                             "validate_args")
    return True, "slime v0.3.1 slime/utils/arguments.py:1584-1585 (Megatron's validate_args)"


SLIME_PARSED = (True, "slime v0.3.1 slime/backends/megatron_utils/arguments.py:184-186: "
                      "Megatron-LM's parse_args with slime's flags added")
SLIME_DROPS = (True, "slime v0.3.1 slime/backends/megatron_utils/arguments.py:186 (v0.2.3: "
                       ":97): parse_args(..., ignore_unknown_args=True), parse_known_args: a "
                       "flag Megatron lacks is dropped (v0.2.0-v0.2.2 refused it)")


def _source(source: str | None, why: str) -> str:
    """``source`` (a file:line) when known, else the reason as text."""
    return source if source is not None else why
