"""Regenerate one release's table in ``preflight/data/megatron_bridge_recipes.json`` from a
Megatron-Bridge checkout (the other releases' tables are kept; the file holds v0.2.0, v0.2.2,
v0.3.0, v0.3.1, v0.4.0, v0.5.0 and v0.6.0: a recipe's preset changes between releases,
nemotron_3_super_pretrain_config is NVFP4 at v0.4.0 and v0.5.0, BF16 at v0.6.0). The 0.1.x
tags (v0.1.0rc4) and the 0.2.0 pre-releases up to rc5 have no ``<model>_pretrain_config``
functions (``recipes/llama/llama32_1b.py`` ``pretrain_config``): not tabled.

Usage: ``python tools/megatron_bridge_recipes.py /path/to/Megatron-Bridge TAG COMMIT``

Reads (never imports) ``src/megatron/bridge/recipes`` and ``src/megatron/bridge/perf_recipes``
with ``ast``: every public ``*_config`` function, every ``import X as Y`` alias of one and the
base templates of ``recipes/common.py`` (``_sft_common``, v0.3.1+), and
which mixed-precision preset it ends up with: a preset name in its body (``"bf16_with_mxfp8_mixed"``,
``bf16_with_mxfp8_mixed()``), a ``_perf_precision("fp8_mx")`` call, a later
``mixed_precision.fp8_recipe = "..."``, else the preset of the recipe function it starts from,
else ``bf16_mixed`` (``recipes/common.py``: every ``_*_common()`` sets it).
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from preflight.frameworks.megatron_bridge_presets import PRESETS  # noqa: E402

PERF = {"bf16": "bf16_mixed", "fp8_cs": "fp8cs", "fp8_mx": "bf16_with_mxfp8_mixed",
        "nvfp4": "bf16_with_nvfp4_mixed"}
PRESET = re.compile(r"\b((?:bf16|fp16)_with_\w+_mixed|nemotron_h_\w+_mixed|nanov2_\w+_mixed|"
                    r"nemotron_3_super_\w+_mixed|bf16_mixed|fp16_mixed)\b")


def _code(text: str) -> str:
    """The source without its comments (a commented-out preset is no preset)."""
    lines = text.split("\n")
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return "\n".join(lines)


def _tested(body: str, at: int) -> bool:
    """Is the preset name at ``at`` compared or listed, not set (v0.2.x-v0.3.0
    llama3_8b_low_precision_pretrain_config: ``assert mixed_precision_recipe in ["bf16_with_...",
    ...]`` and ``if mixed_precision_recipe == "bf16_with_nvfp4_mixed"``: the caller's argument
    picks the preset)?"""
    before = body[:at].rstrip().rstrip("\"'").rstrip()
    return before.endswith(("==", "!=", "[", ","))


def _collect(root: Path) -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, str],
                                  dict[str, str]]:
    """Function bodies (comments and docstrings dropped): public by name, private by name and
    module; the module of each public one; ``import X as Y`` aliases."""
    public: dict[str, str] = {}
    private: dict[str, dict[str, str]] = {}
    module_of: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for sub in ("recipes", "perf_recipes"):
        for path in sorted((root / "src/megatron/bridge" / sub).rglob("*.py")):
            src = path.read_text(encoding="utf-8")
            tree = ast.parse(src)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    for a in node.names:
                        if a.asname and a.asname.endswith("_config"):
                            aliases[a.asname] = a.name
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef):
                    continue
                body = _code(ast.get_source_segment(src, node) or "")
                if node.body:
                    # the signature ends where the body's first line starts: a preset there is
                    # a parameter's default, which a caller's keyword replaces (v0.2.x-v0.3.0:
                    # nemotron_nano_12b_v2_pretrain_config passes "precision_config":
                    # "nanov2_bf16_with_fp8_current_scaling_mixed" to _nemotronh_common, whose
                    # signature defaults it to "bf16_mixed")
                    cut = sum(len(x) + 1 for x in body.split("\n")[:node.body[0].lineno
                                                                   - node.lineno])
                    body = body[:cut] + SIGNATURE_END + body[cut:]
                first = node.body[0] if node.body else None
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                        isinstance(first.value.value, str):
                    # a docstring that names presets sets none
                    body = body.replace(ast.get_source_segment(src, first) or "\0", "", 1)
                if node.name.startswith("_"):
                    private.setdefault(node.name, {})[str(path)] = body
                else:
                    public[node.name] = body
                    module_of[node.name] = str(path)
    return public, private, module_of, aliases


SIGNATURE_END = "\0"
"""Where a function's signature ends in its body's text (presets before it are defaults)."""
WEAK = "?"
"""Prefix of a preset that only a signature default gives (any preset set in the caller wins)."""


def _bodies(public: Any, private: Any, module_of: Any, aliases: Any
            ) -> Callable[[str, str], tuple[str, str] | None]:
    """A function's body and module by name: a public recipe (or its alias), else a private
    helper of the calling module, else the first of that name elsewhere."""
    def body_of(name: str, module: str) -> tuple[str, str] | None:
        name = aliases.get(name, name)
        if name in public:
            return public[name], module_of[name]
        found = private.get(name)
        if not found:
            return None
        path = module if module in found else sorted(found)[0]
        return found[path], path
    return body_of


def _last_set(body_of: Callable[[str, str], tuple[str, str] | None], aliases: dict[str, str],
              own: Callable[[str, int], list[tuple[int, Any]]],
              finish: Callable[[str, Any], Any] = lambda _body, value: value,
              skip: frozenset[str] = frozenset()) -> Callable[[str, str], Any]:
    """``resolve(name, module)``: the value the last thing in a function's body sets -- one of
    the body's own (``own(body, start)``: (offset, value) pairs; ``start`` is past the first
    ``:``) or the value of a function it calls (not in ``skip``), resolved the same way, at most
    12 calls deep, each (function, module) once; ``finish`` has the last word on the body's."""
    memo: dict[tuple[str, str], Any] = {}

    def resolve(name: str, module: str, depth: int = 0) -> Any:
        got = body_of(name, module)
        if got is None or depth > 12:
            return None
        body, here = got
        key = (aliases.get(name, name), here)
        if key in memo:
            return memo[key]
        memo[key] = None                      # recursion guard
        start = body.find(":") + 1
        events = own(body, start)
        for m in re.finditer(r"\b(_?\w+)\s*\(", body[start:]):
            if m.group(1) in skip:
                continue
            sub = resolve(m.group(1), here, depth + 1)
            if sub is not None:
                weak = isinstance(sub, str) and sub.startswith(WEAK)
                events.append((-1 if weak else m.start() + start, sub))
        memo[key] = finish(body, max(events, key=lambda e: e[0])[1] if events else None)
        return memo[key]
    return resolve


def _recipes(public: dict[str, str], aliases: dict[str, str]) -> list[str]:
    """Every public recipe function and alias of one."""
    return [name for name in [*public, *aliases] if aliases.get(name, name) in public]


COMMON = re.compile(r"_\w+_common(?:_\w+)?")
"""The base templates of ``recipes/common.py`` (v0.3.1+: ``_pretrain_common``, ``_sft_common``,
``_peft_common``, ``_sft_common_vlm``, ``_peft_common_vlm``): private by name, but a user's
script starts from them (awsome-distributed-ai's dsv3_sft.py ``cfg = _sft_common()``), so they
are tabled like the public recipes."""


def _templates(private: dict[str, dict[str, str]]) -> dict[str, str]:
    """``recipes/common.py``'s base templates -> that module's path."""
    return {name: path for name, found in private.items() if COMMON.fullmatch(name)
            for path in found if path.endswith("/recipes/common.py")}


def scan(root: Path) -> dict[str, str]:
    """Every public recipe function or alias -> the preset it ends up with. A function's preset
    is the last thing in its body that sets one: a preset name, a ``_perf_precision(...)`` call,
    or a call to another function (a recipe, or a private helper: its own module's first,
    else the one of that name elsewhere) that sets one."""
    public, private, module_of, aliases = _collect(root)

    def own(body: str, _start: int) -> list[tuple[int, Any]]:
        events: list[tuple[int, Any]] = [
            (m.start(), PERF[m.group(1)])
            for m in re.finditer(r'_perf_precision\(\s*"(\w+)"\s*\)', body)]
        cut = body.find(SIGNATURE_END)
        return events + [(-1, WEAK + m.group(1)) if m.start() < cut else (m.start(), m.group(1))
                         for m in PRESET.finditer(body) if not _tested(body, m.start())]

    def finish(body: str, preset: Any) -> Any:
        if isinstance(preset, str) and preset.startswith(WEAK) and body.startswith(("def _",
                                                                                      "def\t_")):
            return preset                   # a helper's default: still weak to its caller
        preset = preset[len(WEAK):] if isinstance(preset, str) and \
            preset.startswith(WEAK) else preset
        recipe = re.findall(r'mixed_precision\.fp8_recipe\s*=\s*"(\w+)"', body)
        if preset is not None and recipe and preset.split(":")[0] not in ("bf16_mixed",
                                                                          "fp16_mixed"):
            # a recipe that keeps fp8=None runs no FP8 whatever its fp8_recipe says (many
            # recipes restate the default `fp8_recipe = "tensorwise"`)
            preset = f"{preset.split(':')[0]}:{recipe[-1]}"
        return preset

    resolve = _last_set(_bodies(public, private, module_of, aliases), aliases, own, finish,
                        frozenset({"_perf_precision", "get_mixed_precision_config"}))
    where = {name: module_of[aliases.get(name, name)] for name in _recipes(public, aliases)}
    where.update(_templates(private))
    return {name: resolve(name, path) or "bf16_mixed" for name, path in where.items()}


ATTENTION = re.compile(r"\b(?:fp8_dot_product_attention|fp8_multi_head_attention)\s*=\s*"
                       r"(True|False)\b")


def scan_attention(root: Path) -> list[str]:
    """Every public recipe function or alias that ends up with FP8 attention on its
    ``mixed_precision`` (``fp8_dot_product_attention`` or ``fp8_multi_head_attention`` True):
    the last ``= True`` / ``= False`` in its body (an assignment, or a keyword given a helper:
    perf_recipes/deepseek/common.py ``_enable_deepseek_full_iteration_mxfp8(cfg,
    fp8_dot_product_attention=True)``) or in a function it calls, as :func:`scan` finds presets.
    A preset set after it (a fresh MixedPrecisionConfig, fields False) turns it off."""
    public, private, module_of, aliases = _collect(root)

    def own(body: str, start: int) -> list[tuple[int, Any]]:
        return [(m.start(), m.group(1) == "True") for m in ATTENTION.finditer(body, start)] + \
            [(m.start(), False) for m in PRESET.finditer(body, start)]

    resolve = _last_set(_bodies(public, private, module_of, aliases), aliases, own)
    where = {name: module_of[aliases.get(name, name)] for name in _recipes(public, aliases)}
    where.update(_templates(private))
    return sorted(name for name, path in where.items() if resolve(name, path))


def main() -> int:
    root, tag, commit = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    table = scan(root)
    fp8 = {k: v for k, v in sorted(table.items()) if v != "bf16_mixed"}
    assert all(v.split(":")[0] in (*PRESETS, "fp8cs") for v in fp8.values()), fp8
    plain = sorted(k for k, v in table.items() if v == "bf16_mixed")
    doc: dict[str, Any] = {
        "about": ("Megatron-Bridge recipe names and the mixed-precision preset each ends up "
                  "with (fp8cs: the current-scaling preset without BF16 first/last layers; "
                  "preset:recipe: the preset with its fp8_recipe changed). Generated by "
                  "tools/megatron_bridge_recipes.py from the recipes' source, read with ast. "
                  "One table per release (releases); a recipe's precision is looked up in the "
                  "table of the Megatron-Bridge release that runs. fp8_attention: the recipes "
                  "whose mixed_precision ends up with fp8_dot_product_attention or "
                  "fp8_multi_head_attention True."),
    }
    target = Path(__file__).resolve().parents[1] / "preflight/data/megatron_bridge_recipes.json"
    old = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
    releases = [r for r in old.get("releases", []) if r.get("version") != tag]
    releases.append({"version": tag, "commit": commit, "fp8": fp8, "bf16": plain,
                     "fp8_attention": scan_attention(root)})
    releases.sort(key=lambda r: tuple(int(x) for x in re.findall(r"\d+", r["version"])[:3]))
    doc["releases"] = releases
    target.write_text(json.dumps(doc, indent=0, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(fp8)} FP8 recipes, {len(plain)} BF16 recipes -> {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
