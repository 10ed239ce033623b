"""Benchmark of the rule engine: load and evaluate N generated rules against a realistic snapshot.

The rules are clones of realistic rule shapes (package version ranges as specifiers and OSV
events, compute-capability checks, config values, regexes, not / any nesting, presence tests)
with mutated packages, bounds and values; the snapshot has ~300 facts shaped like a real H100
node (NGC-style torch version, ~60 packages, DeepSpeed and accelerate config values, a few
Unknowns). Rule files go to a temporary folder that is removed afterwards.

    python benchmarks/bench_engine.py            # 1,000 rules; prints medians
    python benchmarks/bench_engine.py --rules 100 --repeat 50

It also times the bundled rule base (rules/), cold, and its evaluation against the snapshot.

Targets (issue #3): evaluating 1,000 rules <= 50 ms (median); loading ~100 rules < 60 ms.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from preflight.engine import evaluate, load_rules, loader  # noqa: E402
from preflight.facts import Facts, Unknown  # noqa: E402

PACKAGES = [
    "torch", "transformer-engine", "transformer-engine-cu12", "transformer-engine-torch",
    "deepspeed", "torchao", "accelerate", "transformers", "ms-amp", "flash-attn", "llm-foundry",
    "mosaicml", "megatron-core", "lightning", "torchtitan", "peft", "nvidia-ml-py", "triton",
    "numpy", "safetensors", "tokenizers", "datasets", "huggingface-hub", "packaging", "pyyaml",
    "nvidia-cudnn-cu12", "nvidia-cublas-cu12", "nvidia-nccl-cu12", "apex", "bitsandbytes",
    "xformers", "einops", "sentencepiece", "protobuf", "pydantic", "omegaconf", "hydra-core",
    "wandb", "tensorboard", "pytorch-lightning", "nemo-toolkit", "megatron-lm", "composer",
    "streaming", "torchvision", "torchaudio", "fsspec", "aiohttp", "requests", "rich", "psutil",
    "ninja", "pybind11", "cmake", "setuptools", "wheel", "filelock", "jinja2", "sympy", "networkx",
]


def snapshot(rng: random.Random) -> Facts:
    """~300 facts shaped like an H100 node running an accelerate + DeepSpeed FP8 job."""
    v: dict[str, Any] = {}
    prov: dict[str, str] = {}
    for name in PACKAGES:
        ver = f"{rng.randint(0, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 5)}"
        v[f"pkg.{name}.version"] = ver
        v[f"pkg.{name}.public"] = ver
        v[f"pkg.{name}.location"] = "/usr/lib/python3/site-packages"
        prov[f"pkg.{name}.version"] = "importlib.metadata"
    v["pkg.torch.version"] = "2.4.0a0+3bcc3cd.nv24.07"
    v["pkg.torch.local"] = "3bcc3cd.nv24.07"
    v["pkg.transformer-engine.version"] = "1.8.0+37280ec"
    v["pkg.accelerate.version"] = "1.2.1"
    v["pkg.deepspeed.version"] = "0.15.4"
    v["pkg.ms-amp.version"] = Unknown("metadata unreadable")
    v.update({
        "gpu.count": 8, "gpu.host_count": 8, "gpu.name": "NVIDIA H100 80GB HBM3",
        "gpu.names": ["NVIDIA H100 80GB HBM3"] * 8, "gpu.ccs": ["9.0"] * 8, "gpu.min_cc": "9.0",
        "gpu.max_cc": "9.0", "gpu.cc": "9.0", "gpu.heterogeneous": False, "gpu.arch": "hopper",
        "gpu.driver": "550.90.07", "gpu.cuda_driver": "12.4", "gpu.mig": False,
        "gpu.mem_total_mib": [81559] * 8, "gpu.min_mem_mib": 81559, "gpu.source": "nvml",
        "cuda.torch_build": "12.4", "cuda.cudnn": "9.1.0", "cuda.nvcc": Unknown("nvcc not found"),
        "host.python": "3.10.12", "host.os": "Linux", "host.arch": "x86_64", "host.cpu_count": 96,
        "host.shm_bytes": 64 * 2**30, "host.container": "docker", "host.launcher": "accelerate",
        "intent.fp8": True, "intent.backend": "te", "intent.recipe": "delayed",
        "intent.format": "hybrid", "intent.distributed": "deepspeed", "intent.zero_stage": 3,
        "intent.activation_checkpointing": True, "intent.compile": False,
        "intent.precision": "bf16", "intent.shapes.hidden": 4096, "intent.shapes.ffn": 14336,
    })
    for i in range(40):
        v[f"env.NCCL_VAR_{i}"] = str(i)
    v["env.NVTE_FP8_DPA"] = "1"
    ds = {
        "zero_optimization.stage": 3, "zero_optimization.offload_optimizer.device": "cpu",
        "zero_optimization.overlap_comm": True, "zero_optimization.contiguous_gradients": True,
        "bf16.enabled": True, "fp16.enabled": False, "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 4,
        "gradient_clipping": 1.0, "steps_per_print": 100, "wall_clock_breakdown": False,
    }
    for key, value in ds.items():
        v[f"config.deepspeed.{key}"] = value
        prov[f"config.deepspeed.{key}"] = f"/job/ds_config.json:{rng.randint(2, 40)}"
    acc = {"distributed_type": "DEEPSPEED", "mixed_precision": "fp8", "num_processes": 8,
           "fp8_config.backend": "TE", "fp8_config.fp8_format": "HYBRID",
           "fp8_config.amax_history_len": 1024, "fp8_config.amax_compute_algo": "max",
           "deepspeed_config.deepspeed_config_file": "/job/ds_config.json"}
    for key, value in acc.items():
        v[f"config.accelerate.{key}"] = value
        prov[f"config.accelerate.{key}"] = f"/job/accelerate.yaml:{rng.randint(2, 30)}"
    for i in range(60):
        v[f"config.llmfoundry.model.layer_{i}.width"] = 4096
    while len(v) < 300:
        v[f"runtime.module_{len(v)}.fp8"] = rng.random() < 0.5
    return Facts(v, prov)


def _ver(rng: random.Random) -> str:
    return f"{rng.randint(0, 3)}.{rng.randint(0, 20)}"


def rule_doc(i: int, rng: random.Random) -> dict[str, Any]:
    """One rule of a randomly chosen realistic shape."""
    pkg = rng.choice(PACKAGES)
    lo, hi = sorted((_ver(rng), _ver(rng)), key=lambda s: tuple(map(int, s.split("."))))
    shape = i % 8
    fp8 = {"fact": "intent.fp8", "op": "eq", "value": True}
    if shape == 0:
        when = {"all": [fp8, {"fact": "intent.distributed", "op": "eq",
                              "value": rng.choice(["deepspeed", "fsdp2", "ddp"])},
                        {"fact": f"pkg.{pkg}.version", "op": "version_in",
                         "value": f">={lo},<{hi}"}]}
    elif shape == 1:
        when = {"all": [fp8, {"fact": f"pkg.{pkg}.version", "op": "version_in",
                              "value": [{"introduced": lo}, {"fixed": hi}]}]}
    elif shape == 2:
        when = {"all": [fp8, {"any": [
            {"fact": "gpu.min_cc", "op": "lt", "value": rng.choice(["8.9", "9.0", "10.0"])},
            {"fact": "gpu.name", "op": "matches", "value": "(?i).*\\b(A100|V100|T4|L4)\\b.*"}]}]}
    elif shape == 3:
        when = {"all": [
            {"fact": "config.deepspeed.zero_optimization.stage", "op": "eq",
             "value": rng.choice([2, 3])},
            {"fact": "intent.recipe", "op": "in", "value": ["delayed", "current"]},
            {"not": {"fact": "config.deepspeed.train_batch_size", "op": "type_is",
                     "value": "int"}}]}
    elif shape == 4:
        when = {"all": [fp8, {"fact": "env.NVTE_FP8_DPA", "op": "eq", "value": "1"},
                        {"fact": "pkg.transformer-engine.version", "op": "lt", "value": hi}]}
    elif shape == 5:
        when = {"all": [fp8, {"fact": "gpu.ccs", "op": "contains", "value": "8.0"}]}
    elif shape == 6:
        when = {"all": [{"fact": "intent.backend", "op": "eq", "value": "te"},
                        {"fact": f"pkg.{pkg}.version", "op": "missing"},
                        {"fact": "pkg.ms-amp.version", "op": "exists"}]}
    else:
        when = {"any": [
            {"all": [{"fact": "pkg.torch.version", "op": "lt", "value": hi},
                     {"fact": "cuda.torch_build", "op": "version_in", "value": f">={lo}"}]},
            {"fact": "config.accelerate.mixed_precision", "op": "matches", "value": "fp8|bf16"},
            {"fact": "host.shm_bytes", "op": "lt", "value": rng.randint(1, 2**36)}]}
    rid = f"FP8D-TE-{i:04d}"
    return {
        "schema_version": "1.0", "id": rid, "title": f"Generated rule {i}",
        "severity": rng.choice(["error", "warning", "info"]), "confidence": "inferred",
        "when": when,
        "message": f"{{pkg.{pkg}.version}} on {{gpu.name}} with {{intent.recipe}} (rule {i}).",
        "fix": {"text": f"Upgrade {pkg}.", "commands": [f"pip install -U {pkg}"]},
        "references": [{"type": "WEB", "url": f"https://example.org/{i}"}],
        "tests": [{"facts": {"intent.fp8": True}, "expect": "quiet"}],
    }


def _timed(fn: Any, repeat: int) -> dict[str, float]:
    """Median and min of wall and CPU (process) time in ms. The CPU figure is what to compare
    across runs on a shared machine, where wall time includes waiting for a core."""
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpus.append((time.process_time() - c0) * 1000)
        walls.append((time.perf_counter() - w0) * 1000)
    return {"wall_median_ms": round(statistics.median(walls), 2),
            "wall_min_ms": round(min(walls), 2),
            "cpu_median_ms": round(statistics.median(cpus), 2),
            "cpu_min_ms": round(min(cpus), 2)}


def _write_rules(folder: Path, n: int, rng: random.Random) -> None:
    import yaml

    for i in range(n):
        path = folder / f"FP8D-TE-{i:04d}.yaml"
        path.write_text(yaml.safe_dump(rule_doc(i, rng), sort_keys=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--base-rules", type=int, default=100,
                    help="size of the rule base whose load time is on the check path")
    ap.add_argument("--repeat", type=int, default=101, help="evaluations to take the median of")
    ap.add_argument("--load-repeat", type=int, default=9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    facts = snapshot(rng)
    out: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "facts": len(facts)}
    with tempfile.TemporaryDirectory() as tmp:
        big, base = Path(tmp) / "big", Path(tmp) / "base"
        big.mkdir()
        base.mkdir()
        _write_rules(big, args.rules, rng)
        _write_rules(base, args.base_rules, random.Random(args.seed + 1))

        def cold(folder: Path) -> None:
            loader._CACHE.clear()
            load_rules([str(folder)])

        out[f"load_cold_{args.base_rules}"] = _timed(lambda: cold(base), args.load_repeat)
        out[f"load_cold_{args.rules}"] = _timed(lambda: cold(big), max(3, args.load_repeat // 3))
        ruleset = load_rules([str(big)])
        out[f"load_cached_{args.rules}"] = _timed(lambda: load_rules([str(big)]),
                                                  args.load_repeat)
    bundled = loader.bundled_rules_dir()
    if bundled.is_dir():
        n = len(load_rules())

        def cold_bundled() -> None:
            loader._CACHE.clear()
            load_rules()

        out[f"load_cold_bundled_{n}"] = _timed(cold_bundled, args.load_repeat)

        def cold_bundled_check() -> None:
            loader._CACHE.clear()
            load_rules(with_tests=False)  # what `fp8-doctor check` loads (no inline tests)

        out[f"load_cold_bundled_{n}_check"] = _timed(cold_bundled_check, args.load_repeat)
        out[f"evaluate_bundled_{n}"] = _timed(lambda: evaluate(load_rules(), facts), args.repeat)
    evaluate(ruleset, facts)  # warm the version-key cache, as any run after the first rule does
    out[f"evaluate_{len(ruleset)}"] = _timed(lambda: evaluate(ruleset, facts), args.repeat)
    values = facts.values
    out[f"conditions_only_{len(ruleset)}"] = _timed(
        lambda: [r.when.fn(values) for r in ruleset.rules], args.repeat)
    result = evaluate(ruleset, facts)
    out["findings"] = len(result.findings)
    out["undetermined"] = len(result.undetermined)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, val in out.items():
            if isinstance(val, dict):
                val = "  ".join(f"{k.replace('_ms', '')} {v:.2f}" for k, v in val.items()) + " (ms)"
            print(f"{key:>22}: {val}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
