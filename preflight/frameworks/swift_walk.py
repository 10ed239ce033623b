"""ms-swift command lines from what reaches the command (issue 22: reading the job as it is
written).

``megatron sft|pt|rlhf`` and ``swift sft|pt|rlhf`` take their settings as ``--flag value``
words (swift/cli/main.py ``cli_main`` hands ``sys.argv`` to HfArgumentParser; the Megatron
path's flag names are the fields of swift/megatron/arguments/megatron_args.py at v4.5.2,
l.635-645: ``--fp8_format e4m3|hybrid``, ``--fp8_recipe tensorwise|delayed|mxfp8|blockwise``,
``--fp8_param_gather``, ``--fp4_format``). Read text-wide, a flag in an ``echo``, a variable the
command never expands or an ``if`` arm the text does not decide was the job's: a BF16 run with
``# megatron sft --fp8_format e4m3`` commented above it, or ``PR=${1:-bf16}; if [ $PR = fp8 ];
then FP8_ARGS="--fp8_format e4m3"; fi``, was FP8 "yes".

So the script is walked as the shell runs it (:func:`.shellexpand.launches`, as
:mod:`.megatron_walk` walks Megatron-LM launches): the launches are the commands whose word is
``megatron`` or ``swift`` followed by a subcommand, and the flags are read by
:func:`.megatron_walk.read` (a flag only an undecided branch gives is Unknown with the reason;
launches that differ make it Unknown). A script that trains has only its training commands'
flags (``megatron export`` / ``swift infer`` after it are not the job's settings, ROUTE_MAPPING of
swift/cli/main.py and swift/cli/_megatron/main.py at v4.5.2); a script with no training command
has its other ms-swift commands' (``swift export --quant_method fp8``). A script whose walk
finds no ms-swift command at all (only in a comment or an ``echo``) gives
no flags. A script the shell kit cannot walk (past its bounds) is left to the text-wide reader
(None).
"""

from __future__ import annotations

import os
from typing import Any

from preflight.facts import Unknown
from preflight.findings import Source
from preflight.frameworks import megatron_walk
from preflight.reading.shellexpand import Launch
from preflight.reading.types import ConfigProblem

MAX_COMMANDS = 64
"""ms-swift commands of one script walked (a real one has one to four: train, export, infer)."""
_WORDS = frozenset({"megatron", "swift"})
_TRAINING = frozenset({"sft", "pt", "rlhf", "train"})
_OTHER = frozenset({"export", "infer", "merge-lora", "web-ui", "deploy", "rollout", "sample",
                    "eval", "app"})
# HfArgumentParser: a field with no default value type takes exactly one word; List[...] fields
# take several (nargs '+'); bools take an optional word (nargs '?', const True)
ARITY = megatron_walk.Arity(
    bare=frozenset(),
    needs=frozenset({"fp8_format", "fp8_recipe", "fp4_format", "fp4_recipe", "torch_dtype",
                     "tensor_model_parallel_size", "pipeline_model_parallel_size",
                     "context_parallel_size", "expert_model_parallel_size", "max_length",
                     "micro_batch_size", "global_batch_size", "model", "deepspeed"}),
    # List fields of megatron_args.py / the Transformers path's arguments at v4.5.2
    multi=frozenset({"dataset", "val_dataset", "recompute_modules", "target_modules",
                     "modules_to_save", "freeze_parameters", "trainable_parameters", "adapters",
                     "ref_adapters", "reward_funcs", "reward_weights", "report_to", "callbacks",
                     "vllm_server_host", "vllm_server_port", "moe_aux_loss_coeff"}))


def read(path: str, text: str, outer: dict[str, str] | None, prefix: str,
         ) -> tuple[dict[str, Any], dict[str, Any], list[ConfigProblem]] | None:
    """(facts, provenance, problems) of the ms-swift commands the script runs, with
    ``<prefix>.command``; None: the script cannot be walked here."""
    found = megatron_walk.commands(text, outer, _word, MAX_COMMANDS)
    if found is None:
        return None
    found = [lr for lr in found if lr.args and lr.args[0].text in _TRAINING | _OTHER]
    training = [lr for lr in found if lr.args[0].text in _TRAINING]
    chosen = training or found
    if not chosen:
        return {}, {}, []
    got = megatron_walk.read(path, text, chosen, prefix, ARITY)
    facts: dict[str, Any] = dict(got.facts)
    prov: dict[str, Any] = dict(got.prov)
    name = f"{prefix}.command"      # the command run, whatever a `--command` word says
    commands = {_command(lr) for lr in chosen[:megatron_walk.MAX_LAUNCHES]}
    first = chosen[0]
    facts[name] = _command(first) if len(commands) == 1 else Unknown(
        f"the script runs {' and '.join(sorted(commands))} (in branches the text does not "
        "decide or one after another): which one is the job is not known here")
    prov[name] = Source(path, text.count("\n", 0, first.offset) + 1)
    return facts, prov, got.problems


def _word(word: str) -> bool:
    return os.path.basename(word) in _WORDS


def _command(lr: Launch) -> str:
    return f"{os.path.basename(lr.entry.text)} {lr.args[0].text}"
