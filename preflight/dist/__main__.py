"""``python -m preflight.dist``: deprecated alias of ``python -m preflight.cluster``."""

from __future__ import annotations

import sys

from preflight.cluster.__main__ import main

if __name__ == "__main__":
    print("fp8-doctor: `python -m preflight.dist` is deprecated; use `python -m preflight.cluster`",
          file=sys.stderr, flush=True)
    raise SystemExit(main())
