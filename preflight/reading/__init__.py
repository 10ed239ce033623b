"""The reading kit every framework module builds on: files, shell scripts and Python read as
text, never run.

:mod:`.parse` (YAML / JSON / TOML with limits, flattening, the line of every key),
:mod:`.interpolate` (``${...}`` as OmegaConf does it), :mod:`.types` (what a reader returns:
``ReaderOutput``, ``ConfigProblem``), :mod:`.readers` (a plain flattening reader, following a
named file), :mod:`.refs` (where a named file is), :mod:`.boundary` (which files a run may read);
shell scripts: :mod:`.shell` (would bash run it), :mod:`.shellwords` / :mod:`.shellquote` /
:mod:`.shelltypes` (words and statements), :mod:`.shellexpand` (what a launch line passes),
:mod:`.shellvars` (``$VAR`` values), :mod:`.shellheredoc` (here-documents a variable takes
or a shell runs), :mod:`.shellcalls` (scripts it runs, ``cd``), :mod:`.shellstops` (``set -e``
stops), :mod:`.launch` (command lines cut into flags);
override launch lines: :mod:`.overrides`, :mod:`.layered`, :mod:`.overridelaunch`; Python job
files by their syntax tree: :mod:`.pysource`, :mod:`.pyscopes`, :mod:`.pyvalues`,
:mod:`.pyfacts`.

Nothing here knows a framework by name: :mod:`preflight.frameworks` imports this package, and
:mod:`preflight.jobs` (which files are one job, and reading them with the frameworks) imports
both (tests/test_layers.py).
"""
