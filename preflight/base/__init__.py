"""The floor every layer may stand on: bounded file and process I/O, safe YAML, key paths, digits
that int() takes (``digits``),
version and compute-capability parsing, and the FP8 share of a model's GEMM work from its shapes
(``fp8coverage``: the live inspector and the smoke child both count it, so it sits below both).

Nothing here knows about probes, frameworks, rules or reports: these modules import only the
standard library, :mod:`packaging`, PyYAML, :mod:`preflight.errors` and :mod:`preflight.facts`
(tests/test_layers.py holds every package to its layer). This file imports nothing, not even
``from __future__``: :mod:`preflight._startup` loads ``base.isolate`` before the module path is
cleaned (see there).
"""
