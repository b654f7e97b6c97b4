"""Agreement of the cube decisions with GNU Backgammon's (through ``gnubg_nn``).

Not a test: ``gnubg_nn`` is a benchmark-only dependency. ``gnubg_nn.evaluate_cube_decision``
takes a position, a match score and, optionally, the five cubeless probabilities, and
returns GNU Backgammon's 0-ply cube flags (double, take, too good) and its cubeful match
winning chances (no double, double / take, double / pass). Money play is "not
implemented" there, so the comparison is on match scores only, with a centred cube.

How it is measured:

* **same inputs**: the same probabilities are handed to both (a fixed grid of winning
  chances and gammon shares, deterministic); the position is the opening position, so
  both use the contact cube efficiency 0.68;
* **same table**: GNU Backgammon's table (``--table``, default ``snowie``) is read back
  through ``gnubg_nn.equities.value`` into an :class:`engine.cube.met.MatchEquityTable`, so
  the differences are those of the cube model, not of the MET. Scores are pre-Crawford
  with both players at least 2-away (``equities.value`` gives no post-Crawford table,
  and at these scores only pre-Crawford entries, row 0 included, are ever read);
* reported: the share of identical actions (GNU Backgammon's no double / take and no
  double / beaver count as ``no_double``), a confusion table, and the mean and largest
  absolute differences of the no-double and double / take MWC; then the same actions
  again with the engine's default Kazaross-XG2 table, for reference.

Run: ``python benchmarks/cube.py [--max-away 9] [--table snowie]``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter

import numpy as np

from engine.cube.decision import CubeState, cube_decision
from engine.cube.met import MatchEquityTable, kazaross_xg2

START_ID = "4HPwATDgc/ABMA"


def gnubg_table(gnubg, name: str, length: int) -> MatchEquityTable:
    """GNU Backgammon's pre-Crawford table ``name`` as a MatchEquityTable. Its
    post-Crawford part is Kazaross-XG2's: ``equities.value`` gives none, a table must be
    whole, and at the scores compared it is never read (module docstring)."""
    gnubg.set.equities(name)
    pre = np.array([[(gnubg.equities.value(a, b) + 1.0) / 2.0 for b in range(1, length + 1)]
                    for a in range(1, length + 1)])
    return MatchEquityTable(f"gnubg {name}", pre, kazaross_xg2().post_crawford[:length],
                            "gnubg_nn.equities.value, post-Crawford from Kazaross-XG2")


def gnubg_action(flags) -> str:
    double, take, too_good = flags[:3]
    if too_good:
        return "too_good_take" if take else "too_good_pass"
    if double:
        return "double_take" if take else "double_pass"
    return "no_double"


def probability_grid() -> list[tuple]:
    out = []
    for w in np.linspace(0.5, 0.95, 10):
        for gw in (0.0, 0.1, 0.25, 0.4):
            for gl in (0.0, 0.1, 0.2):
                out.append((float(w), w * gw, w * gw * 0.05, (1 - w) * gl,
                            (1 - w) * gl * 0.05))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-away", type=int, default=9)
    ap.add_argument("--table", default="snowie", choices=("snowie", "jacobs", "woolsey",
                                                          "gnur"))
    args = ap.parse_args(argv)
    try:
        import gnubg_nn as gnubg
    except ImportError:
        print("needs the PyPI package gnubg-nn (GNU Backgammon's cube decisions)",
              file=sys.stderr)
        raise SystemExit(2) from None

    length = args.max_away + 2
    table = gnubg_table(gnubg, args.table, length)
    xg2 = kazaross_xg2()
    grid = probability_grid()
    agree = agree_xg2 = n = 0
    confusion: Counter = Counter()
    d_nd, d_dt = [], []
    t0 = time.perf_counter()
    for a, b in itertools.product(range(2, args.max_away + 1), repeat=2):
        gnubg.set.score(a, b)
        state = CubeState(1, "centre", length, (length - a, length - b))
        for p in grid:
            ref = gnubg.evaluate_cube_decision(START_ID, i=1, p=p)
            ref_action = gnubg_action(ref)
            ours = cube_decision(p, state, 0.68, table)
            mine = cube_decision(p, state, 0.68, xg2)
            n += 1
            agree += ours.action == ref_action
            agree_xg2 += mine.action == ref_action
            confusion[(ref_action, ours.action)] += 1
            d_nd.append(abs(ours.mwc["no_double"] - ref[3]))
            d_dt.append(abs(ours.mwc["double_take"] - ref[4]))
    dt = time.perf_counter() - t0
    print(f"{n} decisions ({args.max_away - 1}^2 scores 2..{args.max_away}-away x "
          f"{len(grid)} probability vectors), {dt:.1f} s")
    print(f"same MET ({table.name}): actions agree {100 * agree / n:.1f}%")
    print(f"  |MWC no double| mean {np.mean(d_nd):.4f} max {np.max(d_nd):.4f}; "
          f"|MWC double/take| mean {np.mean(d_dt):.4f} max {np.max(d_dt):.4f}")
    print(f"engine default MET (Kazaross-XG2) vs gnubg {args.table}: actions agree "
          f"{100 * agree_xg2 / n:.1f}%")
    print("confusion (gnubg -> engine), same MET:")
    for (r, o), c in sorted(confusion.items(), key=lambda kv: -kv[1]):
        print(f"  {r:>14} -> {o:<14} {c}")


if __name__ == "__main__":
    main()
