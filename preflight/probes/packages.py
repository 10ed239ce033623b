"""Packages probe: installed distributions that matter to FP8, from metadata files only.

Nothing here imports torch, transformer_engine, deepspeed or torchao: a broken install must not
break the doctor (pytorch/pytorch#47752, deepspeedai/DeepSpeed#3406), and importing torch costs
seconds. Versions come from one pass over ``importlib.metadata.distributions()``, reading only the
header of each METADATA file (the stdlib's e-mail parser costs ~0.7 ms a distribution, too slow
for a 200-package environment). torch's CUDA build is read from ``torch/version.py`` as text
(``ast``), never by importing it.

Also reported: duplicate installs of one distribution on ``sys.path`` (the first one wins at
import time), distributions whose metadata is unreadable, the Transformer Engine package set and
whether its parts agree (TE asserts "Transformer Engine package version mismatch" at import,
``transformer_engine/common/__init__.py``), and CUDA library wheel versions.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from preflight.base import bounded
from preflight.base.builds import pairing_facts
from preflight.facts import Unknown
from preflight.frameworks._index import DISTRIBUTIONS
from preflight.probes.base import ProbeResult
from preflight.probes.pathentries import unusable_path_entries, zip_header

if TYPE_CHECKING:
    import importlib.metadata as md

SOURCE = "importlib.metadata"

# Distributions that matter to FP8 training (PEP 503 names): these, every framework's own
# (each record's distributions and requires, through the generated index so that no reader is
# imported), and every name starting with a prefix below (nvidia-cudnn-cu12, nvidia-cublas-cu12,
# nvidia-nccl-cu12, transformer-engine-*...).
INTERESTING: frozenset[str] = frozenset({
    "torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "numpy",
    "transformer-engine", "transformer-engine-cu12", "transformer-engine-cu13",
    "transformer-engine-torch", "transformer-engine-jax", "torchao", "ms-amp",
    "peft", "safetensors", "flash-attn", "flash-attn-3",
    "xformers", "apex", "bitsandbytes", "liger-kernel", "composer",
    "megatron-lm", "nemo-run", "nvidia-ml-py", "pynvml", "fp8-doctor",
    # RL rollout engines whose FP8 paths the RL rules read (issue 23: FP8 rollout, weight sync)
    "vllm", "sglang",
}) | frozenset(d for dists in DISTRIBUTIONS.values() for d in dists)
PREFIXES: tuple[str, ...] = ("nvidia-", "transformer-engine")

TE_PARTS = ("transformer-engine", "transformer-engine-cu12", "transformer-engine-cu13",
            "transformer-engine-torch")

# Only Name and Version are needed, at the top of the header: read up to the header's end (the
# first blank line) and never past this. A METADATA symlinked to /dev/zero was read whole
# (issue 13: OOM at 24 GB); a long legacy Description header still fits.
METADATA_MAX_BYTES = 256 * 1024
# torch/version.py is ~300 bytes; CUDA's version.json a few KiB.
SMALL_FILE_MAX_BYTES = 1024 * 1024

_NORMALIZE = re.compile(r"[-_.]+")
_HEADER = re.compile(r"^(Name|Version):[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def normalize(name: str) -> str:
    """PEP 503 name: lower case, runs of ``-_.`` become ``-``."""
    return _NORMALIZE.sub("-", name).lower()


def interesting(name: str) -> bool:
    return name in INTERESTING or name.startswith(PREFIXES)


@dataclass(frozen=True)
class Installed:
    """One distribution found on ``sys.path``."""

    name: str        # PEP 503-normalized
    version: str     # exactly as in METADATA
    location: str    # the folder holding the .dist-info


@dataclass(frozen=True)
class Scan:
    """Every distribution found, in ``sys.path`` order, and the ones whose metadata is broken."""

    installed: tuple[Installed, ...]
    broken: tuple[str, ...]


def _meta_path(dist: md.Distribution) -> str:
    path = getattr(dist, "_path", None)  # PathDistribution keeps its .dist-info folder here
    return str(path) if path is not None else repr(dist)


def _read_header(dist: md.Distribution) -> str | None:
    """The METADATA (or PKG-INFO) header of ``dist``, bounded; None when it has none.

    Path distributions are read here (regular files only, up to the header's end, at most
    :data:`METADATA_MAX_BYTES`); any other kind through its own ``read_text``.
    """
    folder = getattr(dist, "_path", None)
    if hasattr(folder, "joinpath") and hasattr(folder, "open") and not isinstance(
            folder, os.PathLike | str):
        return zip_header(folder, METADATA_MAX_BYTES)
    if not isinstance(folder, os.PathLike | str):
        return dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("")
    base = os.fspath(folder)
    # dist-info has METADATA, egg-info PKG-INFO; a single-file .egg-info is itself the header.
    for candidate in (os.path.join(base, "METADATA"), os.path.join(base, "PKG-INFO"), base):
        if not os.path.lexists(candidate) or os.path.isdir(candidate):
            continue
        raw = bounded.read_bytes(candidate, METADATA_MAX_BYTES, stop=b"\n\n", partial=True)
        if raw:
            return raw.decode("utf-8", "replace").replace("\r\n", "\n")
    return None


@dataclass(frozen=True)
class _Found:
    """A ``.dist-info`` / ``.egg-info`` folder, as :class:`importlib.metadata.PathDistribution`
    shows it to :func:`scan` (``_path`` and ``locate_file``), without its import cost."""

    _path: Path

    def locate_file(self, path: str) -> Path:
        return self._path.parent / path


def discover() -> Iterable[Any]:
    """The distributions ``importlib.metadata.distributions()`` yields, in its order.

    Importing importlib.metadata costs ~10 ms of every check (it loads the e-mail package and
    zipfile, issue 14 item 4), and all it does here is list ``*.dist-info`` / ``*.egg-info``
    folders on ``sys.path``. So that listing is done here, the way its ``Lookup`` does it
    (grouped by normalized name, then ``.egg`` folders' EGG-INFO); anything else on the path (a
    zip or an .egg file) or another finder that provides distributions goes through
    importlib.metadata itself. tests/probes/test_probe_packages.py compares the two.
    """
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path) \
            or any(p and os.path.exists(p) and not os.path.isdir(p) for p in sys.path):
        import importlib.metadata as md

        # never a FIFO or a device on the path: opened as a zip, it blocks (issue 21 item 4)
        skip = {entry for entry, _ in unusable_path_entries(sys.path)}
        return md.distributions(path=[p for p in sys.path if p not in skip])
    return _listed(sys.path)


def _listed(path: Sequence[str]) -> Iterator[_Found]:
    for root in path:
        try:
            children = os.listdir(root or ".")
        except (OSError, ValueError, TypeError):
            continue  # missing or unreadable: importlib.metadata finds nothing there either
        base = os.path.basename(root).lower()
        infos: dict[str, list[str]] = {}
        eggs: list[str] = []
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                name = low.rpartition(".")[0].partition("-")[0]
                infos.setdefault(_NORMALIZE.sub("-", name).lower().replace("-", "_"),
                                 []).append(child)
            elif base.endswith(".egg") and low == "egg-info":
                eggs.append(child)
        for child in (*(c for group in infos.values() for c in group), *eggs):
            yield _Found(Path(root, child))


def scan(dists: Iterable[Any] | None = None) -> Scan:
    """One pass over the installed distributions, reading Name and Version from METADATA text."""
    broken: list[str] = []
    if dists is None:
        dists = discover()
        broken += [f"{entry}: on sys.path but {what}, not a folder or a zip; not read"
                   for entry, what in unusable_path_entries(sys.path)]
    installed: list[Installed] = []
    seen: set[str] = set()
    for dist in dists:
        where = _meta_path(dist)
        try:
            real = os.path.realpath(where)
        except (OSError, ValueError):
            real = where
        if real in seen:  # the same folder reached twice through sys.path
            continue
        seen.add(real)
        label = os.path.basename(where.rstrip("/")) or where
        try:
            text = _read_header(dist)
        except bounded.NotRegularFile as exc:
            broken.append(f"{label}: metadata is {exc.kind}, not a regular file; not read")
            continue
        except Exception as exc:  # noqa: BLE001 - one unreadable distribution is a fact
            broken.append(f"{label}: metadata unreadable ({type(exc).__name__})")
            continue
        if not text:
            broken.append(f"{label}: no METADATA file")
            continue
        head = text.split("\n\n", 1)[0]
        fields = {k: v for k, v in _HEADER.findall(head)}
        if not fields.get("Name") or not fields.get("Version"):
            missing = [k for k in ("Name", "Version") if not fields.get(k)]
            broken.append(f"{label}: METADATA has no {' or '.join(missing)}")
            continue
        try:
            location = str(dist.locate_file(""))
        except Exception:  # noqa: BLE001 - a non-path distribution (e.g. a zip importer)
            location = ""
        installed.append(Installed(normalize(fields["Name"]), fields["Version"], location))
    return Scan(tuple(installed), tuple(broken))


def version_facts(name: str, version: str) -> dict[str, Any]:
    """``pkg.<name>.version`` plus ``.public`` and (when there is one) ``.local``."""
    facts: dict[str, Any] = {f"pkg.{name}.version": version}
    public, sep, local = version.partition("+")
    try:
        from packaging.version import InvalidVersion, Version

        public = Version(version).public  # normalized ("1.0.0-rc1" -> "1.0.0rc1"), comparable
    except InvalidVersion:
        pass  # keep the plain split: a legacy version is still reported exactly
    facts[f"pkg.{name}.public"] = public
    if local:
        facts[f"pkg.{name}.local"] = local
    return facts


def read_torch_version_file(path: str | Path) -> dict[str, Any]:
    """The assignments of ``torch/version.py`` (``__version__``, ``cuda``, ``hip``, ...), as data.

    Parsed with ``ast`` and ``literal_eval``: the file is never executed.
    """
    text = bounded.read_bytes(path, SMALL_FILE_MAX_BYTES).decode("utf-8")
    tree = ast.parse(text, filename=str(path))
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            try:
                values[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue  # not a plain literal ({[]: 1}, a call, ...): not a value we read
    return values


def torch_build_facts(version_py: str | Path | None) -> dict[str, Any]:
    """``cuda.torch_*`` facts from a ``torch/version.py`` path (None: torch has none)."""
    if version_py is None or not os.path.isfile(version_py):
        why = Unknown("torch is installed but torch/version.py was not found")
        return {"cuda.torch_build": why, "cuda.torch_variant": why}
    try:
        values = read_torch_version_file(version_py)
    except (OSError, SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        # ValueError covers UnicodeDecodeError and source with NUL bytes.
        why = Unknown(f"torch/version.py could not be parsed: {type(exc).__name__}: {exc}")
        return {"cuda.torch_build": why, "cuda.torch_variant": why}
    facts: dict[str, Any] = {}
    cuda, hip, xpu = values.get("cuda"), values.get("hip"), values.get("xpu")
    if cuda:
        facts["cuda.torch_build"] = str(cuda)
        facts["cuda.torch_variant"] = "cuda"
    elif hip:
        facts["cuda.torch_hip"] = str(hip)
        facts["cuda.torch_variant"] = "rocm"
    elif xpu:
        facts["cuda.torch_variant"] = "xpu"
    else:
        facts["cuda.torch_variant"] = "cpu"
    if values.get("git_version"):
        facts["cuda.torch_git"] = str(values["git_version"])
    return facts


def _find_torch_version_py() -> str | None:
    """Where ``import torch`` would load torch/version.py from, without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        candidate = os.path.join(folder, "version.py")
        if os.path.isfile(candidate):
            return candidate
    return None


def te_facts(first: Mapping[str, Installed]) -> dict[str, Any]:
    """``pkg.te.*``: which Transformer Engine parts are installed and whether they agree."""
    parts = {n: first[n].version for n in TE_PARTS if n in first}
    if not parts:
        return {}
    cores = [n for n in ("transformer-engine-cu12", "transformer-engine-cu13") if n in parts]
    facts: dict[str, Any] = {
        "pkg.te.versions": parts,
        # TE compares the exact version strings of its parts at import time.
        "pkg.te.versions_agree": len(set(parts.values())) == 1,
        "pkg.te.core": cores[0] if len(cores) == 1 else ("none" if not cores else "multiple"),
    }
    if len(cores) == 1:
        facts["pkg.te.cuda_major"] = int(cores[0].rsplit("cu", 1)[1])
    return facts


def _wheel_version(first: Mapping[str, Installed], stem: str, cuda_major: str) -> str | None:
    """Version of ``nvidia-<stem>-cuNN`` (or the unsuffixed name), preferring torch's CUDA major."""
    names = [f"nvidia-{stem}-cu{cuda_major}", f"nvidia-{stem}-cu12", f"nvidia-{stem}-cu13",
             f"nvidia-{stem}-cu11", f"nvidia-{stem}"]
    for name in names:
        if name in first:
            return first[name].version
    return None


def _toolkit_version(env: Mapping[str, str]) -> str | None:
    """CUDA toolkit at CUDA_HOME / CUDA_PATH / /usr/local/cuda, from its version.json."""
    for root in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if not root:
            continue
        try:
            doc = json.loads(bounded.read_bytes(os.path.join(root, "version.json"),
                                                SMALL_FILE_MAX_BYTES))
            return str(doc["cuda"]["version"])
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
    return None


def package_facts(found: Scan, torch_version_py: str | None | Unknown = None,
                  env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """All ``pkg.*`` and ``cuda.*`` facts from one scan."""
    first: dict[str, Installed] = {}
    versions: dict[str, list[str]] = {}
    for inst in found.installed:
        if not interesting(inst.name):
            continue
        first.setdefault(inst.name, inst)
        versions.setdefault(inst.name, []).append(inst.version)
    facts: dict[str, Any] = {"pkg.broken": list(found.broken)}
    for name, inst in first.items():
        facts.update(version_facts(name, inst.version))
        facts[f"pkg.{name}.location"] = inst.location
        if len(versions[name]) > 1:
            facts[f"pkg.{name}.duplicate"] = versions[name]
    facts.update(te_facts(first))
    facts.update(pairing_facts(facts))  # which torch a nightly / source build pairs with
    if "torch" in first:
        if not isinstance(torch_version_py, Unknown):
            facts.update(torch_build_facts(torch_version_py))
    major = str(facts.get("cuda.torch_build", "")).split(".")[0]
    for fact, stem in (("cuda.cudnn", "cudnn"), ("cuda.cublas", "cublas"),
                       ("cuda.runtime", "cuda-runtime")):
        ver = _wheel_version(first, stem, major)
        if ver:
            facts[fact] = ver
    toolkit = _toolkit_version(os.environ if env is None else env)
    if toolkit:
        facts["cuda.nvcc"] = toolkit
    return facts


def probe_packages(dists: Sequence[md.Distribution] | None = None,
                   torch_version_py: str | None = None) -> ProbeResult:
    """The ``pkg.*`` / ``cuda.*`` facts of this Python environment."""
    found = scan(dists)
    version_py = torch_version_py if torch_version_py is not None else _find_torch_version_py()
    facts = package_facts(found, version_py)
    prov = {n: SOURCE for n in facts}
    for name in facts:
        if name.startswith("cuda.torch_"):
            prov[name] = "torch/version.py"
        elif name == "cuda.nvcc":
            prov[name] = "CUDA_HOME/version.json"
    return ProbeResult("packages", facts, prov)
