"""Random-play invariants at scale: N random games per game, every position checked.

    python benchmarks/random_games.py [--games 10000] [--variants backgammon,...]

The tests play as many random games as a few seconds allow (``NARDY_RANDOM_GAMES``,
``NARDY_RANDOM_BUDGET_S``); this runs the full count the issue asks for (10,000 per
game by default) through the same numba playout kernel, which checks every position it
meets (checker conservation, legal pins and pending dice, turn counters, a valid final
score), and reports games/s, the score distribution and the largest successor list met.
Like every player, the random player chooses a gul bara cascade's play from a sample
of its legal plays (:func:`engine.movegen._core.generate_turn` with its beam): randomly spread checkers
make cascades of 10^5-10^6 distinct plays, which the exact generator takes seconds to
list.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from engine.play.game import ERRORS, playouts  # noqa: E402
from engine.rules.variants import VARIANTS  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    failed = False
    for i, variant in enumerate(args.variants.split(",")):
        playouts(variant, 1, np.random.default_rng(0))          # compile outside timing
        rng = np.random.default_rng([args.seed, i])
        t0 = time.perf_counter()
        batch = playouts(variant, args.games, rng)
        dt = time.perf_counter() - t0
        errors = Counter(int(e) for e in batch.error if e)
        kinds = Counter(int(p) for p in batch.points)
        failed |= bool(errors)
        print(f"{variant:<11} {args.games} games in {dt:7.1f} s ({args.games / dt:7.1f}/s): "
              f"errors {dict((ERRORS.get(k, k), n) for k, n in errors.items()) or 'none'}; "
              f"points {dict(sorted(kinds.items()))}; mean turns {batch.turns.mean():.0f}; "
              f"largest successor list {int(batch.max_successors.max())}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
