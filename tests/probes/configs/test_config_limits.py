"""Small files that expand to huge ones: each is a problem naming file and line, in under 2 s.

Bombs from the fourth audit: ``${...}`` references that repeat references (llm-foundry and NeMo
interpolation), YAML aliases that copy one long string many times, TOML dotted keys (tomllib
takes quadratic time in the number of segments), and near-cap files that were merely slow.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from preflight.facts import Facts
from preflight.intent import derive
from preflight.probes.configs import ConfigRead, read_paths


def _interp_bomb(levels: int, head: str, ref: str) -> str:
    lines = [head, f"  v{levels}: lol"]
    for i in range(levels - 1, -1, -1):
        lines.append(f"  v{i}: '" + "".join(f"${{{ref}{i + 1}}}" for _ in range(10)) + "'")
    return "\n".join(lines) + "\n"


def _timed(path: Path) -> tuple[ConfigRead, float]:
    start = time.perf_counter()
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    json.dumps(read.facts, allow_nan=False)
    return read, time.perf_counter() - start


FOUNDRY_TAIL = "model:\n  name: mpt_causal_lm\nprecision: amp_fp8\nmax_duration: 1ba\n" \
               "run_name: ${variables.v0}\n"
NEMO_HEAD = "name: megatron_gpt\ntrainer:\n  devices: 8\nmodel:\n  transformer_engine: true\n" \
            "  fp8: true"


@pytest.mark.parametrize("name,text,line", [
    # 1 KB, six levels: 6.4 s before (each reference re-resolved every time it was used)
    ("foundry6.yaml", _interp_bomb(6, "variables:", "variables.v") + FOUNDRY_TAIL, None),
    # nine levels: over a minute before
    ("foundry9.yaml", _interp_bomb(9, "variables:", "variables.v") + FOUNDRY_TAIL, None),
    ("nemo.yaml", _interp_bomb(7, NEMO_HEAD, "model.v")
     + "  run: ${model.v0}\n", None),
])
def test_interpolation_bomb_is_a_problem(tmp_path: Path, name: str, text: str,
                                         line: int | None) -> None:
    path = tmp_path / name
    path.write_text(text)
    read, elapsed = _timed(path)
    assert elapsed < 2.0, elapsed
    assert len(read.problems) == 1, read.problems
    assert "interpolation expands to more than" in read.problems[0].message
    assert read.problems[0].line is not None


def test_interpolation_used_many_times_is_resolved_once(tmp_path: Path) -> None:
    # 2,000 uses of one 100-character value: fine, and fast
    path = tmp_path / "many.yaml"
    path.write_text("variables:\n  tag: " + "x" * 100 + "\n" + FOUNDRY_TAIL.replace(
        "run_name: ${variables.v0}\n", "tags: [" + ", ".join(["'run-${variables.tag}'"] * 2000)
        + "]\n"))
    read, elapsed = _timed(path)
    assert elapsed < 2.0
    assert read.problems == []
    assert read.facts["config.llmfoundry.tags"][1999] == "run-" + "x" * 100


def test_interpolation_semantics_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "nemo.yaml"
    path.write_text("name: megatron_gpt\nexp_manager:\n  name: ${name}\ntrainer: {devices: 1}\n"
                    "model:\n  fp8: true\n  a: ${.b}\n  b: ${.c}\n  c: 7\n  d: x-${model.a}-y\n"
                    "  e: ${model.f}\n  f: ${model.e}\n  data:\n    s: ${..c}\n")
    read = read_paths([str(path)])
    assert read.problems == []
    f = read.facts
    assert f["config.nemo.exp_manager.name"] == "megatron_gpt"
    assert f["config.nemo.model.a"] == 7 and f["config.nemo.model.d"] == "x-7-y"
    assert f["config.nemo.model.data.s"] == 7
    # a cycle stays as written (OmegaConf raises on it)
    assert str(f["config.nemo.model.e"]).startswith("${model.")


def _string_bomb(chars: int, copies: int) -> str:
    return ("mixed_precision: fp8\ndistributed_type: MULTI_GPU\n"
            f"a: &a \"{'x' * chars}\"\nb: &b [{', '.join(['*a'] * copies)}]\n"
            f"c: [{', '.join(['*b'] * copies)}]\n")


def test_aliases_copying_a_long_string_are_a_problem(tmp_path: Path) -> None:
    # 11 KB: one 10 KB string, 100 x 100 copies = 100 MB (87 s and 101 MB of JSON before)
    path = tmp_path / "strbomb.yaml"
    path.write_text(_string_bomb(10_000, 100))
    read, elapsed = _timed(path)
    assert elapsed < 2.0
    assert len(read.problems) == 1
    problem = read.problems[0]
    assert "aliases expand the document to 101,0" in problem.message
    assert problem.line == 5 and "'c'" in problem.message


def test_ordinary_anchors_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "acc.yaml"
    path.write_text("mixed_precision: fp8\ndistributed_type: MULTI_GPU\n"
                    "x: &fp8 {backend: TE, fp8_format: HYBRID}\nfp8_config: *fp8\n"
                    + _string_bomb(100, 20).split("\n", 2)[2])
    read = read_paths([str(path)])
    assert read.problems == []
    assert read.facts["config.accelerate.fp8_config.backend"] == "TE"
