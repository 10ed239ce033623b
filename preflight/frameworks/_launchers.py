"""Which framework a launch script runs, for the frameworks read from override launch lines.

Each reader module here exports ``HINT`` (a regular expression its launch scripts match) and
``read_text(path, text, outer)``. The order decides between them: slime's scripts carry
Megatron arguments and a ``train.py`` that other scripts use too, so its own flags are looked
for first; the others name entry points no other framework has. torchtitan's TOML is read by
its own module; its launch lines (``--job.config_file X --a.b v``) by ``torchtitan_launch``.
The modules are imported only when a text file is read (the registry stays lazy).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

READERS: tuple[tuple[str, str], ...] = (
    ("slime", "slime"), ("verl", "verl"), ("nemo_rl", "nemo_rl"),
    ("megatron_bridge", "megatron_bridge"), ("automodel", "automodel"),
    ("torchtitan", "torchtitan_launch"),
)
"""(kind, module) in the order they are tried."""
KINDS = tuple(kind for kind, _ in READERS)
_MODULE = dict(READERS)


def detect(text: str) -> str | None:
    """The first of :data:`KINDS` whose launch line the script holds."""
    for kind, module in READERS:
        if import_module(f"preflight.frameworks.{module}").HINT.search(text):
            return kind
    return None


def read_text(kind: str, path: str, text: str, outer: dict[str, str]) -> Any:
    """That framework's reading of the script (a ``ReaderOutput``)."""
    return import_module(f"preflight.frameworks.{_MODULE[kind]}").read_text(path, text, outer)
