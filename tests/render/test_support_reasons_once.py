"""The support report states each repeated reason once (issue 24 item 5): the 230-character NVML
reason was still written out in full 4 times (a finding's evidence, the ``gpu.nvml_error`` fact,
the probes table and the list of reasons). Every place now refers to the numbered reason."""

from __future__ import annotations

import dataclasses
import re

from render_cases import findings_report

from preflight.facts import Unknown
from preflight.findings import Evidence
from preflight.probes.base import ProbeResult, ProbeStatus
from preflight.redact import Redactor
from preflight.render import render

NEUTRAL = Redactor(home=None, user=None, hostnames=())
HEAD = ("NVML: NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed here, "
        "or it is not mounted into this container (libnvidia-ml.so.1 is in no folder of "
        "LD_LIBRARY_PATH, /etc/ld.so.cache or the system library folders)")
NVML = HEAD + "; nvidia-smi not found on PATH"


def _report():   # what a laptop's `fp8-doctor report` holds, from our own record types
    base = findings_report()
    first = dataclasses.replace(base.findings[0], evidence=(
        *base.findings[0].evidence, Evidence("gpu.count", Unknown(NVML), "nvml")))
    facts = base.facts.merged({"gpu.count": Unknown(NVML), "gpu.cc": Unknown(NVML),
                               "gpu.nvml_error": HEAD})
    probes = (ProbeResult("gpu", status=ProbeStatus.SKIPPED, reason=NVML, seconds=0.0001),
              ProbeResult("python", reason="ok"))
    return dataclasses.replace(base, findings=(first, *base.findings[1:]), facts=facts,
                               probes=probes)


def test_the_nvml_reason_is_written_out_once() -> None:
    md = render(_report(), "markdown", redactor=NEUTRAL)
    assert md.count("no NVIDIA driver is installed here") == 1
    n = re.search(r"^(\d+)\. NVML: NVML library", md, re.M)
    assert n is not None                                   # the one place, numbered
    why = f"why: {n.group(1)}"
    assert f"| `gpu.count` | unknown ({why}) | nvml |" in md        # evidence and facts
    assert f"| `gpu.nvml_error` | see {why} |" in md                 # its head, a fact
    assert re.search(rf"\| `gpu` \| skipped \|.*\| {why} \|", md)    # the probe's reason
    assert "| `python` | ok |" in md                                 # short ones stay


def test_a_long_value_that_is_no_reason_is_shown_as_it_is() -> None:
    long_path = "/data/" + "x" * 120 + "/train.yaml"
    report = _report()
    report = dataclasses.replace(report, facts=report.facts.merged({"job.note": long_path}))
    md = render(report, "markdown", redactor=NEUTRAL)
    assert long_path in md and md.count("no NVIDIA driver is installed here") == 1
