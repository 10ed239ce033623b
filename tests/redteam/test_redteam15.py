"""redteam15 (session 42): attacks on what sessions 39-41 added (reading/pyinit, pymodelrows,
pynested, pyclick, pyfire, pyhydra + hydracompose, pyfromyaml, pyjsonarg, pyenviron, pywrites,
shellside, shellheredoc, shelldir, launchroot, launchenv; frameworks/rl2, diffsynth, simpletuner,
trl_rollout, swift_walk, envfile, kvformat, the Megatron-Bridge recipe tables; fixdiff's TOML /
YAML / shell edits; render/junit, redact/content, smoke/cache, cluster/payload). Each case of the
first part failed before its fix:

- ``@hydra.main(version_base="9...9.2")`` (over 4,300 digits, no ``config_path``): ``int()``
  refused the number (CPython's integer string limit), the launch script that runs it was "could
  not interpret this file (ValueError ...)" and nothing of the job was read (hydracompose);
- thousands of chained assignments (``export V2=${V1}x``): every computed line copied every
  variable through a regex, quadratic in the script's length (5,000 lines: 16 s on the CLI, a
  1 MiB script tens of minutes) (shellvars);
- the bytecode cache's marker (``complete.json``) that is a FIFO: opened without ``O_NONBLOCK``,
  the smoke step blocked forever before any child ran (smoke/cache.read_marker);
- a rank whose collectives result has a list as its status or as an operation's result: rank 0
  merged it as it came (TypeError / AttributeError), exit 3 and no report (cluster/payload now
  refuses it with the reason, as other lies);
- scripts that source (or run) each other: a wrapper no framework reads peeks 4 + 16 + 64 of the
  scripts it runs, and every wrapper of the check did it again, the same few files read on every
  path to them (12 files: 1,030 reads; 200 files each sourcing all: over a minute). The peeks of
  one check are shared now (jobs/scriptcalls.per_check);
- a keyword given twice in a call (``Accelerator(**{'mixed_precision': 'no'},
  mixed_precision='fp8')``, two ``**`` mappings sharing a key): Python raises TypeError and the
  call never happens; the last value was read, a confident FP8 "yes" (pysource/pyvalues).

The rest pin what held (no traceback, bounded, nothing outside the job read or reported).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preflight.facts import Facts, Unknown
from preflight.intent import derive
from preflight.jobs.read import read_paths

PROG = textwrap.dedent("""\
    import torch
    import transformer_engine.pytorch as te
    m = te.Linear(64, 64)
    opt = torch.optim.AdamW(m.parameters())
    with te.fp8_autocast(enabled=True):
        y = m(torch.randn(16, 64))
    y.sum().backward()
    opt.step()
    """)


def _job(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _read(path: Path) -> tuple[dict[str, Any], list[Any]]:
    read = read_paths([str(path)])
    values, _ = derive(Facts(read.facts, read.provenance))
    return ({k[7:]: v for k, v in values.items() if k.startswith("intent.")},
            list(read.problems))


# --- a number past int()'s digit limit in a Hydra version_base ---------------------------------

_HYDRA = textwrap.dedent("""\
    import hydra
    import transformer_engine.pytorch as te
    @hydra.main(config_name="config", version_base=BASE)
    def main(args):
        with te.fp8_autocast(enabled=args.fp8_config.enabled):
            pass
    if __name__ == "__main__":
        main()
    """)


@pytest.mark.parametrize("base", ['"' + "9" * 5000 + '.2"', '"1.' + "0" * 5000 + '2"'])
def test_a_hydra_version_base_past_the_digit_limit_is_read(tmp_path: Path, base: str) -> None:
    job = _job(tmp_path, {"train.py": _HYDRA.replace("BASE", base),
                          "config.yaml": "fp8_config:\n  enabled: true\n",
                          "run.sh": "python train.py\n"})
    got, problems = _read(job / "run.sh")
    assert not problems                           # was: run.sh "could not interpret" (ValueError)
    assert got["backend"] == "te"                 # the script was read
    assert isinstance(got["fp8"], Unknown) and "config_path" in got["fp8"].reason


def test_a_hydra_version_base_of_this_century_still_decides(tmp_path: Path) -> None:
    job = _job(tmp_path, {"train.py": _HYDRA.replace("BASE", '"1.1"'),
                          "config.yaml": "fp8_config:\n  enabled: true\n",
                          "run.sh": "python train.py\n"})
    assert _read(job / "run.sh")[0]["fp8"] is True    # before 1.2 config_path defaults to "."


# --- chained assignments stay linear ------------------------------------------------------------

def test_thousands_of_chained_assignments_are_read_in_linear_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts the values the computed-assignment pass looks at (no timing): a few per line."""
    from preflight.reading import shellvars

    seen = 0
    real = shellvars._plain

    def counting(value: str) -> bool:
        nonlocal seen
        seen += 1
        return real(value)

    monkeypatch.setattr(shellvars, "_plain", counting)
    lines = 3000
    script = "".join(f"export V{i}=${{V{i - 1}}}x\n" for i in range(1, lines)) + \
        f"python train.py --fp8 $V{lines - 1}\n"
    job = _job(tmp_path, {"run.sh": script, "train.py": PROG})
    got, _ = _read(job / "run.sh")
    assert got["fp8"] is True
    assert seen < 20 * lines                      # was ~lines * lines / 2 per pass


# --- the bytecode cache's marker that is a FIFO -------------------------------------------------

_MARKER_CHILD = """
import sys
from preflight.smoke import cache
print(repr(cache.read_marker(sys.argv[1])))
print(cache.complete(sys.argv[1], {"torch": ["/t", 1, 1]}))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_marker_that_is_a_fifo_is_no_marker_and_never_blocks(tmp_path: Path) -> None:
    """``complete.json`` replaced by a FIFO (no writer): the open blocked forever, so the smoke
    step hung before any child ran. The child here ends at once, or the run fails."""
    marker = tmp_path / "complete.json"
    os.mkfifo(marker)
    proc = subprocess.run([sys.executable, "-c", _MARKER_CHILD, str(marker)],
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["{}", "False"]


# --- a rank's collectives result of the wrong shape ---------------------------------------------

def _rank(rank: int, collectives: object) -> dict[str, Any]:
    return {"rank": rank, "local_rank": rank, "host": f"h{rank}", "facts": {}, "env": {},
            "device": {"entry": str(rank), "key": f"index:{rank}", "index": rank},
            "collectives": collectives}


_OK = {"status": "ok", "backend": "nccl", "bytes": 8,
       "all_reduce": {"ok": True, "seconds": 0.1, "busbw_gbps": 1.0},
       "all_gather_uint8": {"ok": True, "seconds": 0.1, "busbw_gbps": 1.0}, "error": None}


@pytest.mark.parametrize("lie", [
    {"status": [1]}, {"status": {"a": 1}}, {**_OK, "all_reduce": [1]},
    {**_OK, "all_gather_uint8": "x"}, {**_OK, "all_reduce": 5},
])
def test_a_rank_lying_about_its_collectives_is_refused_not_an_internal_error(lie: Any) -> None:
    """rank 0 merged what a rank said of its collectives as it came: a list for ``status``
    (a set of statuses: TypeError) or a list for an operation's result (``.get``:
    AttributeError) ended rank 0 with exit 3 and no report. Now the payload is refused with the
    reason (payload.accept), as other lies are, and the merge runs on what is left."""
    import json

    from preflight.cluster.collectives import merge_results
    from preflight.cluster.payload import Refused, accept

    raw = json.dumps(_rank(1, lie)).encode()
    with pytest.raises(Refused, match="collectives"):
        accept(raw, 1, len(raw))
    honest = accept(json.dumps(_rank(0, _OK)).encode(), 0, 10)
    assert merge_results({0: honest["collectives"]})["cluster.collectives.status"] == "ok"


# --- scripts that source each other: each read once per check -----------------------------------

def test_scripts_sourcing_each_other_are_not_read_again_on_every_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.sh`` sources s0..s11, each of which sources all twelve: every wrapper peeked 4 + 16
    + 64 scripts, the same twelve files read 1,030 times (200 files: over a minute). Counts the
    reads (no timing): the peeks of one check are shared (jobs/scriptcalls.per_check)."""
    import preflight.jobs.read as jobs_read

    n = 12
    files = {"run.sh": "".join(f"source s{i}.sh\n" for i in range(n)) + "python train.py\n",
             "train.py": PROG}
    files.update({f"s{i}.sh": "".join(f"source s{j}.sh\n" for j in range(n)) for i in range(n)})
    job = _job(tmp_path, files)
    reads = 0
    real = jobs_read.read_file

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        reads += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(jobs_read, "read_file", counting)
    got, _ = _read(job / "run.sh")
    assert got["fp8"] is True
    assert reads < 15 * n                          # was 1,030


# --- a keyword given twice in a call ------------------------------------------------------------

@pytest.mark.parametrize("call", [
    "Accelerator(**{'mixed_precision': 'no'}, **{'mixed_precision': 'fp8'})",
    "Accelerator(mixed_precision='no', **{'mixed_precision': 'fp8'})",
    "Accelerator(**{'mixed_precision': 'no'}, mixed_precision='fp8')",
])
def test_a_keyword_given_twice_is_no_value_of_the_call(tmp_path: Path, call: str) -> None:
    """Python raises TypeError ("got multiple values for keyword argument"): the Accelerator is
    never built. The last value was read: a confident FP8 "yes" (pysource, pyvalues)."""
    job = _job(tmp_path, {"train.py": f"from accelerate import Accelerator\n{call}\n"})
    got = _read(job / "train.py")[0]["fp8"]
    assert isinstance(got, Unknown) and "twice" in got.reason


def test_keywords_from_a_mapping_and_the_call_that_differ_still_decide(tmp_path: Path) -> None:
    job = _job(tmp_path, {"train.py": "from accelerate import Accelerator\n"
                                      "Accelerator(**{'cpu': False}, mixed_precision='fp8')\n"})
    assert _read(job / "train.py")[0]["fp8"] is True
