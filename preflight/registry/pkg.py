"""``pkg.*``: installed distributions, from importlib.metadata only (producer: probes/packages.py).

Distribution names are normalized as PEP 503 does (lower case, runs of ``-_.`` become ``-``):
``pkg.transformer-engine.version``. A package that is not installed has no ``pkg.<dist>.*`` facts.
"""

from preflight.registry import FactSpec as F

SPECS = (
    F("pkg.<dist>.version", "version", "Installed version, kept exactly (e.g. '2.4.0a0+3bcc3cd.nv24.07')"),
    F("pkg.<dist>.local", "str", "Local version label as written, e.g. 'cu124' of '2.5.1+cu124'; absent when there is none"),
    F("pkg.<dist>.public", "version", "Public version without the local label, e.g. '2.5.1'"),
    F("pkg.<dist>.built_with_torch", "bool", "Only for a nightly or source build (not torch): true when it is a nightly of the same day as the torch nightly installed (upstream builds nightlies against that day's torch); Unknown when the torch it was built against cannot be known; absent for a release (base/builds.py)"),
    F("pkg.<dist>.location", "str", "Where the distribution is installed (redacted in reports)"),
    F("pkg.<dist>.duplicate", "list", "Versions of every install of one distribution on sys.path, first (the one imported) first; only when there is more than one"),
    F("pkg.te.core", "str", "Which TE core wheel is installed: transformer-engine-cu12 | transformer-engine-cu13 | multiple | none (absent when no TE part is installed)"),
    F("pkg.te.versions_agree", "bool", "transformer-engine, its -cuXX core and -torch parts all have one version"),
    F("pkg.te.versions", "dict", "Versions of each installed TE part, by distribution name"),
    F("pkg.te.cuda_major", "int", "CUDA major version of the installed TE core wheel (12 or 13)"),
    F("pkg.broken", "list", "Distributions whose metadata could not be read, each '<folder>: <why>' (empty list: none)"),
)
