"""How much `fp8-doctor plan` and `check --diff` add to a static check (target: <= 0.1 s each).

    python benchmarks/bench_plan.py [-n 7]

Times, in this process, `collect_facts` + evaluation (what a static check does) and `make_plan`
on the same facts, for the bundled example job (accelerate + DeepSpeed + TE) under three planned
stacks: a newer one, TE 1.11 under accelerate 1.11, and old accelerate/TE/torchao (a partial
plan, the widest search). Prints the median of -n runs each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from preflight import api, engine  # noqa: E402
from preflight.examples import example_paths  # noqa: E402
from preflight.plan import make_plan  # noqa: E402
from preflight.plan.run import rederive  # noqa: E402

CASES = {
    "newer stack": {"gpu": "H100", "pkg.accelerate": "1.10.1", "pkg.transformer-engine": "2.8.0",
                      "pkg.torch": "2.8.0+cu128"},
    "TE 1.11, acc 1.11": {"gpu": "H100", "pkg.accelerate": "1.11.0", "pkg.transformer-engine": "1.11.0",
                    "pkg.torch": "2.4.0+cu124"},
    "old acc/TE/torchao": {"gpu": "H100", "pkg.accelerate": "1.8.0", "pkg.transformer-engine":
                          "1.11.0", "pkg.torch": "2.4.0+cu124", "pkg.torchao": "0.9.0"},
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=7)
    n = ap.parse_args().n
    rules = engine.load_rules(None, with_tests=False)
    from preflight.fixdiff import render_diff

    print(f"{'case':<20} {'check (s)':>10} {'plan adds (s)':>14} {'candidates':>11} "
          f"{'--diff adds (s)':>16}")
    for name, assume in CASES.items():
        options = api.CheckOptions(paths=tuple(example_paths()), assume=assume, smoke=False)
        checks, plans, diffs, tried = [], [], [], 0
        for _ in range(n):
            t0 = time.perf_counter()
            facts, *_ = api.collect_facts(options)
            engine.evaluate(rules, facts)
            t1 = time.perf_counter()
            plan = make_plan(facts, rules, rederive)
            t2 = time.perf_counter()
            checks.append(t1 - t0)
            plans.append(t2 - t1)
            tried = plan.candidates_tried
            report = api.evaluate_facts(facts)
            t3 = time.perf_counter()
            render_diff(report, options.paths)
            diffs.append(time.perf_counter() - t3)
        print(f"{name:<20} {statistics.median(checks):>10.3f} {statistics.median(plans):>14.3f} "
              f"{tried:>11} {statistics.median(diffs):>16.4f}")


if __name__ == "__main__":
    main()
