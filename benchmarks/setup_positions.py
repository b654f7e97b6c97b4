"""Move generation on random *set-up* positions, beyond what the tests play.

    python benchmarks/setup_positions.py [--positions 5000] [--seed 101] [--variants ...]

For each game, ``--positions`` random set-up positions (``engine/rules/setups.py``:
checkers placed at random within the invariants of Position JSON, with six-blocks,
bear-offs, pins, the bar and pending dice made common) and every roll of each (the
pending segment where dice are pending): the numba generator must give at least one
successor and the same set as the slow reference of the tests
(``tests/reference_movegen.py``). Gul bara's cascades are all generated (some have
millions of plays) and compared with the reference where the walk holds at most
``--cascade-reference`` boards. Reported per game: rolls generated, rolls compared,
rolls compared on which a set-up six-block that every play keeps was lifted (the
reference without that exception has no play; docs/rules.md),
mismatches, the largest successor count, the rolls refused as too many plays to list
(``TooManyPlaysError``: a gul bara cascade beyond ``engine/movegen/generate.py``'s
bounds) and the wall time. Exits 1 on any mismatch or empty roll.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from reference_movegen import reference_successors  # noqa: E402

from engine import get_rules, successors  # noqa: E402
from engine.errors import TooManyPlaysError  # noqa: E402
from engine.movegen._core import cascade_plan  # noqa: E402
from engine.movegen.generate import CascadeLayers, successor_arrays  # noqa: E402
from engine.rules.setups import setup_positions  # noqa: E402
from engine.rules.variants import BLOCK_NONE, VARIANTS  # noqa: E402

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


def run(variant: str, count: int, seed: int, cascade_reference: int) -> bool:
    rules = get_rules(variant)
    table = rules.table()
    t0 = time.time()
    rolls = compared = lifted = bad = largest = too_many = 0
    for pos in setup_positions(variant, count, seed, rules):
        state = pos.to_array()
        for roll in ([None] if pos.pending else ROLLS):
            d1, d2 = roll if roll else (0, 0)
            try:
                n = len(successor_arrays(pos, roll, rules))
            except TooManyPlaysError:
                too_many += 1           # a cascade beyond the lister's bounds: refused
                continue
            rolls += 1
            largest = max(largest, n)
            if n == 0:
                print(f"  EMPTY {pos!r} dice {roll}", flush=True)
                bad += 1
                continue
            route, _, total, *_ = cascade_plan(state, d1, d2, table)
            if route and total > 4 and (n > cascade_reference or sum(
                    len(a) for a in CascadeLayers(pos, roll, rules).layers) > cascade_reference):
                continue                # (the walk holds every end board: n at least)
            fast = {s.key() for s in successors(pos, roll, rules)}
            slow = reference_successors(pos, roll, rules)
            compared += 1
            if rules.block != BLOCK_NONE and not reference_successors(pos, roll, rules,
                                                                      fallback=False):
                lifted += 1
            if fast != slow:
                bad += 1
                print(f"  MISMATCH {pos!r} dice {roll}: {len(fast)} vs {len(slow)}",
                      flush=True)
    print(f"{variant:<11} positions {count:>6}  rolls {rolls:>7}  compared {compared:>7}  "
          f"block lifted {lifted:>5}  bad {bad}  largest {largest:>9}  "
          f"too many {too_many:>3}  {time.time() - t0:7.1f} s", flush=True)
    return bad == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=101)
    ap.add_argument("--cascade-reference", type=int, default=3000)
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS)
    args = ap.parse_args()
    ok = all([run(v, args.positions, args.seed + i, args.cascade_reference)
              for i, v in enumerate(args.variants)])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
