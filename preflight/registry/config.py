"""``config.*``: normalized values read from the job's config files (producers:
preflight/frameworks/, preflight/jobs/).

``config.<kind>.<path>`` mirrors the file's own key path after normalization (kind is one of
``preflight.frameworks.KINDS``, one module each). ``config.accelerate.cli.<key>`` is a
setting given as an ``accelerate launch`` flag (also in ``config.accelerate.<key>``);
``config.accelerate.accelerator.<arg>`` an argument the script's code passes to ``Accelerator()``
(``accelerator.fp8_backend``: the backend a recipe handler in its ``kwargs_handlers`` selects;
``accelerator.prepare_apart``: a ``prepare()`` call that takes a model without its optimizer;
``accelerator.built``: the script builds an ``Accelerator``, whatever its arguments).
``config.<kind>.replaced.<path>`` is the value a launch line or parent file gave a setting that a
file replacing its values (a script the launch line runs, a ``--yaml-cfg``) set differently.
Provenance of each value is ``file:line``. Normalizations (documented in the readers):
Megatron flags by flag name (``--fp8-format`` -> ``config.megatron.fp8_format``, bare flag ->
true, ``--no-x`` -> ``no_x = true``); llm-foundry ``${...}`` resolved, ``model.fc_type`` always
the name string (mapping form: ``model.fc_type_kwargs.*`` and ``model.fc_type_is_mapping``);
Lightning ``trainer.strategy`` given as ``{class_path: ...}`` also as its class_path string.
Beside the Megatron settings, ``config.megatron.args_of`` names the framework that hands them to
Megatron (slime, AReaL, ROLL; absent for a Megatron-LM job of its own) and
``config.megatron.validated_args`` says whether Megatron-LM's ``validate_args`` runs on them,
``config.megatron.parsed_args`` whether its argument parser reads them and
``config.megatron.drops_unknown`` whether a setting the installed release lacks is dropped
rather than refused (the specs below).
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("config.files", "list", "Config files read, each {path, kind}"),
    F("config.kinds", "list", "Kinds of config detected among the files read"),
    F("config.unrecognised", "list", "Files read as --kind said although none of that "
      "framework's settings is in them: what the job asks for (FP8 included) is undetermined"),
    # before the catch-all below: the first template a name matches gives its type
    F("config.<kind>.layers", "list", "The files a launch line composes into the config, in "
      "merge order, each {section, path} (path empty for one not read): prime-rl's `uv run rl "
      "@ a.toml --trainer @ t.toml`; check --diff places an edit in the file that owns the key "
      "(preflight/fixdiff/layers.py)"),
    F("config.<kind>.validated_args", "bool", "Whether Megatron-LM's own argument checks "
      "(megatron/training/arguments.py validate_args) run on the Megatron settings of the job, "
      "stated beside them by every reader that states Megatron's settings (the only kind "
      "with this key): true for a Megatron-LM launch line and slime, false where they reach "
      "Megatron-Core another way (ROLL's mcore_adapter, AReaL's Megatron engine, --yaml-cfg: "
      "validate_yaml instead), Unknown naming why; rules citing a validate_args check are "
      "gated on it (preflight/frameworks/megatron_validated.py)"),
    F("config.<kind>.parsed_args", "bool", "Whether Megatron-LM's argument parser "
      "(megatron/training/arguments.py parse_args: argparse with Megatron's flags and their "
      "choices) reads the Megatron settings of the job: true for a Megatron-LM launch line "
      "(--yaml-cfg too) and slime, false for ROLL, AReaL and a job script that imports only "
      "megatron.core, Unknown naming why (a script not in the job); FP8D-MEG-0006 is gated on "
      "it (preflight/frameworks/megatron_validated.py)"),
    F("config.<kind>.drops_unknown", "bool", "Whether a Megatron setting the installed "
      "megatron-core lacks is dropped without stopping the job (parse_known_args: slime from "
      "v0.2.3, ignore_unknown_args=True; ROLL and AReaL set only the fields Megatron-Core's "
      "config has) rather than refused by argparse (preflight/frameworks/megatron_validated.py)"),
    F("config.<kind>.post_init_sees_fp8", "bool", "False where Megatron-Core's "
      "TransformerConfig.__post_init__ never checks the FP8 settings stated beside it (AReaL "
      "sets them by setattr after the config is built); absent where it does (Megatron-LM, "
      "slime, ROLL); FP8D-MEG-0014 is gated on it (preflight/frameworks/megatron_validated.py)"),
    F("config.<kind>.<path...>", "any", "A normalized value from a config file of that kind"),
)
