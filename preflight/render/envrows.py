"""The environment summary of a report as typed rows: what ran where, in a dozen lines.

Each row is a label and its parts: text, and every Unknown value as an :class:`UnknownPart`
that keeps its reason, so each format says it its own way (text refers to a reason it gave
above, Markdown to its numbered list, the paste block by the reason's head) from rows built once
(issue 25 item 2: three renderers read about thirty fact names each time).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from preflight.facts import reason_head
from preflight.frameworks._index import DISTRIBUTIONS
from preflight.render._common import fmt_value, is_unknown

# Distributions shown in the environment summary, by group (PEP 503 names, as in pkg.<dist>.*).
FP8_LIBS = ("transformer-engine", "torchao", "ms-amp")
FRAMEWORKS = tuple(dict.fromkeys(d for dists in DISTRIBUTIONS.values() for d in dists
                                  if d not in FP8_LIBS))
"""Every framework's distributions (its record's, through the generated index), less the FP8
libraries a record also names (torchtune's and cosmos-rl's torchao): shown once, in their row."""


@dataclass(frozen=True)
class UnknownPart:
    """An Unknown value in a row. ``form``: ``value`` (always said in full), ``referable`` (a
    reason the report gave elsewhere is referred to; in the paste block only its head) or
    ``head`` (referred to, else only its head: one item of a list)."""

    reason: str
    form: Literal["value", "referable", "head"] = "value"


Part = str | UnknownPart


@dataclass(frozen=True)
class EnvironmentRow:
    """One line of the environment summary."""

    label: str
    parts: tuple[Part, ...]

    def text(self, unknown: Callable[[UnknownPart], str]) -> str:
        """The row's value, each Unknown as ``unknown`` says it."""
        return "".join(p if isinstance(p, str) else unknown(p) for p in self.parts)


def unknown_text(part: UnknownPart, told: Collection[str] = (), *, short: bool = False) -> str:
    """An Unknown in text: ``unknown (why: above)`` for a reason in ``told`` (shown elsewhere),
    its head for a list item (or every referable one when ``short``), else in full."""
    if part.form != "value" and part.reason in told:
        return "unknown (why: above)"
    if part.form == "head" or (short and part.form == "referable"):
        return f"unknown ({reason_head(part.reason)})"
    return f"unknown ({part.reason})"


def _val(value: Any, form: Literal["value", "referable", "head"] = "value") -> Part:
    return UnknownPart(str(value["$unknown"]), form) if is_unknown(value) else fmt_value(value)


def _join(items: list[list[Part]]) -> list[Part]:
    """Items joined with ", ", empty ones left out."""
    out: list[Part] = []
    for item in (i for i in items if i and i != [""]):
        out += ([", "] if out else []) + item
    return out


def environment_rows(facts: Mapping[str, Any]) -> tuple[EnvironmentRow, ...]:
    """Rows summarising the environment; only rows with something to say."""
    rows: list[tuple[str, list[Part]]] = []
    count = facts.get("gpu.count")
    if is_unknown(count):
        rows.append(("GPU", [_val(count, "referable")]))
    elif count is not None:
        if count == 0:
            gpu = "none visible to this process"
            host = facts.get("gpu.host_count")
            if isinstance(host, int) and host > 0:
                gpu += f" ({host} on the host)"
        else:
            names = facts.get("gpu.names")
            name = (names[0] if isinstance(names, list) and names else facts.get("gpu.name"))
            if is_unknown(name) or not isinstance(name, str):
                name = None   # --assume gpu.cc alone: the model is Unknown, never a raw dict
            gpu = f"{count} × {name}" if name else f"{count} GPU(s)"
            cc = facts.get("gpu.min_cc") or facts.get("gpu.cc")
            if cc is not None and not is_unknown(cc):
                gpu += f" (cc {cc})"
            if facts.get("gpu.heterogeneous") is True:
                gpu += ", mixed models"
        rows.append(("GPU", [gpu]))
    driver = facts.get("gpu.driver")
    # An unknown driver for the same reason as an unknown GPU count says nothing new.
    if driver is not None and not (is_unknown(driver) and driver == count):
        cuda = facts.get("gpu.cuda_driver")
        rows.append(("Driver", [_val(driver, "referable")]
                     + ([f" (CUDA {fmt_value(cuda)})"] if cuda and not is_unknown(cuda) else [])))
    py = facts.get("host.python")
    if py is not None:
        rows.append(("Python", _join([[_val(py)], [_val(facts.get("host.os") or "")],
                                      [_val(facts.get("host.arch") or "")]])))
    torch = facts.get("pkg.torch.version")
    if torch is not None:
        build = facts.get("cuda.torch_build")
        rows.append(("torch", [_val(torch, "head")]
                     + ([" (CUDA ", _val(build), ")"] if build else [])))
    for label, dists in (("FP8 libraries", FP8_LIBS), ("Frameworks", FRAMEWORKS)):
        parts = _join([[f"{d} ", _val(facts[f"pkg.{d}.version"], "head")] for d in dists
                       if f"pkg.{d}.version" in facts])
        rows.append((label, parts or ["none installed"]))
    broken = facts.get("pkg.broken")
    if isinstance(broken, list) and broken:
        # A distribution whose metadata cannot be read has no version fact: the rules see it as
        # not installed. Say so, so a "not installed" finding is not taken at face value.
        shown = "; ".join(str(b) for b in broken[:3]) + (f"; +{len(broken) - 3} more"
                                                         if len(broken) > 3 else "")
        rows.append(("Broken installs", [f"{len(broken)} with unreadable metadata "
                                         f"(counted as not installed): {shown}"]))
    intent = _intent(facts)
    if intent:
        rows.append(("Job asks for", intent))
    launcher = facts.get("host.launcher")
    if launcher not in (None, "none"):
        ws = facts.get("host.world_size")
        rows.append(("Launcher", [_val(launcher)] + ([", world size ", _val(ws)] if ws else [])))
    if facts.get("runtime.inspected") is True:
        rows.append(("Live model", _runtime(facts)))
    return tuple(EnvironmentRow(label, tuple(parts)) for label, parts in rows)


def _intent(facts: Mapping[str, Any]) -> list[Part]:
    fp8 = facts.get("intent.fp8")
    if fp8 is None:
        return []
    if fp8 is not True:
        return ["FP8: ", _val(fp8)]
    parts: list[list[Part]] = [["FP8"]]
    for name, label in (("intent.backend", "backend"), ("intent.recipe", "recipe"),
                        ("intent.format", "format")):
        if name in facts:
            parts.append([f"{label} ", _val(facts[name])])
    dist = facts.get("intent.distributed")
    if dist is not None:
        stage = facts.get("intent.zero_stage")
        parts.append([_val(dist)] + ([" ZeRO-", _val(stage)] if stage is not None else []))
    return _join(parts)


def _runtime(facts: Mapping[str, Any]) -> list[Part]:
    parts: list[list[Part]] = []
    if "runtime.fp8.converted" in facts:
        parts.append([_val(facts["runtime.fp8.converted"]), " FP8 module(s)"])
    if "runtime.fp8.unconverted_count" in facts:
        parts.append([_val(facts["runtime.fp8.unconverted_count"]),
                      " Linear left in high precision"])
    if "runtime.deepspeed.zero_stage" in facts:
        parts.append(["DeepSpeed ZeRO-", _val(facts["runtime.deepspeed.zero_stage"])])
    if "runtime.accelerate.mixed_precision" in facts:
        parts.append(["accelerate ", _val(facts["runtime.accelerate.mixed_precision"])])
    return _join(parts) or ["inspected"]
