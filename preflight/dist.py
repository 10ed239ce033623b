"""Deprecated alias of :mod:`preflight.cluster` (the multi-rank mode was renamed in issue 14).

``python -m preflight.dist`` still runs ``python -m preflight.cluster`` and says so on stderr;
the rule text of FP8D-CLU-0001 and older job scripts name it. A module, not a package, so that
``preflight/dist/`` stays a plain rename of ``preflight/cluster/`` in git's history. No
``from __future__`` here: see preflight/_startup.py (the current folder is still on sys.path).
"""

if __name__ == "__main__":
    from preflight import _startup

    _startup.say("fp8-doctor: `python -m preflight.dist` is deprecated; use "
                 "`python -m preflight.cluster`")
    _startup.run_module("python -m preflight.dist", "preflight.cluster.cli")
