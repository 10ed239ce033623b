"""``fp8-doctor smoke`` through the real command line: redaction of what a crashing child says,
``--no-redact``, and the validation of ``--timeout``.

The crash is real: a ``torch`` package first on the child's PYTHONPATH raises at import, as a
broken install does, with a token and home paths in its message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight import cli
from preflight.redact import MASK, default_redactor

TOKEN = "hf_PLANTEDsmokeToken1234567890abcd"
OTHER_HOME = "/home/planteduser"


@pytest.fixture
def broken_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A torch that fails to import with a secret in its message; yields the run's home.

    The home is a folder of the test's own: the machine's HOME may be "/" (a container user
    without one), which the redactor rightly does not shorten to "~", and the "~/secretproj"
    below then failed on such a machine only."""
    home = str(tmp_path / "home")
    monkeypatch.setenv("HOME", home)
    default_redactor.cache_clear()      # cached per process: built again with this home
    pkg = tmp_path / "fake" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        f"raise RuntimeError('CUDA error: token {TOKEN} in {home}/secretproj/x and "
        f"{OTHER_HOME}/y')\n")
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(tmp_path / "fake"), old) if p))
    yield home
    default_redactor.cache_clear()


def _smoke(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(["smoke", "--device", "cpu", "--timeout", "60", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_smoke_output_is_redacted(broken_torch: str, capsys, fmt: str) -> None:
    code, out = _smoke(capsys, "--format", fmt)
    assert code == 3           # the child crashed: 3, not the 1 of a failed check
    assert TOKEN not in out and OTHER_HOME not in out
    if len(broken_torch) > 1:
        assert f"{broken_torch}/secretproj" not in out
    assert MASK in out and "~/secretproj" in out
    if fmt == "json":
        doc = json.loads(out)
        assert doc["facts"]["smoke.status"] == "crash"
        for text in (doc["facts"]["smoke.error"], doc["smoke"]["error"],
                     doc["smoke"]["stderr_tail"]):
            assert TOKEN not in text and MASK in text


def test_smoke_no_redact_opts_out(broken_torch: str, capsys) -> None:
    code, out = _smoke(capsys, "--format", "json", "--no-redact")
    assert code == 3
    assert TOKEN in json.loads(out)["smoke"]["stderr_tail"]


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "-inf", "soon"])
def test_bad_timeout_is_a_usage_error(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["smoke", "--device", "cpu", f"--timeout={value}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--timeout" in err and "Traceback" not in err


def test_check_refuses_an_infinite_smoke_timeout(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--smoke-timeout", "inf"])
    assert exc.value.code == 2
    assert "finite" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["check", "--smoke-timeout", "1e300"],
                                  ["smoke", "--timeout", "1e300"]])
def test_a_timeout_past_a_week_is_refused_everywhere(argv: list[str], capsys) -> None:
    """1e300 is finite but as good as no hang protection (and overflows a subprocess timeout);
    the week cap dist had applies to every timeout flag."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert "at most 604800 seconds" in capsys.readouterr().err


def test_a_named_backend_that_is_not_installed_fails(capsys) -> None:
    """`smoke --backend te` without Transformer Engine: exit 1 and says so (was: ok, exit 0)."""
    import importlib.util

    pytest.importorskip("torch")
    if importlib.util.find_spec("transformer_engine") is not None:
        pytest.skip("Transformer Engine is installed here")
    code, out = _smoke(capsys, "--backend", "te", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["facts"]["smoke.status"] == "failed"
    assert "requested backend te is not installed" in doc["facts"]["smoke.te.error"]
