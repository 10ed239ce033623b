"""`check --diff` round trips: for every rule whose fix is a config edit (``fix.edits``), a real
job in which it fires, the diff applied with real ``git apply``, and a check of the patched job
in which the rule is quiet and no new warning or error appears."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from preflight import api, engine
from preflight.fixdiff import render_diff

ACC = """\
# the team's accelerate config (comments and order must survive the fix)
compute_environment: LOCAL_MACHINE
distributed_type: {dist}   # the cluster
mixed_precision: fp8
num_processes: 8
{extra}"""

NEMO = """\
trainer:
  devices: 8
  precision: bf16-mixed
model:
  micro_batch_size: 1
  tensor_model_parallel_size: 1
  fp8: true  # FP8 on
  transformer_engine: false
  mcore_gpt: true
"""

LLMF = """\
max_seq_len: 2048
precision: amp_fp8
model:
  name: mpt_causal_lm
  d_model: 2048
  fc_type: te
fsdp_config:
  sharding_strategy: FULL_SHARD
  activation_checkpointing: true
  te_checkpoint_wrapper: true
"""

MEG = """\
#!/bin/bash
torchrun --nproc-per-node 8 pretrain_gpt.py \\
    --transformer-impl transformer_engine \\
    --fp8-format hybrid --fp8-interval 4 \\
    --bf16
"""

HF = """\
output_dir: out
per_device_train_batch_size: 4
learning_rate: 1.0e-5
bf16: true
"""

LF = """\
### model
model_name_or_path: meta-llama/Llama-3.1-8B
### method
stage: sft
do_train: true
finetuning_type: full
fp8_enable_fsdp_float8_all_gather: true  # the FSDP2 float8 all-gather
### train
output_dir: saves/llama3-8b/full/sft
per_device_train_batch_size: 1
bf16: true
torch_compile: true
"""

CASES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "FP8D-ACC-0008": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=(
        "fp8_config:\n  backend: TE\n  override_linear_precision: (false, false, false)\n"))},
        {"pkg.accelerate": "1.6.0"}),
    "FP8D-ACC-0009": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=(
        "fp8_config:\n  backend: TE\n  override_linear_precision: false\n"))},
        {"pkg.accelerate": "1.6.0"}),
    "FP8D-TE-0004": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=(
        "fp8_config:\n  backend: TE\n  override_linear_precision: [false, false, true]\n"))},
        {"pkg.accelerate": "1.9.0", "pkg.transformer-engine": "2.4.0"}),
    "FP8D-TE-0005": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=(
        "fp8_config:\n  backend: TE\n  interval: 10\n  fp8_format: HYBRID\n"))},
        {"pkg.accelerate": "1.9.0", "pkg.transformer-engine": "2.4.0"}),
    "FP8D-TE-0017": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=(
        "fp8_config:\n  backend: TE\n  use_mxfp8_block_scaling: true\n"
        "  amax_compute_algo: max\n  amax_history_len: 16\n"))},
        {"pkg.accelerate": "1.11.0", "pkg.transformer-engine": "2.8.0"}),
    "FP8D-ACC-0023": ({"acc.yaml": ACC.format(dist="FSDP", extra=(
        "fp8_config:\n  backend: AO\nfsdp_config:\n  fsdp_version: 2\n"
        "  fsdp_cpu_ram_efficient_loading: true\n"))},
        {"pkg.accelerate": "1.11.0", "pkg.torchao": "0.13.0"}),
    "FP8D-ACC-0025": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=(
        "fp8_config:\n  backend: TE\n"))}, {"pkg.accelerate": "1.6.0"}),
    "FP8D-TAO-0003": ({"acc.yaml": ACC.format(dist="FSDP", extra=(
        "fp8_config:\n  backend: AO\n  enable_fsdp_float8_all_gather: true\n"
        "fsdp_config:\n  fsdp_version: 1\n"))},
        {"pkg.accelerate": "1.11.0", "pkg.torchao": "0.13.0"}),
    "FP8D-DS-0001": ({"ds.json": json.dumps({"bf16": {"enabled": True}, "fp16": {
        "enabled": True}, "zero_optimization": {"stage": 2}}, indent=2)}, {}),
    "FP8D-DS-0002": ({"acc.yaml": ACC.format(dist="DEEPSPEED", extra=(
        "deepspeed_config:\n  deepspeed_config_file: ds.json\n")),
        "ds.json": json.dumps({"fp16": {"enabled": True}, "bf16": {"enabled": "auto"},
                               "zero_optimization": {"stage": 2}}, indent=2)},
        {"pkg.accelerate": "1.11.0"}),
    "FP8D-DS-0003": ({"acc.yaml": ACC.format(dist="DEEPSPEED", extra=(
        "deepspeed_config:\n  deepspeed_config_file: ds.json\n")),
        "ds.json": json.dumps({"bf16": {"enabled": False}, "zero_optimization": {"stage": 2}},
                              indent=4)}, {"pkg.accelerate": "1.11.0"}),
    "FP8D-DS-0007": ({"ds.json": json.dumps({"bf16": {"enabled": True}, "data_types": {
        "grad_accum_dtype": "bf16"}, "zero_optimization": {"stage": 0}}, indent=2)},
        {"pkg.deepspeed": "0.15.4"}),
    "FP8D-HF-0001": ({"acc.yaml": ACC.format(dist="MULTI_GPU", extra=""), "train.yaml": HF},
                     {"pkg.accelerate": "1.11.0"}),
    "FP8D-LLMF-0006": ({"mpt.yaml": LLMF}, {"pkg.mosaicml": "0.25.0",
                                             "pkg.llm-foundry": "0.12.0"}),
    "FP8D-MEG-0012": ({"train.sh": MEG}, {"pkg.transformer-engine": "2.4.0"}),
    # sweep12: MXFP8 param gather through the reused grad buffer, overlapped (core 0.15-0.18)
    "FP8D-MEG-0063": ({"train.sh": MEG.replace("--fp8-format hybrid --fp8-interval 4", (
        "--fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather \\\n"
        "    --reuse-grad-buf-for-mxfp8-param-ag --overlap-param-gather"))},
        {"pkg.transformer-engine": "2.8.0", "pkg.megatron-core": "0.17.0", "gpu": "B200"}),
    # sweep13: the layer-wise (Muon) distributed optimizer with MXFP8 param gather (core 0.18)
    "FP8D-MEG-0065": ({"train.sh": MEG.replace("--fp8-format hybrid --fp8-interval 4", (
        "--fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather \\\n"
        "    --reuse-grad-buf-for-mxfp8-param-ag --optimizer muon --use-distributed-optimizer"))},
        {"pkg.transformer-engine": "2.12.0", "pkg.megatron-core": "0.18.0", "gpu": "B200"}),
    "FP8D-NEMO-0001": ({"nemo.yaml": NEMO}, {}),
    "FP8D-LF-0012": ({"lf.yaml": LF}, {"pkg.llamafactory": "0.9.5", "pkg.torchao": "0.13.0",
                                       "pkg.accelerate": "1.11.0"}),
}
GIT = shutil.which("git")


def _serious(report: api.Report) -> set[str]:
    return {f.rule_id for f in report.findings if f.severity.value in ("error", "warning")}


def test_every_rule_with_fix_edits_has_a_round_trip_case() -> None:
    """Hand-written here, or generated from the rule's ``fixed:`` case (test_rule_edits.py)."""
    from tests.fixdiff.test_rule_edits import CONFIG_FIXES

    with_edits = {r.id for r in engine.load_rules(None) if r.fix.edits}
    assert with_edits <= set(CASES) | set(CONFIG_FIXES), with_edits - set(CASES)


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_the_diff_applies_and_clears_the_finding(rule_id: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    files, assume = CASES[rule_id]
    # This machine's own torchao would change what accelerate does: plan it away unless named.
    assume = {"gpu": "H100", "pkg.torchao": "none", "pkg.torch": "2.8.0+cu128", **assume}
    job = tmp_path / "job"
    job.mkdir()
    for name, text in files.items():
        (job / name).write_text(text)
    monkeypatch.chdir(job)
    paths = sorted(files)
    before = api.check(paths, assume=assume)
    assert rule_id in {f.rule_id for f in before.findings}, rule_id
    diff = render_diff(before, paths)
    assert "--- a/" in diff, diff
    originals = {n: (job / n).read_text() for n in files}
    subprocess.run([GIT, "init", "-q"], cwd=job, check=True)
    proc = subprocess.run([GIT, "apply", "-p1", "-"], cwd=job, input=diff.encode(),
                          capture_output=True)
    assert proc.returncode == 0, (diff, proc.stderr.decode())
    after = api.check(paths, assume=assume)
    assert rule_id not in {f.rule_id for f in after.findings}, diff
    assert _serious(after) <= _serious(before), (diff, _serious(after) - _serious(before))
    # only the lines the fix names changed: every comment line of the original is still there
    for name, text in originals.items():
        new = (job / name).read_text()
        comments = [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]
        assert all(c in new.splitlines() for c in comments), name
    # and the check never wrote: the diff went to a string, the files changed only by git apply
    assert render_diff(after, paths).count("--- a/") <= diff.count("--- a/")
