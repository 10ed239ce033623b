"""What a checkpoint's weights are: its ``config.json`` when the folder lies inside the job,
else its name (:mod:`.ckptname`). One bounded reader for the RL stacks that take a checkpoint
path (AReaL's ``actor.path``, slime's ``--hf-checkpoint``).

A Hugging Face checkpoint folder says how its weights are stored in ``config.json``'s
``quantization_config``, whose ``quant_method`` is one of transformers' ``QuantizationMethod``
names (src/transformers/utils/quantization_config.py @ 142576881d4a): ``fp8`` (block-wise e4m3,
FineGrainedFP8Config: Qwen/Qwen3-*-FP8), ``fbgemm_fp8`` (row-wise e4m3), ``compressed-tensors``
(llm-compressor: FP8 where every ``config_groups`` entry's ``weights`` is
``{type: float, num_bits: 8}``), integer and 4-bit formats (gptq, awq, bitsandbytes, mxfp4,
...) that are not FP8; no ``quantization_config`` is an unquantized (BF16/FP32) checkpoint.
AReaL's Megatron engine reads that same attribute (``self.hf_config.quantization_config``,
areal/engine/megatron_engine.py:364-366 @ 4aef98d8) and accepts only ``quant_method == "fp8"``
(:1195-1198), so the method is kept beside the verdict.

Bounded like every job file (:func:`preflight.reading.parse.read_text`: the read boundary with
symlinks resolved, a regular file of at most 1 MiB, UTF-8), the path searched at most
:data:`.ckptname.NAME_MAX` characters; nothing of the folder is imported or run. A folder
outside the job (an absolute ``/models/...``, ``~/...``, a symlink out) is not read: its name
decides, or the verdict is Unknown saying why.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks.ckptname import NAME_MAX, says_fp8
from preflight.reading.boundary import current, refuse
from preflight.reading.parse import ParseError, parse_json, read_text

_REMOTE = re.compile(r"^[A-Za-z][\w+.-]*://")       # hf://, s3://, oss://, hdfs://
_NOT_FP8 = frozenset({"gptq", "awq", "bitsandbytes", "aqlm", "vptq", "eetq", "higgs", "hqq",
                      "bitnet", "spqr", "mxfp4", "fp_quant", "auto-round"})
_FP8 = frozenset({"fp8", "fbgemm_fp8"})


@dataclass(frozen=True)
class Weights:
    """A checkpoint's weights as far as they are known here."""

    fp8: Any            # True / False, or Unknown with why
    quant_method: Any   # HF's quant_method, None (no quantization_config), or Unknown
    source: Source | None   # config.json:line when read from it


def weights(path: Any, naming_file: str) -> Weights:
    """The weights of the checkpoint ``path`` as a job file ``naming_file`` names it: its
    config.json when the folder is inside the job, else what its name says, else Unknown."""
    if isinstance(path, Unknown):
        return Weights(path, path, None)
    if not isinstance(path, str) or not path.strip():
        bad = Unknown("the checkpoint path is not a path")
        return Weights(bad, bad, None)
    path = path.strip()
    folder, why = _local(path, naming_file)
    if folder is not None:
        read, why = _read(folder)
        if read is not None:
            return read
    said = says_fp8(path)
    if said is not None:
        # the FP8 releases named so carry quant_method fp8 (Qwen/Qwen3-1.7B-FP8's config.json)
        return Weights(said, "fp8" if said else None, None)
    return Weights(Unknown(why), Unknown(why), None)


def _local(path: str, naming_file: str) -> tuple[str | None, str]:
    """The folder ``path`` names (inside the job or not), or None and why it is not read (a
    hub id such as ``Qwen/Qwen3-8B`` with no folder here, ``~``, a remote URL)."""
    hub = (f"whether {path[:80]!r} holds FP8 weights is in its config.json "
           "(quantization_config), which is not read here")
    if len(path) > NAME_MAX or "\x00" in path or _REMOTE.match(path):
        return None, hub
    if path.startswith("~"):
        return None, _outside(path)       # the home of whoever runs the job, not the job
    if os.path.isabs(path):
        return path, ""
    boundary = current()
    roots = boundary.roots if boundary is not None else ()
    # Hugging Face opens a relative folder from the launch directory, which is not known here:
    # next to the file that names it, then each job root, then the current directory
    for base in (os.path.dirname(naming_file), *roots, os.curdir):
        cand = os.path.normpath(os.path.join(base, path))
        if os.path.isdir(cand):
            return cand, ""
    if path.startswith(("./", "../")):
        return None, (f"no checkpoint folder {path[:80]!r} here (next to "
                      f"{os.path.basename(naming_file)} or at the job's top)")
    return None, hub


local_folder = _local
"""Public: the folder a model path names (inside the job or not), or None and why not."""


def _outside(path: str) -> str:
    return (f"the checkpoint {path[:80]!r} lies outside the job: its config.json "
            "(quantization_config) was not read")


def _read(folder: str) -> tuple[Weights | None, str]:
    """``folder``/config.json's quantization_config, or None and why it was not read."""
    config = os.path.join(folder, "config.json")
    if refuse(folder) is not None:
        return None, _outside(folder)
    if not os.path.lexists(config):
        return None, (f"no config.json in {folder[:80]!r} here" if os.path.isdir(folder) else
                      f"the checkpoint folder {folder[:80]!r} is not on this machine")
    # the folder's own config.json decides, not its name: one here that is not read (a link out
    # of the job, a FIFO, too large, not JSON) leaves the weights Unknown (redteam6: a folder
    # named ...-FP8 was FP8 by its name whatever the config.json it ships)
    try:
        if refuse(config) is not None:
            raise ParseError("a link out of the job, not read")
        parsed = parse_json(read_text(config))
    except ParseError as exc:
        why = Unknown(f"{config}:{exc.line or 1}: {exc}: its quantization_config says whether "
                      "the weights are FP8, whatever the folder's name says")
        return Weights(why, why, Source(config, exc.line or 1)), ""
    where = Source(config, parsed.line_of(('quantization_config',)) or 1)
    data = parsed.data
    qc = data.get("quantization_config") if isinstance(data, dict) else None
    if not isinstance(data, dict) or ("quantization_config" in data and qc is not None and
                                      not isinstance(qc, dict)):
        why = Unknown(f"{where}: quantization_config is not a mapping")
        return Weights(why, why, where), ""
    if qc is None:
        return Weights(False, None, where), ""   # unquantized: the weights are in torch_dtype
    method = qc.get("quant_method")
    if not isinstance(method, str):
        why = Unknown(f"{where}: quantization_config names no quant_method")
        return Weights(why, why, where), ""
    low = method.strip().lower()
    fp8: Any = (True if low in _FP8 else False if low in _NOT_FP8 else
                _compressed(qc, where) if low == "compressed-tensors" else
                Unknown(f"{where}: quant_method {method[:40]!r} is not one fp8-doctor knows to "
                        "be FP8 or not"))
    return Weights(fp8, method[:80], where), ""


def _compressed(qc: dict[str, Any], where: Source) -> Any:
    """compressed-tensors: FP8 when every group's weights are 8-bit floats."""
    groups = qc.get("config_groups")
    kinds = set()
    for group in list(groups.values())[:256] if isinstance(groups, dict) else ():
        w = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(w, dict):
            return Unknown(f"{where}: a compressed-tensors group without weights")
        kinds.add(str(w.get("type")).lower() == "float" and w.get("num_bits") == 8)
    if kinds == {True}:
        return True
    if kinds == {False}:
        return False
    return Unknown(f"{where}: compressed-tensors groups "
                   f"{'mix FP8 with other formats' if kinds else 'are not given'}")
