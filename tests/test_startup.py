"""Interrupts end fp8-doctor cleanly (issue 21 item 8; preflight/_startup.py).

Real signals to real processes. "At any moment" is made exact rather than timed: an import hook
in the console script sends the signal to the process itself at the moment a given module is
looked up, so the interrupt lands there whatever the machine's load (before the fix, Ctrl-C while
``preflight.cli`` loaded printed a traceback). Hung children are real processes (a fake
``nvidia-smi`` on PATH, the real NVML child over a stand-in ``libnvidia-ml.so.1`` that hangs, the
smoke child); the tests look at what is still running and what is left in the temp directory. A
hung nvidia-smi or NVML child sends the Ctrl-C to fp8-doctor itself as it starts to hang: a signal
sent by the test when it saw the child could come after the probe's timeout had ended it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_script import write_script
from hostenv import require_exec

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

DS = '{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}\n'
ACC = "distributed_type: DEEPSPEED\nmixed_precision: fp8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] not in ("Z", "X")   # a zombie is dead
    except OSError:
        return False


def _running_in(folder: Path) -> list[int]:
    """Processes whose working folder is ``folder`` or inside it (our children's private
    folders live in the test's TMPDIR)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cwd = os.readlink(f"/proc/{name}/cwd")
            except OSError:
                continue
            if cwd == str(folder) or cwd.startswith(f"{folder}/"):
                out.append(int(name))
    return out


def _wait_for(predicate, what: str, timeout: float = 120.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"never saw: {what}"
        time.sleep(0.05)


@pytest.fixture
def area(tmp_path: Path) -> Iterator[Path]:
    """A job, a private TMPDIR and a bin folder; whatever still runs in them is killed after."""
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "ds.json").write_text(DS)
    (tmp_path / "job" / "acc.yaml").write_text(ACC)
    (tmp_path / "tmp").mkdir()
    yield tmp_path
    for pid in _running_in(tmp_path):   # old code leaves children behind: do not leak them
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _env(area: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FP8_DOCTOR")}
    env.update({"TMPDIR": str(area / "tmp"), "CUDA_VISIBLE_DEVICES": ""}, **extra)
    return env


# The hook imports nothing: os and sys are loaded with the interpreter.
HOOK = """import os, sys
class _SignalAt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r} and not os.path.exists({fired!r}):
            open({fired!r}, 'w').close()
            os.kill(os.getpid(), {signum})
        return None
sys.meta_path.insert(0, _SignalAt())
"""


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("module", ["signal", "preflight.base.isolate", "preflight.cli", "argparse",
                                    "preflight.api", "preflight.base.proc", "yaml"])
def test_a_signal_while_any_module_loads_exits_cleanly(area: Path, module: str, signum: int,
                                                       code: int) -> None:
    fired = area / "fired"
    argv = write_script(area / "bin", HOOK.format(module=module, fired=str(fired),
                                                  signum=int(signum)))
    res = subprocess.run([*argv, "check", "job", "--no-smoke"], cwd=area, env=_env(area),
                         capture_output=True, text=True, timeout=120)
    assert fired.exists(), f"{module} was never imported: the test did not interrupt anything"
    assert res.returncode == code, res.stderr[-3000:]
    assert "Traceback" not in res.stderr and "KeyboardInterrupt" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("fp8-doctor: error: ")
    assert res.stdout == ""


def test_ctrl_c_while_nvidia_smi_hangs_kills_it(area: Path) -> None:
    # The fake nvidia-smi sends the Ctrl-C itself, once it runs, then hangs: the interrupt lands
    # while fp8-doctor waits for it, whatever the load. (The test used to send it once it saw the
    # pid file: a test process starved for the probe's 5 s let the probe time nvidia-smi out and
    # the check finish first - exit code 1, not 130.)
    bin_dir = area / "smi"
    bin_dir.mkdir()
    require_exec(bin_dir)
    pidfile = area / "smi.pid"
    smi = bin_dir / "nvidia-smi"
    sent = area / "sent"
    smi.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nkill -INT $PPID && : > {sent}\n"
                   "exec sleep 300\n")
    smi.chmod(0o755)
    env = _env(area, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               LD_LIBRARY_PATH=str(area / "no-lib"))
    proc = subprocess.Popen([*write_script(area / "bin"), "check", "job", "--no-smoke"],
                            cwd=area, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    if proc.returncode != 130 and not sent.exists():
        # The probe's 5 s timeout killed the shell before it got to its `kill` (a machine too
        # loaded to start it in time): no Ctrl-C was sent, nothing here was tested.
        pytest.skip("the probe timed nvidia-smi out before it sent the Ctrl-C")
    assert proc.returncode == 130, f"exit code {proc.returncode}: {(out + err)[-3000:]}"
    smi_pid = int(pidfile.read_text())
    assert "Traceback" not in err
    _wait_for(lambda: not _alive(smi_pid), "nvidia-smi killed", timeout=60)
    assert list((area / "tmp").iterdir()) == []      # its private folder is gone too


def test_ctrl_c_while_the_nvml_child_hangs_kills_it(area: Path) -> None:
    # As with nvidia-smi above, the stand-in library sends the Ctrl-C itself from inside the
    # NVML init that hangs (FAKE_NVML_MODE=interrupt): seen from the test, the child could be
    # gone already (the probe's 10 s timeout) when a starved test process got to send it.
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("needs a C compiler to build a stand-in libnvidia-ml.so.1")
    pytest.importorskip("pynvml")
    lib = area / "lib"
    lib.mkdir()
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(lib / "libnvidia-ml.so.1"),
                    str(Path(__file__).parent / "probes" / "fake_nvml.c")], check=True,
                   timeout=120)
    pidfile, sent = area / "nvml.pid", area / "sent"
    env = _env(area, LD_LIBRARY_PATH=str(lib), FAKE_NVML_MODE="interrupt",
               FAKE_NVML_PIDFILE=str(pidfile), FAKE_NVML_SENT=str(sent),
               PATH=str(area / "no-smi"))   # no nvidia-smi either: only the NVML child runs
    env["PATH"] += os.pathsep + os.path.dirname(sys.executable)
    proc = subprocess.Popen([*write_script(area / "bin"), "check", "job", "--no-smoke"],
                            cwd=area, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    if proc.returncode != 130 and not sent.exists():
        # The probe's 10 s timeout killed the child before its init sent the Ctrl-C (a machine
        # too loaded to start Python in time): nothing here was tested.
        pytest.skip("the probe timed the NVML child out before it sent the Ctrl-C")
    assert proc.returncode == 130, f"exit code {proc.returncode}: {(out + err)[-3000:]}"
    assert "Traceback" not in err
    kid = int(pidfile.read_text())
    _wait_for(lambda: not _alive(kid), "the NVML child killed", timeout=60)
    assert list((area / "tmp").iterdir()) == []


def test_sigterm_during_the_smoke_step_kills_the_child_and_removes_its_folders(
        area: Path) -> None:
    pytest.importorskip("torch")
    proc = subprocess.Popen([*write_script(area / "bin"), "smoke", "--device", "cpu",
                             "--backend", "scaled_mm", "--no-speed"], cwd=area,
                            env=_env(area), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    tmp = area / "tmp"
    try:
        # the smoke step's work folder exists and its child runs (importing torch, or later)
        _wait_for(lambda: any(p.name.startswith("fp8-doctor-smoke-") for p in tmp.iterdir())
                  and any(_alive(p) for p in _running_in(tmp)), "the smoke child running")
        kids = _running_in(tmp)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    if proc.returncode == 0:
        pytest.skip("the smoke step finished before the signal")
    assert proc.returncode == 143, err[-3000:]
    assert "Traceback" not in err and "terminated" in err
    _wait_for(lambda: not any(_alive(k) for k in kids), "the smoke child killed", timeout=60)
    assert list(tmp.iterdir()) == []


def test_a_signal_inside_a_held_block_waits_for_its_end(tmp_path: Path) -> None:
    # proc.start makes a child's folder, starts it and records both inside held(): a signal in
    # between (the smoke step starting its children when SIGTERM came) left either behind.
    code = ("import os, signal\nfrom preflight.base import signals\nsignals.install_signals()\n"
            "seen = []\ntry:\n    with signals.held():\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n        seen.append('inside')\n"
            "    seen.append('after')\nexcept KeyboardInterrupt:\n    seen.append('interrupted')\n"
            "print(seen, signals.exit_code(130))\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert res.stdout.strip() == "['inside', 'interrupted'] 143", res.stderr
