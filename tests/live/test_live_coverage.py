"""FP8 coverage by work (preflight/base/fp8coverage.py), with real torch and real torchao modules.

The issue's case: on FSDP2 with torchao, a model with 1 of its 9 Linear layers converted got only
the info "some Linear layers stay in high precision", the same as a model whose only BF16 layer is
the LM head. Here both are built for real, inspected, and judged by the bundled runtime rules;
the FSDP2 case shards the models over two real gloo processes (DTensor parameters).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
float8 = pytest.importorskip("torchao.float8")

import preflight  # noqa: E402
from preflight.base.fp8coverage import weight_elements  # noqa: E402
from preflight.facts import Unknown  # noqa: E402
from preflight.live import model_facts  # noqa: E402

nn = torch.nn
H, FFN, VOCAB, LAYERS = 64, 256, 512, 2


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(H, H, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(H, FFN, bias=False), nn.Linear(H, FFN, bias=False)
        self.down = nn.Linear(FFN, H, bias=False)


class Decoder(nn.Module):
    """A Llama-shaped decoder: embedding, layers of 7 projections, an untied LM head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, H)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(H)
        self.lm_head = nn.Linear(H, VOCAB, bias=False)


class Experts(nn.Module):
    """A Mixtral-shaped MoE block: a router and 8 experts of 2 projections each."""

    def __init__(self, config: object | None) -> None:
        super().__init__()
        if config is not None:
            self.config = config
        self.attn = nn.Linear(H, H, bias=False)
        self.router = nn.Linear(H, 16, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(H, FFN, bias=False), nn.Linear(FFN, H, bias=False))
            for _ in range(8))


def _convert(model: nn.Module, keep: "callable") -> nn.Module:
    cfg = float8.Float8LinearConfig(emulate=True)
    return float8.convert_to_float8_training(model, config=cfg,
                                             module_filter_fn=lambda m, fqn: keep(fqn))


LAYER_WORK = 4 * H * H + 3 * H * FFN
TOTAL = LAYERS * LAYER_WORK + H * VOCAB


def test_only_the_lm_head_in_high_precision_keeps_most_work_in_fp8() -> None:
    model = _convert(Decoder(), lambda fqn: fqn != "lm_head")
    facts = model_facts(model)
    expected = round(LAYERS * LAYER_WORK / TOTAL, 4)
    assert facts["runtime.fp8.linear_params_share"] == expected
    assert facts["runtime.fp8.gemm_flops_share"] == expected
    assert facts["runtime.fp8.gemm_flops_basis"].startswith("dense")
    assert facts["runtime.fp8.high_precision_top"] == [
        {"name": "lm_head", "share": round(H * VOCAB / TOTAL, 4)}]


def test_one_small_layer_converted_is_mostly_high_precision() -> None:
    model = _convert(Decoder(), lambda fqn: fqn == "layers.0.q")
    facts = model_facts(model)
    assert facts["runtime.fp8.converted"] == 1
    assert facts["runtime.fp8.gemm_flops_share"] == round(H * H / TOTAL, 4)
    top = facts["runtime.fp8.high_precision_top"]
    assert top[0] == {"name": "lm_head", "share": round(H * VOCAB / TOTAL, 4)}
    assert len(top) == 8 and all(a["share"] >= b["share"] for a, b in zip(top, top[1:]))


def _ids(report: object) -> set[str]:
    return {f.rule_id for f in report.findings}


def test_rules_warn_on_mostly_bf16_and_stay_informative_on_the_usual_case() -> None:
    usual = preflight.inspect(_convert(Decoder(), lambda fqn: fqn != "lm_head"))
    assert "FP8D-RT-0003" in _ids(usual) and "FP8D-RT-0008" not in _ids(usual)
    mostly_bf16 = preflight.inspect(_convert(Decoder(), lambda fqn: fqn == "layers.0.q"))
    assert "FP8D-RT-0008" in _ids(mostly_bf16) and "FP8D-RT-0003" not in _ids(mostly_bf16)
    finding = next(f for f in mostly_bf16.findings if f.rule_id == "FP8D-RT-0008")
    assert finding.severity.value == "warning" and "lm_head" in finding.message


def test_moe_experts_count_by_the_tokens_they_see() -> None:
    config = SimpleNamespace(num_local_experts=8, num_experts_per_tok=2)
    model = _convert(Experts(config), lambda fqn: fqn.startswith("experts."))
    facts = model_facts(model)
    expert = 2 * H * FFN
    weights = H * H + H * 16 + 8 * expert
    assert facts["runtime.fp8.linear_params_share"] == round(8 * expert / weights, 4)
    work = H * H + H * 16 + 8 * expert * 2 / 8
    assert facts["runtime.fp8.gemm_flops_share"] == round(8 * expert * 2 / 8 / work, 4)
    assert "2/8" in facts["runtime.fp8.gemm_flops_basis"]


def test_moe_without_router_counts_is_unknown_and_the_rules_say_undetermined() -> None:
    model = _convert(Experts(None), lambda fqn: fqn.startswith("experts."))
    facts = model_facts(model)
    assert isinstance(facts["runtime.fp8.gemm_flops_share"], Unknown)
    assert "top-k" in facts["runtime.fp8.gemm_flops_share"].reason
    report = preflight.inspect(model)
    undetermined = {u.rule_id for u in report.undetermined}
    assert {"FP8D-RT-0008", "FP8D-RT-0003"} <= undetermined


def test_a_model_without_weight_matrices_is_unknown_not_zero() -> None:
    facts = model_facts(nn.Sequential(nn.LayerNorm(8)))
    assert isinstance(facts["runtime.fp8.gemm_flops_share"], Unknown)


def test_weight_elements_skip_biases_and_norm_weights() -> None:
    assert weight_elements(nn.Linear(8, 4)) == 32
    assert weight_elements(nn.LayerNorm(8)) == 0


_FSDP2_RANK = textwrap.dedent("""
    import json, sys
    import torch, torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    sys.path.insert(0, sys.argv[3])
    import test_live_coverage as t
    from preflight.live import model_facts

    rank, store = int(sys.argv[1]), sys.argv[2]
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        mesh = init_device_mesh("cpu", (2,))
        out = {}
        for case, keep in (("usual", lambda fqn: fqn != "lm_head"),
                           ("one", lambda fqn: fqn == "layers.0.q")):
            torch.manual_seed(0)
            model = t._convert(t.Decoder(), keep)
            for layer in model.layers:
                fully_shard(layer, mesh=mesh)
            fully_shard(model, mesh=mesh)
            kinds = sorted({type(p).__name__ for p in model.parameters()})
            facts = model_facts(model)
            out[case] = {"kinds": kinds, **{k: facts[k] for k in (
                "runtime.fp8.gemm_flops_share", "runtime.fp8.linear_params_share")}}
        print(json.dumps(out))
    finally:
        dist.destroy_process_group()
""")


@pytest.mark.slow
def test_fsdp2_sharded_models_give_the_unsharded_shares(tmp_path) -> None:
    """Two real gloo ranks shard the models with FSDP2: DTensor parameters report their global
    size, so each rank computes the shares of the whole model."""
    script = tmp_path / "rank.py"
    script.write_text(_FSDP2_RANK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [os.path.dirname(os.path.dirname(preflight.__file__)), os.environ.get("PYTHONPATH", "")])}
    here = os.path.dirname(__file__)
    procs = [subprocess.Popen([sys.executable, str(script), str(rank), str(tmp_path / "store"),
                               here], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env, cwd=tmp_path)
             for rank in (0, 1)]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert results[0] == results[1]
    for case, keep in (("usual", lambda fqn: fqn != "lm_head"),
                       ("one", lambda fqn: fqn == "layers.0.q")):
        assert "DTensor" in results[0][case]["kinds"]
        plain = model_facts(_convert(Decoder(), keep))
        assert results[0][case]["runtime.fp8.gemm_flops_share"] == \
            plain["runtime.fp8.gemm_flops_share"]
        assert results[0][case]["runtime.fp8.linear_params_share"] == \
            plain["runtime.fp8.linear_params_share"]
    assert results[0]["one"]["runtime.fp8.gemm_flops_share"] < 0.5 < \
        results[0]["usual"]["runtime.fp8.gemm_flops_share"]
