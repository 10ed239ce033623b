"""The shared dynamic-shape intent facts (issue 23): sequence length, micro-batch, packing, pad
multiple, MoE experts / top-k, expert parallel, as each framework's derive states them, and the
effective.* alignment computed from them (preflight/effective.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight import effective
from preflight.assume import apply_assumptions
from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def _facts(tmp_path: Path, name: str, text: str, **assume: str) -> Facts:
    (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / name)])
    assert [p for p in read.problems if p.level == "error"] == []
    facts = Facts(read.facts, read.provenance)
    if assume:
        facts = apply_assumptions(facts, assume)
    values, prov = derive(facts)
    return effective.apply(facts.merged(values, prov, source="intent"))


def _intent(f: Facts) -> dict:
    return {k[7:]: v for k, v in f.items() if k.startswith("intent.")}


def test_megatron_lm_samples_are_fixed_length_and_moe_is_read(tmp_path: Path) -> None:
    f = _facts(tmp_path, "run.sh", (
        "torchrun pretrain_gpt.py --seq-length 4096 --micro-batch-size 2 --num-experts 64 \\\n"
        "  --moe-router-topk 6 --expert-model-parallel-size 8 --fp8-format hybrid --bf16\n"))
    v = _intent(f)
    assert (v["seq_len"], v["micro_batch"], v["packing"]) == (4096, 2, False)
    assert (v["moe.experts"], v["moe.top_k"], v["ep"]) == (64, 6, 8)


def test_megatron_moe_defaults_and_a_dense_model(tmp_path: Path) -> None:
    v = _intent(_facts(tmp_path, "run.sh",
                       "torchrun pretrain_gpt.py --num-experts 8 --fp8-format hybrid\n"))
    assert (v["moe.top_k"], v["ep"]) == (2, 1)
    v = _intent(_facts(tmp_path, "run.sh", "torchrun pretrain_gpt.py --fp8-format hybrid\n"))
    assert isinstance(v["moe.experts"], Unknown)        # not stated: no MoE flag was read


SWIFT = ("megatron sft --model Qwen/Qwen3-VL-30B-A3B-Instruct --fp8_recipe {recipe} "
         "--fp8_format e4m3 \\\n  --tensor_model_parallel_size 2 --sequence_parallel true "
         "--packing true --max_length 4096 --micro_batch_size 1{extra}\n")


@pytest.mark.parametrize(("version", "recipe", "extra", "pad"), [
    ("3.9.0", "delayed", "", 16),       # sft.py: max(p * 8, 16)
    ("4.2.0", "mxfp8", "", 16),
    ("4.3.0", "delayed", "", 32),       # p * 16
    ("4.4.0", "mxfp8", "", 32),         # issue 9723: MXFP8 fell into the x16 branch
    ("4.4.3", "mxfp8", "", 64),         # PR 9722: x32
    ("4.4.0", "blockwise", "", 256),    # x128 from 3.11
    # the boundary, read at the tags: blockwise came with PR 6633 (62754e4b, 2025-11-27), first
    # released in v3.11.0 (utils.py get_padding_to l.314-328); v3.10.0 (l.308-317) has no
    # blockwise branch. examples/megatron/fp8/llm.sh (2fe36a35, version.py 3.11.0.dev0) is 3.11.
    ("3.10.0", "blockwise", "", 16),
    ("3.11.0", "blockwise", "", 256),
    ("4.4.0", "mxfp8", " --attention_backend fused", 128),   # max(p*16, p*64)
    ("3.6.0", "delayed", "", 2),        # no FP8 padding yet: TP under SP only
])
def test_ms_swift_pads_by_its_version(tmp_path: Path, version: str, recipe: str, extra: str,
                                      pad: int) -> None:
    f = _facts(tmp_path, "train.sh", SWIFT.format(recipe=recipe, extra=extra),
               **{"pkg.ms-swift": version})
    v = _intent(f)
    assert (v["packing"], v["seq_len"], v["micro_batch"], v["pad_multiple"]) == \
        (True, 4096, 1, pad)


def test_ms_swift_not_installed_leaves_the_padding_unknown(tmp_path: Path) -> None:
    v = _intent(_facts(tmp_path, "train.sh", SWIFT.format(recipe="mxfp8", extra="")))
    assert isinstance(v["pad_multiple"], Unknown) and "ms-swift" in v["pad_multiple"].reason


def test_ms_swift_padding_free_off_is_not_packed(tmp_path: Path) -> None:
    v = _intent(_facts(tmp_path, "train.sh", SWIFT.format(recipe="delayed", extra="").replace(
        "--packing true", "--padding_free false"), **{"pkg.ms-swift": "4.4.0"}))
    assert v["packing"] is False


AXOLOTL = ("base_model: meta-llama/Llama-3.2-3B\nsequence_len: 512\nmicro_batch_size: 16\n"
           "sample_packing: true\nfp8: true\n{extra}")


@pytest.mark.parametrize(("extra", "pad"), [
    ("pad_to_sequence_len: true\n", 512),          # examples/llama-3/3b-fp8-fsdp2.yaml
    ("", 64),                                      # the collator's default multiple
    ("pad_to_multiple_of: 128\n", 128),
    ("pad_to_sequence_len: false\n", 1),           # padded to the longest row only
    ("batch_flattening: true\n", 1),
])
def test_axolotl_padding(tmp_path: Path, extra: str, pad: int) -> None:
    v = _intent(_facts(tmp_path, "axolotl.yaml", AXOLOTL.format(extra=extra)))
    assert (v["packing"], v["seq_len"], v["micro_batch"], v["pad_multiple"]) == (True, 512, 16, pad)


@pytest.mark.parametrize(("extra", "packing", "pad"), [
    ("packing: true\ncutoff_len: 2048\n", True, 2056),   # cutoff_len + 1, collator multiple of 8
    ("neat_packing: true\ncutoff_len: 4095\n", True, 4096),
    ("cutoff_len: 2048\n", False, 8),                   # stage sft: packing off by default
])
def test_llamafactory_packing(tmp_path: Path, extra: str, packing: bool, pad: int) -> None:
    v = _intent(_facts(tmp_path, "lf.yaml", (
        "model_name_or_path: Qwen/Qwen3-8B\nstage: sft\nfinetuning_type: full\nfp8: true\n"
        "per_device_train_batch_size: 2\n" + extra)))
    assert (v["packing"], v["pad_multiple"], v["micro_batch"]) == (packing, pad, 2)


def test_torchtitan_samples_are_fixed_length(tmp_path: Path) -> None:
    v = _intent(_facts(tmp_path, "llama3.toml", (
        '[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["float8"]\n'
        "[training]\nlocal_batch_size = 2\nseq_len = 8192\n"
        "[parallelism]\nexpert_parallel_degree = 4\n")))
    assert (v["seq_len"], v["micro_batch"], v["packing"], v["ep"]) == (8192, 2, False, 4)


def test_nemo_packed_sequence_and_moe(tmp_path: Path) -> None:
    v = _intent(_facts(tmp_path, "megatron_gpt_config.yaml", (
        "trainer:\n  devices: 8\n  precision: bf16-mixed\nmodel:\n  mcore_gpt: true\n"
        "  encoder_seq_length: 4096\n  micro_batch_size: 1\n  transformer_engine: true\n"
        "  fp8: true\n  num_moe_experts: 8\n  moe_router_topk: 2\n"
        "  data:\n    train_ds:\n      packed_sequence: true\n")))
    assert (v["seq_len"], v["micro_batch"], v["packing"]) == (4096, 1, True)
    assert (v["moe.experts"], v["moe.top_k"], v["ep"]) == (8, 2, 1)


def test_the_public_swift_scenarios_end_to_end() -> None:
    # tests/scenarios/{swift-mxfp8-packing-tp-sp, healthy-swift-blockwise-packing-tp-sp}: the
    # same public script; only the recipe differs.
    def effective_of(folder: str) -> dict:
        read = read_paths([str(SCENARIOS / folder / "vlm.sh")])
        facts = apply_assumptions(Facts(read.facts, read.provenance),
                                  {"pkg.ms-swift": "4.4.0", "pkg.transformer-engine": "2.8.0",
                                   "pkg.megatron-core": "0.15.0"})
        values, prov = derive(facts)
        out = effective.apply(facts.merged(values, prov, source="intent"))
        return {k: out.get(k) for k in ("intent.pad_multiple", "effective.token_align_needed",
                                        "effective.token_align_ok")}
    assert effective_of("swift-mxfp8-packing-tp-sp") == {
        "intent.pad_multiple": 32, "effective.token_align_needed": 64,
        "effective.token_align_ok": False}
    assert effective_of("healthy-swift-blockwise-packing-tp-sp") == {
        "intent.pad_multiple": 256, "effective.token_align_needed": 256,
        "effective.token_align_ok": True}
