"""The options of the commands a launch script runs another script through (``env``, ``sbatch``
/ ``srun``), as :mod:`.shellcalls` reads them: which variable ``env -u`` removes, where sbatch's
options end and what its ``--export`` passes (redteam7: ``--export`` written as two words, ``env
-uX`` / ``--unset=X``)."""

from __future__ import annotations

import os

SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
SCRIPT_EXT = (".sh", ".bash", ".slurm", ".sbatch")
# short options of sbatch / srun that take a value as the next word (man sbatch, man srun)
SLURM_SHORT = set("AabcDdeGiJLMmNnopqSTtwxCFW")
# long options of sbatch / srun that take no value
SLURM_BARE = {"exclusive", "hold", "parsable", "requeue", "no-requeue", "wait", "test-only",
               "overcommit", "spread-job", "use-min-nodes", "contiguous", "quiet", "verbose",
               "pty", "unbuffered", "label", "exact", "overlap", "no-kill", "help", "usage",
               "ignore-pbs", "immediate", "kill-on-bad-exit", "multi-prog", "reboot"}


def unset_name(texts: list[str], i: int) -> tuple[str, int]:
    """The name ``env -u X`` / ``-uX`` / ``--unset=X`` / ``--unset X`` removes, and the words
    it takes past the first."""
    t = texts[i]
    if t in ("-u", "--unset"):
        return (texts[i + 1], 1) if i + 1 < len(texts) else ("", 0)
    return (t[2:] if t[1] == "u" else t[8:]), 0


def slurm_options(texts: list[str], i: int) -> tuple[int, list[str] | None]:
    """Past sbatch / srun options: (index of the first other word, ``--export`` items)."""
    keep: list[str] | None = None
    while i < len(texts) and texts[i].startswith("-"):
        t = texts[i]
        name, eq, value = t.lstrip("-").partition("=")
        if t.startswith("--"):
            if not eq and name not in SLURM_BARE and i + 1 < len(texts) and \
                    not texts[i + 1].startswith("-") and \
                    os.path.basename(texts[i + 1]) not in SHELLS and \
                    not texts[i + 1].lower().endswith(SCRIPT_EXT):
                value = texts[i + 1]
                i += 1
            if name == "export":
                keep = [v for v in value.split(",") if v]
        elif len(t) == 2 and t[1] in SLURM_SHORT and i + 1 < len(texts):
            i += 1
        i += 1
    return i, keep
