"""accelerate: ``Accelerator(mixed_precision=..., kwargs_handlers=[...])`` in a job's script, as
the ``config.accelerate.*`` facts the YAML and launch flags also give (split from
:mod:`.accelerate`, which re-exports :func:`read_python` and derives intent from them): the
recipe handlers passed in code and the backend each selects, the plugins
(:mod:`.accelerate_plugins`) and what each ``accelerator.prepare()`` takes
(:mod:`.accelerate_prepare`).
"""

from __future__ import annotations

import re

from preflight.frameworks.accelerate_plugins import plugins
from preflight.frameworks.accelerate_prepare import prepare_calls
from preflight.reading.pyfacts import PyOut
from preflight.reading.pysource import Call, Module, Ref, Unresolved
from preflight.reading.types import ReaderOutput

KIND = "accelerate"

# Recipe handlers (accelerate v1.14.0 09228237 utils/dataclasses.py): the backend each selects.
HANDLERS = {"TERecipeKwargs": "TE", "AORecipeKwargs": "AO", "MSAMPRecipeKwargs": "MSAMP",
             "FP8RecipeKwargs": None}
PY_HINT = re.compile(r"\bAccelerator\b")


def read_python(module: Module) -> ReaderOutput:
    """``Accelerator(mixed_precision=..., kwargs_handlers=[TERecipeKwargs(...)])`` in a script.

    ``mixed_precision`` given to ``Accelerator`` beats ``ACCELERATE_MIXED_PRECISION`` (what
    ``accelerate launch --mixed_precision`` exports; state.py reads the variable only when the
    argument is None), so it is ``config.accelerate.mixed_precision`` at this line. A recipe
    handler is ``config.accelerate.kwargs_handlers`` (the class names) with its fields under
    ``config.accelerate.kwargs_handlers.<Class>.<field>`` (not ``fp8_config.*``: a handler in code
    is not the YAML's recipe; FP8D-ACC-0012 reads both), and the backend it selects is
    ``config.accelerate.fp8_config.backend``. ``AORecipeKwargs(config=Float8LinearConfig.
    from_recipe_name("rowwise"))`` gives ``recipe_name``; a ``module_filter_func`` is noted."""
    out = PyOut(module)
    for call, _ in out.calls():
        if not any(n.split(".")[0] == "accelerate" and n.endswith(".Accelerator")
                   for n in module.lineage(call.func)):
            continue
        # built with every argument at its default is still the job's accelerate setting
        # (the launcher's YAML or flags decide): the script is read, not "holds no settings"
        out.put(f"config.{KIND}.accelerator.built", True, call.line)
        for key in ("mixed_precision", "gradient_accumulation_steps", "cpu"):
            if key in call.kwargs:
                out.put(f"config.{KIND}.{key}", call.kwargs[key], call.lines.get(key))
                # the code's own argument, told apart from the YAML key and the launch flag
                out.put(f"config.{KIND}.accelerator.{key}", call.kwargs[key], call.lines.get(key))
        plugins(out, call)
        handlers = call.value("kwargs_handlers")
        line = call.lines.get("kwargs_handlers", call.line)
        if isinstance(handlers, list):
            _handlers(out, [h for h in handlers if isinstance(h, Call) and h.name in HANDLERS],
                      line)
            hidden = next((h for h in handlers if not isinstance(h, Call)), None)
            if hidden is not None:
                out.put(f"config.{KIND}.accelerator.fp8_backend", Unresolved(
                    f"a kwargs_handlers item the text does not give ({_short(hidden)}) may be a "
                    "recipe handler"), line)
        elif handlers is not None:
            out.put(f"config.{KIND}.kwargs_handlers", handlers, line)
            out.put(f"config.{KIND}.accelerator.fp8_backend", handlers, line)
    prepare_calls(out, module)      # which objects each accelerator.prepare() takes (ACC-0095)
    return out.output()


def _short(value: object) -> str:
    text = value.reason if isinstance(value, Unresolved) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _handlers(out: PyOut, handlers: list[Call], line: int) -> None:
    """The recipe handlers passed in code. ``config.accelerate.accelerator.fp8_backend`` is what
    ``Accelerator.fp8_backend`` returns for them whatever the state's mixed precision says
    (from v1.4.0 a handler sets ``has_fp8_handler``: accelerator.py l.437-450, l.3684-3697 at
    v1.4.0; l.427-440, l.3956-3970 at v1.8.1), so FP8D-ACC-0001 tells it from the YAML's
    ``fp8_config.backend``. ``FP8RecipeKwargs`` with no ``backend`` takes
    ``ACCELERATE_FP8_BACKEND``, else MSAMP where msamp is installed, else TE (utils/dataclasses.py
    ``FP8RecipeKwargs.__post_init__`` at v0.34.2 and v1.10.1): Unknown here."""
    out.put(f"config.{KIND}.kwargs_handlers", [h.name for h in handlers], line)
    for h in handlers:
        backend = HANDLERS[h.name] or h.value("backend")
        if isinstance(backend, str):
            out.put(f"config.{KIND}.fp8_config.backend", backend.upper(), h.line)
            out.put(f"config.{KIND}.accelerator.fp8_backend", backend.upper(),
                    h.lines.get("backend", h.line))
        else:
            out.put(f"config.{KIND}.accelerator.fp8_backend", backend if isinstance(
                backend, Unresolved) else Unresolved(
                f"{h.name}() names no backend: accelerate takes ACCELERATE_FP8_BACKEND, else "
                "MSAMP where msamp is installed, else TE"), h.lines.get("backend", h.line))
        prefix = f"config.{KIND}.kwargs_handlers.{h.name}"
        for key, value in h.kwargs.items():
            if key == "config" and isinstance(value, Call):
                recipe = value.args[0] if value.name == "from_recipe_name" and value.args \
                    else value.kwargs.get("recipe_name")
                out.put(f"{prefix}.recipe_name", recipe if recipe is not None else "tensorwise",
                        value.line)
            elif key == "module_filter_func":
                out.put(f"{prefix}.{key}", True, h.lines.get(key, h.line))
            elif isinstance(value, Ref):          # FP8Format.HYBRID, Format.E4M3
                out.put(f"{prefix}.{key}", value.last, h.lines.get(key, h.line))
            else:
                out.put(f"{prefix}.{key}", value, h.lines.get(key, h.line))
