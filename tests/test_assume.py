"""``--assume``: planned GPUs, packages and registered facts, and clear errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preflight.assume import AssumeError, apply_assumptions
from preflight.base.cc import arch_for_cc, parse_cc
from preflight.errors import UserInputError
from preflight.facts import Facts, Unknown
from preflight.probes.gpu_table import KNOWN_GPUS, lookup, lookup_rocm
from preflight.registry import registry

NO_GPU = Facts(
    {"gpu.source": "none", "gpu.count": Unknown("no NVML"), "gpu.cc": Unknown("no NVML"),
     "gpu.nvml_error": "NVML: library not found", "pkg.torch.version": "2.13.0+cpu",
     "pkg.torch.local": "cpu", "pkg.torch.public": "2.13.0", "pkg.torch.location": "/x",
     "cuda.torch_variant": "cpu"},
    {"gpu.source": "nvml", "gpu.count": "nvml", "gpu.cc": "nvml", "gpu.nvml_error": "nvml",
     "pkg.torch.version": "importlib.metadata"},
)


def assert_registered(names: Iterable[str]) -> None:
    """Every fact name an assumption produced is in the registry (rules can only name those)."""
    unknown = [n for n in names if registry().lookup(n) is None]
    assert not unknown, f"unregistered fact names: {unknown}"


def plan(**assume: str) -> Facts:
    facts = apply_assumptions(NO_GPU, {k.replace("__", "."): v for k, v in assume.items()})
    assert_registered(facts)
    return facts


def test_gpu_name_sets_every_derived_fact() -> None:
    f = plan(gpu="H100")
    assert f["gpu.source"] == "assume" and f["gpu.count"] == 1 and f["gpu.host_count"] == 1
    assert f["gpu.names"] == ["NVIDIA H100"] and f["gpu.name"] == "NVIDIA H100"
    assert f["gpu.ccs"] == ["9.0"] and f["gpu.cc"] == f["gpu.min_cc"] == f["gpu.max_cc"] == "9.0"
    assert f["gpu.arch"] == "hopper" and f["gpu.heterogeneous"] is False and f["gpu.mig"] is False
    assert "gpu.nvml_error" not in f  # the real machine's NVML failure is not part of the plan
    assert isinstance(f["gpu.driver"], Unknown) and "--assume gpu.driver=" in f["gpu.driver"].reason
    for name in ("gpu.count", "gpu.cc", "gpu.names", "gpu.driver"):
        assert f.source(name) == "assume"
    assert f.source("pkg.torch.version") == "importlib.metadata"  # untouched facts keep theirs


def test_gpu_with_count_and_explicit_driver() -> None:
    f = plan(gpu="nvidia h100", gpu__count="8", gpu__driver="550.54.15")
    assert f["gpu.count"] == 8 and len(f["gpu.names"]) == 8 and f["gpu.ccs"] == ["9.0"] * 8
    assert f["gpu.visible_indices"] == list(range(8))
    assert f["gpu.driver"] == "550.54.15"


@pytest.mark.parametrize("name, cc, arch", [
    ("A100", "8.0", "ampere"), ("A10", "8.6", "ampere"), ("A10G", "8.6", "ampere"),
    ("A30", "8.0", "ampere"), ("A40", "8.6", "ampere"), ("L4", "8.9", "ada"),
    ("L40", "8.9", "ada"), ("L40S", "8.9", "ada"), ("RTX 4090", "8.9", "ada"),
    ("RTX 6000 Ada", "8.9", "ada"), ("H100", "9.0", "hopper"), ("H800", "9.0", "hopper"),
    ("H20", "9.0", "hopper"), ("H200", "9.0", "hopper"), ("GH200", "9.0", "hopper"),
    ("B100", "10.0", "blackwell"), ("B200", "10.0", "blackwell"), ("GB200", "10.0", "blackwell"),
    ("B300", "10.3", "blackwell"), ("GB300", "10.3", "blackwell"),
    ("RTX 5090", "12.0", "blackwell"), ("RTX PRO 6000 Blackwell", "12.0", "blackwell"),
    ("DGX Spark GB10", "12.1", "blackwell"), ("GB10", "12.1", "blackwell"),
    ("V100", "7.0", "volta"), ("T4", "7.5", "turing"), ("geforce rtx-4090", "8.9", "ada"),
    ("L20", "8.9", "ada"), ("RTX 4000 Ada", "8.9", "ada"), ("RTX 5070", "12.0", "blackwell"),
])
def test_known_gpus(name: str, cc: str, arch: str) -> None:
    f = plan(gpu=name)
    assert (f["gpu.cc"], f["gpu.arch"]) == (cc, arch)


@pytest.mark.parametrize("product, name", [
    ("NVIDIA H100 80GB HBM3", "H100"), ("NVIDIA A100-SXM4-40GB", "A100"),
    ("NVIDIA GH200 480GB", "GH200"), ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell"),
    ("NVIDIA GeForce RTX 4080", "RTX 4080"), ("Tesla T4", "T4"), ("NVIDIA GB10", "GB10"),
    ("NVIDIA GeForce RTX 4060", "RTX 4060"), ("NVIDIA L20", "L20"),
    ("NVIDIA RTX 4000 SFF Ada Generation", "RTX 4000 Ada"),
    ("NVIDIA GeForce RTX 4070 Ti SUPER", "RTX 4070"),
    ("NVIDIA GeForce RTX 2080", None),  # not in the table: never a partial-word match like T4
])
def test_product_names_as_nvml_prints_them(product: str, name: str | None) -> None:
    found = lookup(product)
    assert (found.name if found else None) == name


def test_unknown_gpu_lists_choices() -> None:
    with pytest.raises(AssumeError) as info:
        plan(gpu="H1000")
    msg = str(info.value)
    assert isinstance(info.value, UserInputError)
    assert "--assume gpu=H1000" in msg and "H100" in msg and "B200" in msg and "gpu.cc" in msg


def test_unknown_key_suggests() -> None:
    with pytest.raises(AssumeError) as info:
        plan(gpu__cout="8")
    msg = str(info.value)
    assert "unknown key 'gpu.cout'" in msg and "gpu=NAME" in msg
    suggested = msg.split("Did you mean: ")[1].rstrip("?").split(", ")
    assert suggested[0] == "gpu.count" and len(set(suggested)) == len(suggested)


def test_cc_only_and_count_zero() -> None:
    f = plan(gpu__cc="89")
    assert f["gpu.cc"] == "8.9" and f["gpu.arch"] == "ada" and f["gpu.count"] == 1
    assert isinstance(f["gpu.names"], Unknown)
    with pytest.raises(AssumeError, match="compute capability like 8.9"):
        plan(gpu__cc="fast")
    # issue 21 item 10: a plan of a node without GPUs was judged (exit 0 or 1); a usage error
    for count in ("0", "00", "-0"):
        with pytest.raises(AssumeError, match="at least one GPU"):
            plan(gpu="H100", gpu__cc="9.0", gpu__count=count)
    with pytest.raises(AssumeError, match="at least 1"):
        plan(gpu__count="-1")


def test_count_alone_resizes_a_real_homogeneous_list() -> None:
    real = Facts({"gpu.count": 2, "gpu.names": ["A", "A"], "gpu.ccs": ["9.0", "9.0"],
                  "gpu.cc": "9.0"})
    f = apply_assumptions(real, {"gpu.count": "4"})
    assert f["gpu.count"] == 4 and f["gpu.names"] == ["A"] * 4 and f["gpu.ccs"] == ["9.0"] * 4
    assert f.source("gpu.count") == "assume" and f["gpu.cc"] == "9.0"


def test_packages() -> None:
    f = plan(pkg__torch="2.5.1+cu124")
    assert f["pkg.torch.version"] == "2.5.1+cu124" and f["pkg.torch.local"] == "cu124"
    assert f["cuda.torch_build"] == "12.4" and f["cuda.torch_variant"] == "cuda"
    assert "pkg.torch.location" not in f  # stale facts of the real install are dropped
    f = plan(pkg__torch="2.6.0")
    assert "pkg.torch.local" not in f and f["pkg.torch.public"] == "2.6.0"
    f = plan(**{"pkg.torch.version": "2.4.0a0+3bcc3cd.nv24.07"})
    assert f["pkg.torch.local"] == "3bcc3cd.nv24.07"
    f = plan(pkg__torch="none")
    assert not any(k.startswith("pkg.torch.") for k in f)
    f = plan(pkg__Transformer_Engine="2.1.0", **{"pkg.transformer-engine-cu12": "2.1.0"},
             pkg__transformer_engine_torch="2.0.0")
    assert f["pkg.transformer-engine.version"] == "2.1.0"
    assert f["pkg.te.versions_agree"] is False and f["pkg.te.core"] == "transformer-engine-cu12"
    with pytest.raises(AssumeError, match="not a valid version"):
        plan(pkg__torch="latest")


def test_te_set_dropped_when_planned_uninstalled() -> None:
    base = Facts({"pkg.transformer-engine.version": "2.1.0", "pkg.te.core": "none",
                  "pkg.te.versions_agree": True})
    f = apply_assumptions(base, {"pkg.transformer-engine": "none"})
    assert not any(k.startswith("pkg.te") or k.startswith("pkg.transformer") for k in f)


def test_planned_te_drops_this_machines_other_te_parts() -> None:
    """A machine with TE 2.20.2 (cu13 core + torch extension) planning a TE 2.8.0 job: the
    machine's parts are not part of the plan (they made FP8D-TE-0008 fire on the GPU machine)."""
    here = Facts({f"pkg.{n}.version": "2.20.2" for n in
                  ("transformer-engine", "transformer-engine-cu13", "transformer-engine-torch")})
    f = apply_assumptions(here, {"pkg.transformer-engine": "2.8.0"})
    assert f["pkg.transformer-engine.version"] == "2.8.0"
    assert "pkg.transformer-engine-cu13.version" not in f
    assert "pkg.transformer-engine-torch.version" not in f
    assert f["pkg.te.versions_agree"] is True


@pytest.mark.parametrize("key, value, expected", [
    ("intent.zero_stage", "3", 3),
    ("intent.fp8", "yes", True),
    ("intent.fp8", "False", False),
    ("cuda.torch_build", "12.4", "12.4"),
    ("gpu.min_cc", "sm_90", "9.0"),
    ("intent.frameworks", "accelerate, deepspeed", ["accelerate", "deepspeed"]),
    ("intent.shapes.gemms", "[[8192, 4096, 4096]]", [[8192, 4096, 4096]]),
    ("config.deepspeed.zero_optimization.stage", "3", 3),
    ("config.deepspeed.bf16.enabled", "auto", "auto"),
    ("env.NVTE_FUSED_ATTN", "0", "0"),
])
def test_registered_facts_are_coerced(key: str, value: str, expected: object) -> None:
    f = plan(**{key: value})
    assert f[key] == expected and f.source(key) == "assume"


@pytest.mark.parametrize("key, value, message", [
    ("intent.fp8", "maybe", "expected true or false"),
    ("intent.zero_stage", "three", "whole number"),
    ("pkg.te.versions", "x", "JSON object"),
    ("gpu.driver", "new", "not a valid version"),
    ("gpu.count", "\u0663", "whole number"),          # Arabic-Indic 3: int() would take it
    ("gpu.count", "1_000", "whole number"),
    ("gpu.cc", "999.999", "compute capability like 8.9"),
    ("gpu.mem_total_mib", "{}", "JSON list or comma-separated"),
    ("smoke.ran", "true", "measured by the smoke step"),
])
def test_bad_values(key: str, value: str, message: str) -> None:
    with pytest.raises(AssumeError, match=message):
        plan(**{key: value})


def test_explicit_fact_wins_over_derived() -> None:
    f = plan(pkg__torch="2.5.1+cu124", **{"cuda.torch_build": "12.6"})
    assert f["cuda.torch_build"] == "12.6"


@given(st.sampled_from(KNOWN_GPUS), st.integers(min_value=1, max_value=64))
def test_planned_gpus_are_consistent(gpu: object, count: int) -> None:
    f = apply_assumptions(Facts(), {"gpu": gpu.name, "gpu.count": str(count)})  # type: ignore[attr-defined]
    assert len(f["gpu.names"]) == len(f["gpu.ccs"]) == f["gpu.count"] == count
    assert f["gpu.min_cc"] == f["gpu.max_cc"] == f["gpu.cc"] == gpu.cc  # type: ignore[attr-defined]
    assert f["gpu.arch"] == arch_for_cc(f["gpu.cc"]) == gpu.arch  # type: ignore[attr-defined]
    assert lookup(gpu.name) is gpu  # type: ignore[attr-defined]


@given(st.integers(min_value=0, max_value=13), st.integers(min_value=0, max_value=9))
def test_parse_cc_forms(major: int, minor: int) -> None:
    assert parse_cc(f"{major}.{minor}") == (major, minor)
    if major:
        assert parse_cc(f"sm_{major}{minor}") == (major, minor)


CUDA_MACHINE = Facts(
    {"pkg.torch.version": "2.7.0+cu128", "pkg.torch.local": "cu128", "pkg.torch.public": "2.7.0",
     "cuda.torch_build": "12.8", "cuda.torch_variant": "cuda", "cuda.torch_git": "abc123"},
    {"cuda.torch_build": "torch/version.py", "cuda.torch_variant": "torch/version.py",
     "cuda.torch_git": "torch/version.py"},
)
CPU_MACHINE = Facts(
    {**NO_GPU.values, "cuda.torch_git": "def456"},
    {**NO_GPU.provenance, "cuda.torch_variant": "torch/version.py",
     "cuda.torch_git": "torch/version.py"},
)
TORCH_FACTS = ("cuda.torch_build", "cuda.torch_variant", "cuda.torch_hip", "cuda.torch_git")


@pytest.mark.parametrize("machine", [CPU_MACHINE, CUDA_MACHINE], ids=["cpu", "cuda"])
@pytest.mark.parametrize("version, expect", [
    ("2.5.1+cu124", {"cuda.torch_build": "12.4", "cuda.torch_variant": "cuda"}),
    ("2.5.1+cu130", {"cuda.torch_build": "13.0", "cuda.torch_variant": "cuda"}),
    ("2.5.1+cpu", {"cuda.torch_variant": "cpu"}),
    ("2.5.1+rocm6.2", {"cuda.torch_variant": "rocm", "cuda.torch_hip": "6.2"}),
    ("2.5.1+xpu", {"cuda.torch_variant": "xpu"}),
])
def test_assumed_torch_replaces_every_torch_build_fact(machine: Facts, version: str,
                                                       expect: dict[str, str]) -> None:
    f = apply_assumptions(machine, {"pkg.torch": version})
    assert_registered(f)
    assert {n: f[n] for n in TORCH_FACTS if n in f} == expect
    assert all(f.source(n) == "assume" for n in expect)


@pytest.mark.parametrize("machine", [CPU_MACHINE, CUDA_MACHINE], ids=["cpu", "cuda"])
@pytest.mark.parametrize("version", ["2.5.1", "2.4.0a0+3bcc3cd.nv24.07"])
def test_assumed_torch_without_a_build_label_leaves_the_build_unknown(machine: Facts,
                                                                      version: str) -> None:
    # The reviewer's case: this machine's +cpu build must not leak into the plan (a false
    # "CPU-only build" finding with --assume gpu=H100 --assume pkg.torch=2.5.1).
    f = apply_assumptions(machine, {"pkg.torch": version})
    assert "cuda.torch_git" not in f and "cuda.torch_hip" not in f
    for name in ("cuda.torch_build", "cuda.torch_variant"):
        assert isinstance(f[name], Unknown) and f.source(name) == "assume"
        assert f"assume {name}=" in f[name].reason
    explicit = apply_assumptions(machine, {"pkg.torch": version, "cuda.torch_build": "12.6"})
    assert explicit["cuda.torch_build"] == "12.6"


@pytest.mark.parametrize("machine", [CPU_MACHINE, CUDA_MACHINE], ids=["cpu", "cuda"])
def test_torch_planned_uninstalled_removes_its_build_facts(machine: Facts) -> None:
    f = apply_assumptions(machine, {"pkg.torch": "none"})
    assert not any(n.startswith(("cuda.torch_", "pkg.torch.")) for n in f)
    assert not any(n.startswith("cuda.torch_") for n in f.provenance)


def test_cli_plan_does_not_inherit_this_machines_torch_build() -> None:
    # End to end on this machine's real probes: whatever torch is installed here, its build
    # facts must not reach a plan that names another torch.
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "preflight", "check", "--assume", "gpu=H100", "--assume",
         "pkg.torch=2.5.1", "--example", "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False)
    doc = json.loads(proc.stdout)
    assert "cuda.torch_git" not in doc["facts"]
    assert set(doc["facts"]["cuda.torch_variant"]) == {"$unknown"}
    assert "FP8D-TORCH-0003" not in json.dumps(doc["findings"])


@pytest.mark.parametrize("key", ["gpu.count", "gpu"])
@pytest.mark.parametrize("count", ["4097", "99999999999999999999999"])
def test_absurd_gpu_counts_are_user_errors(key: str, count: str) -> None:
    assume = {"gpu.count": count} if key == "gpu.count" else {"gpu": "H100", "gpu.count": count}
    with pytest.raises(AssumeError, match="at most 4096"):
        plan(**{k.replace(".", "__"): v for k, v in assume.items()})
    assert plan(gpu__count="4096")["gpu.count"] == 4096


def test_huge_int_fact_is_a_user_error() -> None:
    with pytest.raises(AssumeError, match="at most"):
        plan(**{"intent.zero_stage": str(2**64)})


def test_version_check_is_the_rule_engines() -> None:
    from preflight.base.versions import version_problem

    for text in ("2.5.1", "2.4.0a0+3bcc3cd.nv24.07", "latest", "1.0-foo-bar", "v2.5"):
        accepted = True
        try:
            plan(pkg__torch=text)
        except AssumeError:
            accepted = False
        assert accepted == (version_problem(text) is None), text


@given(st.integers(min_value=13, max_value=999), st.integers(min_value=0, max_value=9))
def test_a_compute_capability_past_any_released_gpu_is_refused(major: int, minor: int) -> None:
    # issue 13, item 8: gpu.cc=99.9 was planned as an "unknown" architecture.
    with pytest.raises(AssumeError, match="gpu.cc"):
        plan(gpu__cc=f"{major}.{minor}")


@given(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=9))
def test_every_compute_capability_up_to_blackwell_is_planned(major: int, minor: int) -> None:
    assert plan(gpu__cc=f"{major}.{minor}")["gpu.cc"] == f"{major}.{minor}"


@pytest.mark.parametrize("name", ["MI300X", "AMD Instinct MI355X", "mi325x", "Instinct-MI350X"])
def test_an_amd_instinct_gpu_is_planned_with_unknown_cuda_facts(name: str) -> None:
    # holdout21's Primus jobs: an AMD GPU stopped the plan at "unknown GPU" (exit 2). It is a
    # ROCm GPU: the name is kept, every CUDA-architecture fact is Unknown with the reason.
    facts = plan(gpu=name, gpu__count="8")
    assert facts["gpu.count"] == 8
    assert facts["gpu.name"].startswith("AMD Instinct MI3")
    assert facts["gpu.names"] == [facts["gpu.name"]] * 8
    for fact in ("gpu.cc", "gpu.ccs", "gpu.min_cc", "gpu.arch", "gpu.host_ccs"):
        assert isinstance(facts[fact], Unknown), fact
        assert "ROCm" in facts[fact].reason
    # ...but the gfx target is known (ROCm Transformer Engine gates MXFP8 on it)
    rocm = lookup_rocm(name)
    assert rocm is not None and facts["gpu.gfx"] == rocm.gfx


def test_the_gfx_target_follows_the_planned_model() -> None:
    assert plan(gpu="MI300X")["gpu.gfx"] == "gfx942"
    assert plan(gpu="MI325X")["gpu.gfx"] == "gfx942"
    assert plan(gpu="MI355X")["gpu.gfx"] == "gfx950"
    assert "gpu.gfx" not in plan(gpu="H100")
    # a probed (or replayed) AMD target does not survive a planned NVIDIA GPU
    probed = Facts({"gpu.count": 8, "gpu.gfx": "gfx942", "gpu.names": ["AMD Instinct MI300X"] * 8})
    assert "gpu.gfx" not in apply_assumptions(probed, {"gpu": "B200"}).values


def test_an_unknown_name_still_lists_the_amd_gpus() -> None:
    with pytest.raises(AssumeError) as info:
        plan(gpu="MI250")                       # CDNA 2: no FP8 at all, not in the table
    assert "MI300X" in str(info.value) and "H100" in str(info.value)


def test_the_amd_names_never_shadow_an_nvidia_gpu() -> None:
    for gpu in KNOWN_GPUS:
        assert lookup_rocm(gpu.name) is None
        assert plan(gpu=gpu.name)["gpu.cc"] == gpu.cc


def test_check_with_an_amd_gpu_assumed_runs(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "preflight", "check", "--example", "--no-smoke",
                           "--assume", "gpu=MI300X", "--format", "json", "-o", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    doc = json.loads(out.read_text())
    assert doc["facts"]["gpu.name"] == "AMD Instinct MI300X"


def test_planned_nightlies_of_one_day_are_a_matched_torch_pair() -> None:
    # pytorch/ao issue 2904: torchao and torch nightlies of 2025-08-27, built for each other
    f = plan(pkg__torch="2.9.0.dev20250827+cu128", pkg__torchao="0.13.0.dev20250827")
    assert f["pkg.torchao.built_with_torch"] is True


def test_torch_pairing_is_derived_again_when_either_side_is_planned() -> None:
    machine = apply_assumptions(NO_GPU, {"pkg.torch": "2.9.0.dev20250827", "pkg.torchao": "0.13.0.dev20250827"})
    moved = apply_assumptions(machine, {"pkg.torch": "2.9.0"})  # only torch planned: stale pair dropped
    assert isinstance(moved["pkg.torchao.built_with_torch"], Unknown)
    released = apply_assumptions(machine, {"pkg.torchao": "0.13.0"})
    assert "pkg.torchao.built_with_torch" not in released
    source = plan(pkg__torch="2.10.0", pkg__torchao="0.13.0+git1a2b3c4")
    assert isinstance(source["pkg.torchao.built_with_torch"], Unknown)
