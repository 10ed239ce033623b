"""``config.*``: normalized values read from the job's config files (producers:
preflight/frameworks/, preflight/jobs/).

``config.<kind>.<path>`` mirrors the file's own key path after normalization (kind is one of
``preflight.frameworks.KINDS``, one module each). ``config.accelerate.cli.<key>`` is a
setting given as an ``accelerate launch`` flag (also in ``config.accelerate.<key>``);
``config.accelerate.accelerator.<arg>`` an argument the script's code passes to ``Accelerator()``
(``accelerator.fp8_backend``: the backend a recipe handler in its ``kwargs_handlers`` selects;
``accelerator.prepare_apart``: a ``prepare()`` call that takes a model without its optimizer).
``config.<kind>.replaced.<path>`` is the value a launch line or parent file gave a setting that a
file replacing its values (a script the launch line runs, a ``--yaml-cfg``) set differently.
Provenance of each value is ``file:line``. Normalizations (documented in the readers):
Megatron flags by flag name (``--fp8-format`` -> ``config.megatron.fp8_format``, bare flag ->
true, ``--no-x`` -> ``no_x = true``); llm-foundry ``${...}`` resolved, ``model.fc_type`` always
the name string (mapping form: ``model.fc_type_kwargs.*`` and ``model.fc_type_is_mapping``);
Lightning ``trainer.strategy`` given as ``{class_path: ...}`` also as its class_path string.
Beside the Megatron settings, ``config.megatron.args_of`` names the framework that hands them to
Megatron (slime, AReaL, ROLL; absent for a Megatron-LM job of its own) and
``config.megatron.validated_args`` says whether Megatron-LM's ``validate_args`` runs on them
(the ``config.<kind>.validated_args`` spec below).
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("config.files", "list", "Config files read, each {path, kind}"),
    F("config.kinds", "list", "Kinds of config detected among the files read"),
    F("config.unrecognised", "list", "Files read as --kind said although none of that "
      "framework's settings is in them: what the job asks for (FP8 included) is undetermined"),
    # before the catch-all below: the first template a name matches gives its type
    F("config.<kind>.validated_args", "bool", "Whether Megatron-LM's own argument checks "
      "(megatron/training/arguments.py validate_args) run on the Megatron settings of the job, "
      "stated beside them by every reader that states Megatron's settings (the only kind "
      "with this key): true for a Megatron-LM launch line and slime, false where they reach "
      "Megatron-Core another way (ROLL's mcore_adapter, AReaL's Megatron engine, --yaml-cfg: "
      "validate_yaml instead), Unknown naming why; rules citing a validate_args check are "
      "gated on it (preflight/frameworks/megatron_validated.py)"),
    F("config.<kind>.<path...>", "any", "A normalized value from a config file of that kind"),
)
