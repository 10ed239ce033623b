"""Deprecated alias of :mod:`preflight.cluster` (the multi-rank mode was renamed in issue 14).

``python -m preflight.dist`` still works (see ``__main__``) and says so on stderr; the rule text
of FP8D-CLU-0001 and older job scripts name it. New code imports :mod:`preflight.cluster`.
"""
