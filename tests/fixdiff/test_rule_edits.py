"""Every rule whose fix is a config change carries ``fix.edits``, each shown to work end to end
(issue 24, item 3: 17 of 256 rules had one; deleting a key, setting ``init_device: cpu``, a bool
or a launch flag were "not a config edit").

"A config change" is read from the rule itself: a ``fire`` case whose ``fixed:`` block (what
following the fix changes, engine/fixcheck.py) touches ``config.*`` facts and nothing but
``config.*`` / ``intent.*``. For each such rule with edits, a real job is generated from that
case (tests/fixdiff/jobgen.py: its ``config.*`` facts written as the files their framework
reads, every other fact planned with ``--assume``), checked (the rule must fire), its ``--diff``
applied with real ``git apply``, and checked again: the rule is quiet and no new warning or
error appears. The few rules left without edits are named below with the reason.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from preflight import api, engine
from preflight.fixdiff import diff_output
from tests.fixdiff.jobgen import write_job

GIT = shutil.which("git")
RULES = engine.load_rules(None)

NOT_AN_EDIT = {
    "FP8D-TAO-0013": "two fixes of equal weight, neither a config edit to make for the user: "
                     "float8 all-gather off (slower: BF16 all-gathers), or a shard count that "
                     "divides the weights (the launch, not a key); the plain loop's switch is "
                     "Float8LinearConfig(...) in Python, which --diff does not edit",
    "FP8D-MBR-0001": "the fix is a Hydra override on the launch line (mixed_precision.fp8=...) "
                     "in place of model.fp8=...; --diff edits config files and flags, not "
                     "key=value overrides",
    "FP8D-MEG-0017": "the fix is the user's own quantizer factory (a Python import path)",
    "FP8D-TUNE-0001": "the fix is another recipe on the tune run line (full_finetune_distributed, "
                      "a word, not a key) or giving FP8 up; --diff edits config files and flags",
    "FP8D-AREAL-0001": "the fix is another checkpoint (the model's FP8 release or a quantized "
                       "copy): a path only the user knows, not a value to write for them",
    "FP8D-ARCTIC-0001": "two fixes, neither a value to write: run PR 331's ArcticTraining checkout "
                        "(an install, not a key) or give FP8 up",
    "FP8D-ARCTIC-0002": "which projections run in FP8 is the user's choice (o_proj and lm_head "
                        "are often left out): no one list fits every model",
    "FP8D-ARCTIC-0003": "the recipe class to name depends on the GPU and the TE version (mxfp8 "
                        "on Blackwell only): a choice for the user",
    "FP8D-UNSLOTH-0002": "the fix is a keyword of from_pretrained(...) in the script's Python "
                         "code (fast_inference=True), or an upgrade",
    "FP8D-TAO-0016": "the fix is a keyword of Float8LinearConfig(...) in the script's Python "
                     "(emulate=True dropped), not a config file's value",
    "FP8D-TE-0063": "the fix is the script's Python code (the recipe passed to "
                    "te.fp8_model_init, or no fp8_model_init), or an upgrade",
    "FP8D-OLMO-0003": "the fix is a keyword of AOMXLinearConfig(...) in the script's Python "
                      "(kernel_preference=AOKernelPreference.auto), not a config file's value",
    "FP8D-UNSLOTH-0003": "the fix is a keyword of from_pretrained(...) in the script's Python "
                         "code (load_in_4bit=False)",
    "FP8D-MEG-0032": "the value to set is the job's dense tensor parallelism (ETP = TP), or a "
                     "short trial run: no literal value fits every job",
    "FP8D-TT-0001": "the converter name depends on the torchtitan version (float8 in 0.1.x, "
                    "quantize.linear.float8 in 0.2.x), which the rule does not know",
    "FP8D-TT-0003": "the converter name depends on the torchtitan version (as FP8D-TT-0001)",
    "FP8D-TT-0028": "which MX converters to add (linear, grouped MM or both; mx in 0.1.x) "
                    "depends on the sections set and the torchtitan version, and a fork may "
                    "add them on its launch line instead",
    "FP8D-TT-0026": "which MoE modules run the float8 prototype is the user's choice: routed "
                    "experts only, or no prototype, or no FSDP; a patch would pick one",
    "FP8D-HF-0050": "the TRL config class is read from a Python script; bf16=False goes into "
                    "the script's config call or its launch line, whichever the job uses",
    "FP8D-TE-0002": "the fix is Python code: TE's checkpoint instead of torch.utils.checkpoint",
    "FP8D-ACC-0150": "the handler is built in Python code (the script's, or LLaMA-Factory's "
                     "patch of Accelerator): no config key to set",
    "FP8D-ACC-0032": "the setting to drop is a keyword argument of Accelerator(...) in the "
                     "script's Python code, which --diff does not edit",
    "FP8D-ACC-0095": "the fix is the script's Python code (pass the model and its optimizer to "
                     "one accelerator.prepare() call), which --diff does not edit",
    "FP8D-ACC-0096": "the fix is the script's Python code (as FP8D-ACC-0095)",
    "FP8D-AXO-0007": "an info whose fix is conditional (turn FP8 off only if the first steps "
                     "show NaN): a patch that switches FP8 off would decide it for the user",
    "FP8D-COLOSSAL-0002": "the fix is the model's head or ColossalAI's linear_fp8 (Python code), "
                          "or dropping use_fp8 from the plugin call in the script",
    "FP8D-TAO-0004": "compiling is the fix only off DDP: under DDP, torchao float8 with "
                     "torch.compile fails in DDPOptimizer (FP8D-TAO-0011), so a patch setting "
                     "dynamo_backend: INDUCTOR would trade a slow run for a failing one; "
                     "compile with FSDP2, or stay eager, is the user's choice",
    "FP8D-NEMO-0011": "the flag is set in the NeMo 2 recipe factory's Python (an OptimizerConfig "
                      "argument, cloudai_nemorun.py) or by cloudai's own GPU/dtype gate; cloudai's "
                      "TOML override [cmd_args.optim.config] has no --diff editor",
    "FP8D-VERL-0009": "the switch is a Hydra override on verl's launch line (engine.enable_fp8="
                      "true); the fix the user wants is another engine (engine=megatron with "
                      "override_transformer_config.fp8), and dropping a switch that does nothing "
                      "changes no result",
    "FP8D-ACC-0099": "the fix is the script's Python code (the te.fp8_autocast(enabled=...) "
                     "argument or the model class it builds); mixed_precision fp8 in the "
                     "fire case only states what already runs, it is no edit to propose",
}

PYTHON_CODE_FIXES = frozenset({"FP8D-ACC-0032", "FP8D-ACC-0095", "FP8D-ACC-0096", "FP8D-ACC-0150",
                               "FP8D-TE-0002", "FP8D-MEG-0017",
                               "FP8D-UNSLOTH-0002", "FP8D-UNSLOTH-0003", "FP8D-OLMO-0003",
                               "FP8D-COLOSSAL-0002", "FP8D-TAO-0016", "FP8D-TE-0063",
                               "FP8D-ACC-0099", "FP8D-NEMO-0011"})
"""NOT_AN_EDIT entries whose fix is the job's Python code (an argument of a call, a prepare() call,
an import path): CONFIG_FIXES counts them since their facts are config.*; the share leaves them out."""
assert PYTHON_CODE_FIXES <= set(NOT_AN_EDIT)

# FP8D-HF-0003 left this set in session 38: its fixed case now also changes the unsloth loading
# facts (fwfix4), so it no longer counts as a config-only fix at all
CHECKPOINT_FIXES = frozenset({"FP8D-AREAL-0001"})
"""NOT_AN_EDIT entries whose fix is another checkpoint (the condition reads what the model folder's
config.json says, a config.* fact): the value to write is a path or hub id only the user knows, so
no config edit can make it either; the share leaves them out like PYTHON_CODE_FIXES."""
assert CHECKPOINT_FIXES <= set(NOT_AN_EDIT)

# What a generated job needs beyond its case's facts: planned packages or GPU, a launch script.
EXTRA_ASSUME: dict[str, dict[str, str]] = {
    "FP8D-MEG-0014": {"pkg.transformer-engine": "2.8.0", "pkg.megatron-core": "0.14.0"},
    # the same patch turns TE's FP8 on (MEG-0001's and MEG-0014's edits): plan TE
    "FP8D-MEG-0064": {"pkg.transformer-engine": "2.8.0"},
    "FP8D-MEG-0015": {"pkg.transformer-engine": "2.8.0", "pkg.megatron-core": "0.14.0"},
    "FP8D-MEG-0018": {"gpu": "B200"},
    "FP8D-MEG-0019": {"gpu": "B200"},
    "FP8D-MEG-0058": {"gpu": "B200"},
    "FP8D-MEG-0034": {"gpu": "B200"},
    "FP8D-LF-0012": {"pkg.torchao": "0.13.0"},
    "FP8D-LF-0013": {"pkg.torchao": "0.13.0"},
}
for _rid in ("FP8D-MEG-0013", "FP8D-SWIFT-0003"):    # the fix turns TE's FP8 on: plan TE
    EXTRA_ASSUME[_rid] = {"pkg.transformer-engine": "2.8.0"}
EXTRA_ASSUME["FP8D-MEG-0022"] = {"gpu": "B200"}
EXTRA_FILES: dict[str, dict[str, str]] = {
    "FP8D-ACC-0003": {"launch.sh": "#!/bin/bash\naccelerate launch --num_processes 8 train.py\n"},
    "FP8D-DS-0004": {"acc.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: "
                                 "DEEPSPEED\nmixed_precision: bf16\ndeepspeed_config:\n  "
                                 "deepspeed_config_file: ds.json\n"},
    "FP8D-ACC-0004": {"ds.json": '{\n  "gradient_clipping": 1.0\n}\n'},
}
# Facts a case states as derived intent that the job must set through its own flags instead
# (the fix drops FP8 attention: the flags must be in the launch script for the edit to remove).
_FP8_ATTENTION = {"config.megatron.fp8_dot_product_attention": True, "intent.fp8_attention": None}
EXTRA_FACTS: dict[str, dict[str, Any]] = {
    "FP8D-TE-0041": _FP8_ATTENTION, "FP8D-TE-0046": _FP8_ATTENTION,
    "FP8D-TE-0048": _FP8_ATTENTION,
    "FP8D-ACC-0027": {"config.deepspeed.gradient_clipping": 1.0},
    # a Megatron launch line that asks for FP8 attention and selective recompute itself
    "FP8D-MEG-0057": {**_FP8_ATTENTION, "config.megatron.fp8_format": "hybrid",
                      "config.megatron.recompute_granularity": "selective",
                      "intent.recompute_granularity": None, "intent.stack": None},
}


def _fixed_case(rule: Any) -> Any | None:
    """The rule's first ``fire`` case whose ``fixed:`` changes config (and only config/intent)."""
    for case in rule.tests:
        if case.expect != "fire" or case.fixed is None:
            continue
        names = set(case.fixed.set) | set(case.fixed.unset)
        spaces = {n.split(".")[0] for n in names}
        if "config" in spaces and spaces <= {"config", "intent"}:
            return case
    return None


def _changes_config_only(rule: Any) -> bool:
    cases = [c for c in rule.tests if c.fixed is not None]
    spaces = {n.split(".")[0] for c in cases for n in (*c.fixed.set, *c.fixed.unset)}
    return bool(cases) and "config" in spaces and spaces <= {"config", "intent"}


CONFIG_FIXES = sorted(r.id for r in RULES if _changes_config_only(r))
WITH_EDITS = sorted(r.id for r in RULES if r.fix.edits)


def test_most_config_fixes_carry_an_edit_and_the_rest_say_why() -> None:
    covered = [rid for rid in CONFIG_FIXES if rid in WITH_EDITS]
    missing = sorted(set(CONFIG_FIXES) - set(covered))
    assert missing == sorted(NOT_AN_EDIT), missing
    # A fix in the script's Python code reads as a config fix here (the readers put a call's
    # arguments under config.<kind>.*), but no config edit can make it: not counted in the share.
    editable = [rid for rid in CONFIG_FIXES if rid not in PYTHON_CODE_FIXES | CHECKPOINT_FIXES]
    assert len(covered) >= 0.9 * len(editable), (len(covered), len(editable))
    assert not set(NOT_AN_EDIT) & set(WITH_EDITS)


# Rules whose condition reads intent.* facts (derived from the config) rather than config.* facts,
# whose fix is nonetheless a change to a config key: "a config change" above is read from a
# rule's ``fixed:`` case, so each of these must have one that touches config.*, or the share is
# computed without them (acceptance audit of issue 24 item 3 on main eafd747: FP8D-TE-0006 fired
# at the accelerate YAML's `fp8_format: E5M2` line while --diff said "not a config edit").
CONFIG_FIXES_OF_DERIVED_FACTS = ("FP8D-TE-0006", "FP8D-TAO-0004", "FP8D-HW-0004",
                                 "FP8D-HW-0005", "FP8D-HW-0007",
                                 "FP8D-TAO-0001", "FP8D-HW-0006",
                                 "FP8D-TE-0007",
                                 # audit "Left for you": FSDP1 -> FSDP2 (accelerate to-fsdp2),
                                 # pad the sequence, DDP -> FSDP2 layout
                                 "FP8D-HF-0002", "FP8D-TE-0012", "FP8D-TAO-0011")


def test_config_fixes_of_rules_that_read_derived_facts_are_counted() -> None:
    missing = [rid for rid in CONFIG_FIXES_OF_DERIVED_FACTS if rid not in CONFIG_FIXES]
    assert not missing, missing


def _check(files: list[str], assume: dict[str, str], kind: str | None) -> api.Report:
    return api.check(files, assume=assume, kind=kind)


def _serious(report: api.Report) -> set[str]:
    return {f.rule_id for f in report.findings if f.severity.value in ("error", "warning")}


@pytest.mark.skipif(GIT is None, reason="needs git for git apply")
@pytest.mark.parametrize("rule_id", [r for r in WITH_EDITS if r in CONFIG_FIXES])
def test_the_edit_applies_and_clears_the_finding(rule_id: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    rule = next(r for r in RULES if r.id == rule_id)
    case = _fixed_case(rule)
    assert case is not None
    job = tmp_path / "job"
    job.mkdir()
    facts = {**dict(case.facts), **EXTRA_FACTS.get(rule_id, {})}
    facts = {k: v for k, v in facts.items() if v is not None}
    files, assume = write_job(job, facts, set(case.fixed.set) | set(case.fixed.unset))
    for name, text in EXTRA_FILES.get(rule_id, {}).items():
        (job / name).write_text(text)
        # first: a linked file named before the file that links it is read unlinked (and a
        # fp8-only DeepSpeed JSON cannot be recognised on its own)
        files = [name, *(f for f in files if f != name)]
    # packages the rule reads that the case leaves out are not installed (as in the case)
    for name in sorted(rule.when.fact_names()):
        if name.startswith("pkg.") and name.endswith(".version") and name not in case.facts:
            assume.setdefault(name[:-len(".version")], "none")
    assume.update(EXTRA_ASSUME.get(rule_id, {}))
    kinds = {n.split(".")[1] for n in case.facts if n.startswith("config.")}
    monkeypatch.chdir(job)
    kind = None
    before = _check(files, assume, None)
    if rule_id not in {f.rule_id for f in before.findings} and len(kinds) == 1:
        kind = kinds.pop()                    # a sparse file the detection cannot place
        before = _check(files, assume, kind)
    assert rule_id in {f.rule_id for f in before.findings}, (files, assume)
    # Redaction of --diff is tested on its own (test_diff_boundary.py); here the edits are:
    # --moe-token-dispatcher-type reads as a credential-named flag to the redaction today.
    out = diff_output(before, files, str(job), redact=False)
    assert out.patch, out.notes
    subprocess.run([GIT, "init", "-q"], cwd=job, check=True)
    proc = subprocess.run([GIT, "apply", "-"], cwd=job, input=out.patch.encode(),
                          capture_output=True)
    assert proc.returncode == 0, (out.patch, proc.stderr.decode())
    after = _check(files, assume, kind)
    assert rule_id not in {f.rule_id for f in after.findings}, out.patch
    assert _serious(after) <= _serious(before), (out.patch, _serious(after) - _serious(before))
