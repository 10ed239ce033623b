"""Issue 24 item 2, "no red on a laptop": one model of where the check runs.

A correct FP8 job (torchao through accelerate with FSDP2, the healthy scenario) checked:

- on a CPU laptop with torch installed: exit 0, the CPU-only torch a warning that says why;
- the same with ``--strict``: exit 1, the same finding an error;
- on a GPU node (a snapshot from one) with the same CPU torch: the error stays an error.

The laptop and the GPU node are snapshots (facts of one machine each, as ``fp8-doctor snapshot``
writes them), so the result does not depend on this machine; the last test runs the same job
live on this machine when its torch is a real CPU build (the laptop of the issue).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import cli

ROOT = Path(__file__).resolve().parents[1]
JOB = ROOT / "scenarios" / "healthy-acc-fsdp2-torchao" / "accelerate_config.yaml"
H100 = ROOT / "scenarios" / "_envs" / "h100.json"
NVML_MISSING = ("NVML: NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed "
                "here, or it is not mounted into this container (libnvidia-ml.so.1 is in no "
                "folder of LD_LIBRARY_PATH, /etc/ld.so.cache or the system library folders); "
                "nvidia-smi not found on PATH")
CPU_TORCH = {"pkg.torch.version": "2.13.0+cpu", "pkg.torch.public": "2.13.0",
             "pkg.torch.local": "cpu", "cuda.torch_variant": "cpu"}
STACK = {"pkg.accelerate.version": "1.14.0", "pkg.torchao.version": "0.18.0"}


def _snapshot(path: Path, facts: dict, prov: dict) -> Path:
    path.write_text(json.dumps({"schema_version": "1.0", "tool": {"name": "fp8-doctor"},
                                "facts": facts, "provenance": prov, "findings": []}))
    return path


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("places")
    node = json.loads(H100.read_text())
    gpu_node = {**{k: v for k, v in node["facts"].items() if not k.startswith("cuda.torch")},
                **CPU_TORCH, **STACK}
    laptop = {"gpu.count": {"$unknown": NVML_MISSING}, "host.os": "Linux",
              "host.python": "3.11.7", **CPU_TORCH, **STACK}
    return {
        "laptop": _snapshot(folder / "laptop.json", laptop,
                            {**{k: "packages" for k in laptop}, "gpu.count": "nvml"}),
        "gpu-node": _snapshot(folder / "gpu-node.json", gpu_node,
                              {**{k: "packages" for k in gpu_node}, "gpu.count": "nvml"}),
    }


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = cli.main(["check", str(JOB), "--no-project-config", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def _cpu_torch(doc: dict) -> dict:
    [finding] = [f for f in doc["findings"] if f["id"] == "FP8D-TORCH-0003"]
    return finding


def test_a_cpu_laptop_checking_a_correct_fp8_job_exits_0(places, capsys) -> None:
    code, doc = _check(capsys, "--snapshot", str(places["laptop"]))
    assert code == 0, [(f["id"], f["severity"]) for f in doc["findings"]]
    assert doc["environment"]["place"] == "planning"
    finding = _cpu_torch(doc)
    assert finding["severity"] == "warning" and "training-node-only" in finding["tags"]
    assert "Not an error here" in finding["message"]
    assert not [f for f in doc["findings"] if f["severity"] == "error"]


def test_a_laptops_report_does_not_open_with_the_nvml_search(places, capsys) -> None:
    # Issue 24 item 5: the notice at the top gave the 10-line search for libnvidia-ml.so.1.
    capsys.readouterr()
    cli.main(["check", str(JOB), "--no-project-config", "--snapshot", str(places["laptop"])])
    out = capsys.readouterr().out
    assert "ld.so.cache" not in "\n".join(out.splitlines()[:12])
    # The notice is wrapped, and the snapshot's path in it (under TMPDIR) moves the breaks: a
    # longer TMPDIR put one between "not" and "found". Compared with the breaks as spaces.
    notice = " ".join(out.split("Findings")[0].split())
    assert out.count("ld.so.cache") == 1 and "NVML library (libnvidia-ml.so.1) not found" in notice


def test_the_same_laptop_with_strict_exits_1(places, capsys) -> None:
    code, doc = _check(capsys, "--snapshot", str(places["laptop"]), "--strict")
    assert code == 1 and _cpu_torch(doc)["severity"] == "error"


def test_on_a_gpu_node_the_errors_stay_errors(places, capsys) -> None:
    code, doc = _check(capsys, "--snapshot", str(places["gpu-node"]), "--no-smoke")
    assert code == 1 and doc["environment"]["place"] == "training-node"
    finding = _cpu_torch(doc)
    assert finding["severity"] == "error" and "training-node-only" not in finding["tags"]


def test_an_assumed_gpu_does_not_make_the_laptop_a_gpu_node(places, capsys) -> None:
    # The false error of the issue: --assume gpu=H100 beside a local CPU torch.
    code, doc = _check(capsys, "--snapshot", str(places["laptop"]), "--assume", "gpu=H100")
    assert code == 0 and doc["environment"]["place"] == "planning"
    assert _cpu_torch(doc)["severity"] == "warning"


def _local_torch_is_a_cpu_build() -> bool:
    from preflight.probes.packages import probe_packages

    return probe_packages().facts.get("cuda.torch_variant") == "cpu"


@pytest.mark.skipif(not _local_torch_is_a_cpu_build(), reason="needs a CPU build of torch here")
@pytest.mark.parametrize("assume", [(), ("--assume", "gpu=H100")])
def test_live_on_this_cpu_machine(capsys, assume: tuple[str, ...]) -> None:
    plan = ("--assume", "pkg.accelerate=1.14.0", "--assume", "pkg.torchao=0.18.0")
    code, doc = _check(capsys, *plan, *assume)
    assert code == 0 and _cpu_torch(doc)["severity"] == "warning"
    assert doc["environment"]["place"] in ("planning", "ci-runner")
    code, _ = _check(capsys, *plan, *assume, "--strict")
    assert code == 1


@pytest.mark.skipif(not _local_torch_is_a_cpu_build(), reason="needs a CPU build of torch here")
@pytest.mark.parametrize("ci", [{"CI": "true"}, {"GITHUB_ACTIONS": "true"}, {}])
def test_a_ci_runner_is_the_third_place(capsys, monkeypatch: pytest.MonkeyPatch,
                                        ci: dict[str, str]) -> None:
    """The third place of item 2 (acceptance audit on eafd747: only the laptop and the GPU node
    had a test): under a CI system's variable the same job is judged on a "ci-runner", the
    CPU-only torch a warning there too, exit 0; --strict keeps it an error."""
    from preflight.environment import _CI_VARS

    for name in _CI_VARS:
        monkeypatch.delenv(name, raising=False)
    for name, value in ci.items():
        monkeypatch.setenv(name, value)
    plan = ("--assume", "pkg.accelerate=1.14.0", "--assume", "pkg.torchao=0.18.0")
    code, doc = _check(capsys, *plan)
    assert doc["environment"]["place"] == ("ci-runner" if ci else "planning")
    assert code == 0 and _cpu_torch(doc)["severity"] == "warning"
    code, doc = _check(capsys, *plan, "--strict")
    assert code == 1 and _cpu_torch(doc)["severity"] == "error"
