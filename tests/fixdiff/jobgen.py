"""A real job from a rule's firing test case (its ``config.*`` facts written as the files their
framework reads; every other fact planned with ``--assume``), for the ``--diff`` round trips of
tests/fixdiff/test_rule_edits.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from preflight.facts import Unknown

SHELL = {"megatron": "torchrun --nproc-per-node 8 pretrain_gpt.py",
         "swift": "megatron sft --model Qwen/Qwen2.5-7B-Instruct",
         "hf_trainer": "python train.py"}
FILES = {"deepspeed": "ds.json", "torchtitan": "train.toml", "megatron": "train.sh",
         "swift": "train.sh"}
# What makes each YAML kind recognisable when its case names few keys.
MARKERS: dict[str, dict[str, Any]] = {
    "accelerate": {"compute_environment": "LOCAL_MACHINE"},
    # output_dir alone is any trainer's (frameworks/_claim.py): a TrainingArguments-only field
    "hf_trainer": {"output_dir": "out", "per_device_train_batch_size": 1},
    "llamafactory": {"stage": "sft", "finetuning_type": "full", "torch_compile": True},
    "axolotl": {"base_model": "meta-llama/Llama-3.2-3B", "micro_batch_size": 1,
                "sequence_len": 2048},
    "llmfoundry": {"max_seq_len": 2048},
    "torchtitan": {"job": {"dump_folder": "./outputs"}, "compile": {"enable": True}},
    "lightning": {"seed_everything": 1},
}


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in flat.items():
        node = out
        *parents, leaf = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def _flag(name: str, value: Any, style: str) -> str | None:
    flag = "--" + (name.replace("_", "-") if style == "-" else name)
    if value is True:
        return flag
    if value is False or value is None:
        return None
    if isinstance(value, list):
        return f"{flag} " + " ".join(str(v) for v in value)
    return f"{flag} {value}"


def write_job(job: Path, facts: Mapping[str, Any], skip: set[str]) -> tuple[list[str], dict[str,
                                                                                    str]]:
    """Files for ``facts`` in ``job``; returns (the file names, the --assume map). ``skip``:
    facts the fix changes (never planned: the patched files must decide them)."""
    by_kind: dict[str, dict[str, Any]] = {}
    assume: dict[str, str] = {"gpu": "H100", "pkg.torchao": "none", "pkg.torch": "2.8.0+cu128"}
    for name, value in facts.items():
        if isinstance(value, Unknown):
            continue
        if name.startswith("config."):
            _, kind, rest = name.split(".", 2)
            by_kind.setdefault(kind, {})[rest] = value
        elif name in skip:
            continue
        elif name.startswith("pkg.") and name.endswith(".version"):
            assume[name[:-len(".version")]] = str(value)
        elif name == "gpu.min_cc" or name == "gpu.cc":
            assume.pop("gpu", None)
            assume["gpu.cc"] = str(value)
        else:
            assume[name] = json.dumps(value) if isinstance(value, (list, dict)) else (
                str(value).lower() if isinstance(value, bool) else str(value))
    names: list[str] = []
    cli = by_kind.get("accelerate", {})
    cli_flags = {k[4:]: v for k, v in cli.items() if k.startswith("cli.")}
    for kind, flat in sorted(by_kind.items()):
        flat = {k: v for k, v in flat.items() if not k.startswith("cli.")}
        if kind in SHELL:
            if kind == "hf_trainer" and kind not in ("megatron", "swift") and "accelerate" in \
                    by_kind:
                pass
            style = "-" if kind == "megatron" else "_"
            flags = [f for f in (_flag(k, v, style) for k, v in flat.items()) if f]
            if kind == "hf_trainer":
                data = {**MARKERS["hf_trainer"], **nest(flat)}
                (job / "train.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
                names.append("train.yaml")
                continue
            body = " \\\n    ".join([SHELL[kind], *flags])
            (job / FILES[kind]).write_text(f"#!/bin/bash\n{body}\n")
            names.append(FILES[kind])
        elif kind == "deepspeed":
            (job / "ds.json").write_text(json.dumps(nest(flat), indent=2) + "\n")
            names.append("ds.json")
        elif kind == "torchtitan":
            import tomlkit

            data = {**MARKERS["torchtitan"], **nest(flat)}
            (job / "train.toml").write_text(tomlkit.dumps(data))
            names.append("train.toml")
        elif kind == "prime_rl":
            import tomlkit

            # prime-rl reads its TOML through `uv run rl @ FILE` (frameworks/prime_rl_launch.py)
            (job / "rl.toml").write_text(tomlkit.dumps(nest(flat)))
            (job / "run.sh").write_text("#!/bin/bash\nuv run rl @ rl.toml\n")
            names.extend(["run.sh", "rl.toml"])
        elif kind == "cosmos_rl":
            import tomlkit

            # redis: a Cosmos-RL Config field of its own (frameworks/cosmos_rl.py _TOP_OWN)
            data = {"redis": "12800", **nest(flat)}
            (job / "cosmos.toml").write_text(tomlkit.dumps(data))
            names.append("cosmos.toml")
        elif flat:
            data = {**MARKERS.get(kind, {}), **nest(flat)}
            (job / f"{kind}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
            names.append(f"{kind}.yaml")
    if cli_flags:
        flags = [f for f in (_flag(k, v, "_") for k, v in cli_flags.items()) if f]
        line = " ".join(["accelerate launch", *flags, "train.py"])
        (job / "launch.sh").write_text(f"#!/bin/bash\n{line}\n")
        names.append("launch.sh")
    return names, assume
