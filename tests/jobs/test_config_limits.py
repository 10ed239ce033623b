"""Small files that expand to huge ones: each is a problem naming file and line, in under 2 s.

Bombs from the fourth audit: ``${...}`` references that repeat references (llm-foundry and NeMo
interpolation), YAML aliases that copy one long string many times, TOML dotted keys (tomllib
takes quadratic time in the number of segments), and near-cap files that were merely slow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cputime import cpu_seconds

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import ConfigRead, read_paths


def _interp_bomb(levels: int, head: str, ref: str) -> str:
    lines = [head, f"  v{levels}: lol"]
    for i in range(levels - 1, -1, -1):
        lines.append(f"  v{i}: '" + "".join(f"${{{ref}{i + 1}}}" for _ in range(10)) + "'")
    return "\n".join(lines) + "\n"


def _timed(path: Path) -> tuple[ConfigRead, float]:
    """The read and the CPU seconds it took: a loaded machine does not stretch CPU time, a bomb
    still spends far more than the bound (tests/cputime.py)."""
    start = cpu_seconds()
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    _dumps(read.facts)
    _dumps(values)
    return read, cpu_seconds() - start


def _dumps(facts: dict) -> str:
    """Facts as the JSON report writes them (strict JSON: no NaN)."""
    return json.dumps(facts, allow_nan=False,
                      default=lambda v: {"$unknown": v.reason} if isinstance(v, Unknown) else v)


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


@pytest.mark.parametrize("name,text,words,line", [
    # 20 KB: 2.3 s before; 40k parts: 47 s and 6 GB
    ("key.toml", "# torchtitan\n" + ".".join(["a"] * 10_000) + " = 1\n", "more than 64 parts", 2),
    ("header.toml", "[" + ".".join(["a"] * 10_000) + "]\nb = 1\n", "more than 64 parts", 1),
    ("quoted.toml", ".".join(['"a"'] * 5_000) + " = 1\n", "more than 64 parts", 1),
    ("invalid.toml", "[model]\n" + ".".join(["a"] * 50_000) + "\n", "more than 64 parts", 2),
    # 1 MB of [t0] .. [t55902]: 2.2 s before
    ("tables.toml", '[model]\nname = "llama3"\n' + "".join(f"[t{i}]\nk = {i}\n"
                                                         for i in range(55_000)),
     "over the 262,144 limit", None),
])
def test_slow_toml_is_refused_before_parsing(tmp_path: Path, name: str, text: str, words: str,
                                             line: int | None) -> None:
    path = tmp_path / name
    path.write_text(text)
    read, elapsed = _timed(path)
    assert elapsed < 2.0, elapsed
    assert len(read.problems) == 1 and words in read.problems[0].message
    assert read.problems[0].line == line


def test_ordinary_toml_with_dotted_keys_and_floats_reads(tmp_path: Path) -> None:
    path = tmp_path / "job.toml"
    path.write_text('[model]\nname = "llama3"\nconverters = ["quantize.linear.float8"]\n'
                    '[quantize.linear.float8]\nrecipe_name = "rowwise"\n[optimizer]\nlr = 8e-4\n'
                    "betas = [0.9, 0.95]\n" + "training.seq_len = 8192\n")
    read = read_paths([str(path)])
    assert read.problems == []
    assert read.facts["config.torchtitan.quantize.linear.float8.recipe_name"] == "rowwise"


def test_a_list_too_long_to_be_a_setting_is_unknown(tmp_path: Path) -> None:
    # 900 KB: a list of 100,000 strings took 2.7 s to report (each item redacted and rendered)
    path = tmp_path / "ds.json"
    path.write_text('{"zero_optimization": {"stage": 2}, "s": [' + ", ".join(['"ab"'] * 100_000)
                    + "]}")
    read, elapsed = _timed(path)
    assert elapsed < 2.0
    assert read.problems == []
    assert read.facts["config.deepspeed.zero_optimization.stage"] == 2
    value = read.facts["config.deepspeed.s"]
    assert isinstance(value, Unknown) and "more than 2,048 items" in value.reason


def test_many_lists_share_one_budget(tmp_path: Path) -> None:
    path = tmp_path / "ds.json"
    path.write_text('{"zero_optimization": {"stage": 2}, '
                    + ", ".join(f'"k{i}": [{", ".join(["1"] * 1000)}]' for i in range(20)) + "}")
    read = read_paths([str(path)])
    kept = [n for n, v in read.facts.items() if n.startswith("config.deepspeed.k") and
            isinstance(v, list)]
    assert len(kept) == 8          # 8,192 list items per file
    assert isinstance(read.facts["config.deepspeed.k19"], Unknown)


@pytest.mark.parametrize("name,text", [
    ("nan.json", '{"zero_optimization": {"stage": NaN}, "gradient_clipping": Infinity, '
                 '"train_micro_batch_size_per_gpu": -Infinity}'),
    ("nan.toml", '[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["float8"]\n[training]\n'
                 "lr = nan\nseq_len = 8192\nlocal_batch_size = inf\n"),
    ("nan.yaml", "mixed_precision: fp8\ndistributed_type: MULTI_GPU\nnum_processes: .nan\n"
                 "x: [.inf, -.inf]\n"),
])
def test_nan_and_infinity_become_strings(tmp_path: Path, name: str, text: str) -> None:
    # JSON has no NaN: the report held bare NaN / Infinity that strict readers refuse
    path = tmp_path / name
    path.write_text(text)
    read = read_paths([str(path)])
    assert read.problems == []
    _dumps(read.facts)
    values, _ = derive(Facts(read.facts, read.provenance))
    _dumps(values)
