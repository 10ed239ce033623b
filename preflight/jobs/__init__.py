"""Reading the job people run, whatever its frameworks: shared parsing and job-assembly helpers.

:mod:`.read` turns paths (files, folders) into one job's ``config.<kind>.*`` facts; :mod:`.parse`
(YAML/JSON/TOML with limits, flattening), :mod:`.interpolate` (``${...}``), :mod:`.shell` (is a
script runnable), :mod:`.shellvars` (shell values), :mod:`.launch` (``accelerate launch`` and HF
Trainer command lines), :mod:`.scripts` (text configs), :mod:`.graph` (which files are one job),
:mod:`.readers` (helpers for framework readers). What each framework reads and means is in
:mod:`preflight.frameworks`.
"""
