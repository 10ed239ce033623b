"""Property: whatever bytes, text or structure a reader gets, it returns a ConfigRead, never raises.

A hypothesis fuzz over every reader (by extension and by forced kind), through intent too, and
through the JSON report's encoding (strict JSON: no NaN, no integer of more than 4,300 digits).
The generators include what the fourth audit found: list-valued recipe keys, huge integers,
YAML aliases of long strings, ``${...}`` references that repeat references, NaN, dotted TOML keys.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml
from cputime import cpu_seconds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight.facts import Facts, facts_to_json
from preflight.intent import derive
from preflight.jobs.read import KINDS, ConfigRead, read_paths
from preflight.registry import registry

EXTS = [".yaml", ".json", ".toml", ".sh", ".args", ".txt", ""]
KIND_OR_NONE = st.sampled_from([None, *KINDS])
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

keys = st.sampled_from(["mixed_precision", "fp8_config", "backend", "zero_optimization", "stage",
                        "bf16", "fp16", "enabled", "model", "name", "fc_type", "precision",
                        "fsdp_config", "trainer", "strategy", "converters", "float8",
                        "--fp8-format", "--fp8-recipe", "recipe_name", "fp8_format",
                        "hidden_size", "seq_length", "micro_batch_size", "d_model",
                        "MODEL_ARGS", "language_model", "fp8", "variables", "transformer_engine",
                        "deepspeed_config", "deepspeed_config_file", "distributed_type", "x"]) | \
    st.text(min_size=1, max_size=8)
scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | \
    st.integers(2**53 - 2, 10**40) | st.floats() | \
    st.sampled_from(["fp8", "TE", "auto", "amp_fp8", "${variables.x}", "${a.b}", "hybrid",
                     "transformer-engine", "deepspeed_stage_3", "DEEPSPEED", "FSDP", "te",
                     "rowwise", "delayed", "9" * 30]) | \
    st.text(max_size=12)
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) |
                         st.dictionaries(keys, inner, max_size=5), max_leaves=25)


MAX_SECONDS = 5.0
"""CPU seconds per example, for the audit-shaped generators: the contract is 2 s per bad file; 5 s
leaves room for a slower CPU while still catching the bombs (each took 6 s to minutes). CPU time,
not the wall clock: a loaded machine does not stretch it (tests/cputime.py)."""

MAX_JSON_BYTES = 8 * 1024 * 1024
"""A file of at most 1 MB must not turn into a larger report than this (aliases copied one
10 KB string into 101 MB of JSON)."""


def _read(content: bytes, ext: str, kind: str | None, *, timed: bool = False) -> ConfigRead:
    start = cpu_seconds()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"job{ext}"
        path.write_bytes(content)
        read = read_paths([str(path)], kind=kind)
    assert isinstance(read, ConfigRead)
    for problem in read.problems:
        assert problem.path and problem.message
    for name in read.facts:
        assert registry().lookup(name) is not None, name
    values, prov = derive(Facts(read.facts, read.provenance))    # intent never raises either
    assert all(name.startswith("intent.") for name in values)
    # what --format json writes: it must be strict JSON
    doc = json.dumps(facts_to_json(Facts({**read.facts, **values},
                                         {**read.provenance, **prov})), allow_nan=False)
    assert len(doc) <= MAX_JSON_BYTES, len(doc)
    if timed:
        assert cpu_seconds() - start < MAX_SECONDS
    return read


@SETTINGS
@given(st.binary(max_size=400), st.sampled_from(EXTS), KIND_OR_NONE)
def test_random_bytes(content: bytes, ext: str, kind: str | None) -> None:
    _read(content, ext, kind)


@SETTINGS
@given(st.text(max_size=400), st.sampled_from(EXTS), KIND_OR_NONE)
def test_random_text(content: str, ext: str, kind: str | None) -> None:
    _read(content.encode("utf-8", "replace"), ext, kind)


@SETTINGS
@given(documents, st.sampled_from([".yaml", ".json"]), KIND_OR_NONE)
def test_random_structures(doc: object, ext: str, kind: str | None) -> None:
    text = json.dumps(doc) if ext == ".json" else yaml.safe_dump(doc)
    _read(text.encode(), ext, kind)


@SETTINGS
@given(st.lists(st.sampled_from(["--fp8-format", "--bf16", "hybrid", "e4m3", "$X", "${Y:-4}",
                                 "X=8", "\\\n", "(", ")", '"', "'", "#", "--hidden-size", "4096",
                                 "--recompute-modules", "mlp", "=", " ", "\n", "accelerate launch",
                                 "--config_file", "--mixed_precision", "fp8", "train.py",
                                 "--output_dir", "--bf16", "--deepspeed", "ds.json", "-m", ";",
                                 "&&", "torchrun", "--fp8_backend"]), max_size=40))
def test_random_launch_scripts(tokens: list[str]) -> None:
    _read(" ".join(tokens).encode(), ".sh", None)


# -- the fourth audit's shapes ------------------------------------------------------------------

RECIPE_DOCS = st.sampled_from([
    ('[model]\nname = "llama3"\nconverters = ["float8"]\n[float8]\nrecipe_name = {v}\n', ".toml"),
    ("MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: {v}\nTEST_TYPE: regular\n", ".yaml"),
    ("mixed_precision: fp8\ndistributed_type: MULTI_GPU\nfp8_config:\n  backend: {v}\n"
     "  fp8_format: {v}\n", ".yaml"),
    ("language_model:\n  fp8: {v}\n  hidden_size: {v}\ntransformer_impl: transformer_engine\n",
     ".yaml"),
])
RECIPE_VALUES = st.sampled_from(['["rowwise"]', "[delayed, tensorwise]", "{a: 1}", "[]",
                                 '{ a = 1 }', "1e400", "-1e400", ".nan", "nan", "inf"])


@SETTINGS
@given(RECIPE_DOCS, RECIPE_VALUES)
def test_list_and_odd_valued_vocabulary_keys(doc: tuple[str, str], value: str) -> None:
    template, ext = doc
    _read(template.format(v=value).encode(), ext, None, timed=True)


@SETTINGS
@given(st.integers(1, 6000), st.integers(1, 6000),
       st.sampled_from(["args", "yaml", "quoted", "json", "toml"]))
def test_huge_integers(digits_a: int, digits_b: int, form: str) -> None:
    a, b = "7" * digits_a, "3" * digits_b
    text, ext = {
        "args": (f"--fp8-format hybrid --hidden-size {a} --micro-batch-size {b} "
                 f"--seq-length {a} --tensor-model-parallel-size {b}\n", ".args"),
        "yaml": (f"language_model:\n  fp8: hybrid\n  hidden_size: {a}\n  seq_length: {b}\n"
                 "transformer_impl: transformer_engine\n", ".yaml"),
        "quoted": (f"language_model:\n  fp8: hybrid\n  hidden_size: '{a}'\n  seq_length: '{b}'\n"
                   "transformer_impl: transformer_engine\n", ".yaml"),
        "json": (f'{{"zero_optimization": {{"stage": {a}}}, "train_micro_batch_size_per_gpu": {b}}}',
                 ".json"),
        "toml": (f'[model]\nname = "llama3"\nflavor = "8B"\n[training]\nseq_len = {a}\n'
                 f"local_batch_size = {b}\n[parallelism]\ntensor_parallel_degree = {b}\n",
                 ".toml"),
    }[form]
    _read(text.encode(), ext, None, timed=True)


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 100), st.sampled_from([1, 10, 1000, 10_000]),
       st.sampled_from(["flow", "block"]))
def test_alias_expansion(levels: int, fan: int, width: int, style: str) -> None:
    lines = ["mixed_precision: fp8", "distributed_type: MULTI_GPU",
             f"a0: &a0 \"{'x' * width}\""]
    for i in range(1, levels + 1):
        refs = [f"*a{i - 1}"] * fan
        if style == "flow":
            lines.append(f"a{i}: &a{i} [{', '.join(refs)}]")
        else:
            lines.append(f"a{i}: &a{i}\n" + "\n".join(f"  - {r}" for r in refs))
    _read(("\n".join(lines) + "\n").encode(), ".yaml", None, timed=True)


@SETTINGS
@given(st.integers(1, 12), st.integers(1, 12), st.sampled_from(["foundry", "nemo"]),
       st.booleans())
def test_interpolation_fan_out(levels: int, fan: int, kind: str, cycle: bool) -> None:
    root = "variables" if kind == "foundry" else "model"
    body = [f"  v{levels}: {'${' + root + '.v0}' if cycle else 'lol'}"]
    for i in range(levels - 1, -1, -1):
        body.append(f"  v{i}: '" + "".join(f"${{{root}.v{i + 1}}}" for _ in range(fan)) + "'")
    if kind == "foundry":
        text = ("variables:\n" + "\n".join(body) + "\nmodel:\n  name: mpt_causal_lm\n"
                "precision: amp_fp8\nmax_duration: 1ba\nrun_name: ${variables.v0}\n")
    else:
        text = ("name: megatron_gpt\ntrainer:\n  devices: 8\nmodel:\n  transformer_engine: true\n"
                "  fp8: true\n" + "\n".join(body) + "\n")
    _read(text.encode(), ".yaml", None, timed=True)


@SETTINGS
@given(st.integers(1, 20_000), st.sampled_from(["key", "header", "quoted", "bare"]))
def test_dotted_toml_keys(parts: int, form: str) -> None:
    dotted = ".".join(['"a"' if form == "quoted" else "a"] * parts)
    text = {"key": f"{dotted} = 1\n", "header": f"[{dotted}]\nb = 1\n",
            "quoted": f"{dotted} = 1\n", "bare": f"{dotted}\n"}[form]
    _read(('[model]\nname = "llama3"\n' + text).encode(), ".toml", None, timed=True)
