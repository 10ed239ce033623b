"""The versions a job pins in its own files: an NVIDIA NeMo Framework container it runs in
(``nvcr.io/nvidia/nemo:25.09`` -> the Megatron-Bridge, Megatron Core, Transformer Engine, NeMo and
PyTorch versions NVIDIA lists for that release) or a ``pip install megatron-bridge==X`` line.
Stated as ``config.pins.<dist>`` with the file and line; :mod:`preflight.environment` uses a pin
for a package the judged machine lacks, so version rules decide with the job's own word instead
of "not installed here".

The table is NVIDIA's "Software Component Versions" page as Megatron-Bridge keeps it,
docs/releases/software-versions.md at 067f987d (NVIDIA-NeMo/Megatron-Bridge, 2026-06-22: NeMo
Framework 25.09 to 26.06). A component the page gives as a branch build (Megatron Core
``dev:0.15.0`` in 25.11, ``main:0.16.0`` in 26.02) is no release: not pinned. Only a release tag
is read (``25.09``, ``25.09.00``): a patch tag (``26.06.01``), a model's own build
(``25.11.nemotron_3_nano``), a release candidate or ``dev`` may ship other versions and pins
nothing. Image names as Slurm's pyxis (``nvcr.io#nvidia/nemo:25.09``) and enroot's squash files
(``nvidia+nemo+25.09.sqsh``) write them count too.
"""

from __future__ import annotations

import re
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.reading.pyenviron import Noted
from preflight.reading.types import ReaderOutput

PINS = "config.pins"
RELEASE_NOTES = ("NVIDIA-NeMo/Megatron-Bridge docs/releases/software-versions.md @ 067f987d")
TABLE: dict[str, dict[str, str]] = {
    "25.09": {"megatron-bridge": "0.1.0rc3", "megatron-core": "0.14.0",
              "transformer-engine": "2.7.0", "nemo-toolkit": "2.5.0",
              "torch": "2.8.0a0+5228986c39.nv25.6"},
    "25.11": {"megatron-bridge": "0.2.0", "transformer-engine": "2.9", "nemo-toolkit": "2.6.0",
              "torch": "2.9.0a0"},
    "26.02": {"megatron-bridge": "0.3.0", "transformer-engine": "2.12", "nemo-toolkit": "2.7.0",
              "torch": "2.10.0a0"},
    "26.04": {"megatron-bridge": "0.4.0", "megatron-core": "0.17.0",
              "transformer-engine": "2.14+71bbefb", "torch": "2.11.0a0+eb65b36914.nv26.02"},
    "26.06": {"megatron-bridge": "0.5.0", "megatron-core": "0.18.0",
              "transformer-engine": "2.16", "torch": "2.12.0a0+0291f960b6"},
}
# redteam17: `nvidia/` starts the image path (`mirror-nvidia/nemo` is another image), a digest
# after the tag (`:25.09@sha256:...`) is what Docker pulls, whatever the tag says
_IMAGE = re.compile(r"(?:nvcr\.io[/#])?(?<![\w.-])nvidia/nemo:([\w.+-]{1,80})(?![\w.+@-])"
                    r"|(?<![\w.-])nvidia\+nemo\+([\w.-]{1,80}?)\.sqsh\b")
_PIP = re.compile(r"\b(megatron[-_]bridge|megatron[-_]core|transformer[-_]engine)(?:\[[\w,]*\])?"
                  r"\s*==\s*([0-9][\w.+!-]{0,40})(?![\w.+!*-])")
# PEP 440 public version with an optional local part (packaging.version.VERSION_PATTERN, short)
_VERSION = re.compile(r"(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?"
                      r"(?:\.dev[0-9]+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?", re.I)
# a pin is a word of `pip install` (not download, uninstall, --dry-run: nothing installed)
_INSTALL = re.compile(r"\bpip3?[ \t]+install\b(?![^\n]*--dry-run)")
_COMMENT = re.compile(r"(?:^|[ \t])#.*")
_MAX_HITS = 64


def image_pins(image: str) -> tuple[str, dict[str, str]] | None:
    """``(release, {dist: version})`` of a NeMo image name, or None (not NeMo, or not a tag the
    release notes list)."""
    hit = _IMAGE.search(image)
    if hit is None:
        return None
    tag = hit.group(1) or hit.group(2)
    release = tag[:-3] if tag.endswith(".00") else tag
    return (release, TABLE[release]) if release in TABLE else None


def pins_in_text(path: str, text: str) -> tuple[dict[str, Any], dict[str, Source]]:
    """The pins a launch script's text states (comment lines skipped): the NeMo images it
    names and its ``pip install X==V`` words. Two different values for one distribution (two
    images, an image and a pip pin) are each a run of its own: Unknown naming them."""
    found: dict[str, list[tuple[str, int, str]]] = {}
    hits = 0
    installing = False          # a `pip install ... \` continued on this line
    for number, line in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", line)       # a comment, whole line or after a command
        start = 0 if installing else None
        if (hit := _INSTALL.search(line)) is not None:
            start = hit.end()
        installing = start is not None and line.endswith("\\")
        if not line.strip() or hits > _MAX_HITS:
            continue
        for match in _IMAGE.finditer(line):
            hits += 1
            if hits > _MAX_HITS:
                break
            got = image_pins(match.group(0))
            if got is None:
                continue
            for dist, version in got[1].items():
                found.setdefault(dist, []).append(
                    (version, number, f"the NeMo {got[0]} container, {RELEASE_NOTES}"))
        for match in _PIP.finditer(line, start if start is not None else len(line)):
            hits += 1
            if hits > _MAX_HITS:
                break
            if not _VERSION.fullmatch(match.group(2)):
                continue            # `==0.2.*`, `==0.2.0-`: a range or no version
            dist = match.group(1).lower().replace("_", "-")
            found.setdefault(dist, []).append((match.group(2), number, "pip pin"))
    facts: dict[str, Any] = {}
    prov: dict[str, Source] = {}
    for dist, values in found.items():
        seen = sorted({v for v, _, _ in values})
        facts[f"{PINS}.{dist}"] = values[0][0] if len(seen) == 1 else Unknown(
            f"the job names {dist} {', '.join(seen)[:120]} (lines "
            f"{', '.join(str(n) for _, n, _ in values[:6])}): which one runs is not decided here")
        prov[f"{PINS}.{dist}"] = Noted(path, values[0][1], values[0][2])
    return facts, prov


def with_pins(path: str, text: str, out: ReaderOutput) -> ReaderOutput:
    """A launch reader's output with the pins of its script's text, when it read a launch."""
    if not out.facts:
        return out
    facts, prov = pins_in_text(path, text)
    if not facts:
        return out
    return ReaderOutput({**facts, **out.facts}, {**prov, **out.provenance}, out.problems,
                        out.linked)


def image_facts(image: Any, where: Source) -> tuple[dict[str, Any], dict[str, Source]]:
    """The pins of one image value a config gives (cloudai's ``docker_image_url``)."""
    got = image_pins(image) if isinstance(image, str) else None
    if got is None:
        return {}, {}
    note = Noted(where.path, where.line, f"the NeMo {got[0]} container, {RELEASE_NOTES}")
    return ({f"{PINS}.{dist}": version for dist, version in got[1].items()},
            {f"{PINS}.{dist}": note for dist in got[1]})
