"""Framework defaults per version, from each framework's module (issue 14 item 2)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths


def _intent(tmp_path: Path, files: dict[str, str], extra: dict | None = None) -> tuple[dict, dict]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    read = read_paths([str(tmp_path / n) for n in files])
    assert [p for p in read.problems if p.level == "error"] == []
    facts = Facts(read.facts, read.provenance)
    if extra:
        facts = facts.merged(extra, source="importlib.metadata")
    values, prov = derive(facts)
    return ({k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()})


MEGATRON = ("#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 "
            "--num-attention-heads 4 --bf16 --fp8-format hybrid --fp8-recipe blockwise\n")


def _megatron_facts() -> Facts:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "run.sh").write_text(MEGATRON)
        read = read_paths([str(Path(tmp) / "run.sh")])
    return Facts(read.facts, read.provenance)


MEGATRON_FACTS = _megatron_facts()


@given(version=st.tuples(st.integers(0, 1), st.integers(0, 20), st.integers(0, 3)))
def test_megatron_transformer_impl_default_follows_the_installed_core(version: tuple) -> None:
    text = ".".join(map(str, version))
    facts = MEGATRON_FACTS.merged({"pkg.megatron-core.version": text},
                                  source="importlib.metadata")
    values, prov = derive(facts)
    values, prov = ({k[7:]: v for k, v in values.items()}, {k[7:]: v for k, v in prov.items()})
    # megatron/training/arguments.py: 'local' at core_v0.5.0, 'transformer_engine' from 0.6.0
    expected = "te" if version >= (0, 6, 0) else "none"
    assert values["backend"] == expected
    assert text in prov["backend"]


def test_megatron_default_undetermined_when_core_is_not_installed_here(tmp_path: Path) -> None:
    values, _ = _intent(tmp_path, {"run.sh": MEGATRON})
    assert isinstance(values["backend"], Unknown)
    assert "not installed here" in values["backend"].reason


def test_megatron_explicit_impl_beats_the_default(tmp_path: Path) -> None:
    values, _ = _intent(tmp_path, {"run.sh": MEGATRON.replace("--bf16", "--bf16 "
                                                              "--transformer-impl local")},
                        {"pkg.megatron-core.version": "0.12.0"})
    assert values["backend"] == "none"


HF = "output_dir: out\nper_device_train_batch_size: 4\nbf16: true\n"


def test_hf_trainer_torch_compile_defaults_to_false(tmp_path: Path) -> None:
    values, prov = _intent(tmp_path, {"args.yaml": HF})
    assert values["compile"] is False
    assert "TrainingArguments default" in prov["compile"]


def test_an_explicit_setting_of_another_framework_beats_hf_default(tmp_path: Path) -> None:
    acc = ("distributed_type: MULTI_GPU\nmixed_precision: bf16\nnum_processes: 2\n"
           "dynamo_config:\n  dynamo_backend: INDUCTOR\n")
    values, prov = _intent(tmp_path, {"acc.yaml": acc, "args.yaml": HF})
    assert values["compile"] is True
    assert prov["compile"].endswith("acc.yaml:5")
