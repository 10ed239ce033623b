"""The config a job uses when none is named: accelerate's default config file. Standard library
only, so a check with no config path imports none of the readers."""

from __future__ import annotations

import os


def default_paths() -> list[str]:
    """accelerate's default config file, if present (what ``accelerate launch`` uses by default).

    Lookup as in ``accelerate/commands/config/config_args.py``: ``$HF_HOME`` else
    ``${XDG_CACHE_HOME:-~/.cache}/huggingface``, then ``accelerate/default_config.yaml``, with
    the legacy ``default_config.json`` used only when the YAML does not exist. accelerate itself
    reads no ``ACCELERATE_CONFIG_FILE`` variable, so neither do we.
    """
    home = os.path.expanduser(os.environ.get(
        "HF_HOME", os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")))
    for name in ("default_config.yaml", "default_config.json"):
        candidate = os.path.join(home, "accelerate", name)
        if os.path.isfile(candidate):
            return [candidate]
    return []
