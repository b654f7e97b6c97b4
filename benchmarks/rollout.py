"""Rollout speed: wall time and trials per second of a 1296-trial rollout, beside GNU
Backgammon's own rollout (Debian's ``gnubg`` program) on the same positions.

    python benchmarks/rollout.py                    # 1296 trials, threads 1 and 2
    python benchmarks/rollout.py --trials 324 --threads 1 --quick

Positions (backgammon, the side to move's view, before its roll): the opening position,
a middle-game contact position and a race. Each is rolled out with 0-ply checker play
and variance reduction, truncated after 7 rolls and played to the end (to a finished
game or a race the bear-off tables value), on each number of threads of ``--threads``
(:class:`engine.search.nply.Search`'s threads; the trials' results do not depend on
them). The first rollout of a run compiles the search kernels when the cache is cold
and is not timed (a warm-up rollout of 36 trials goes first).

When Debian's ``gnubg`` is installed (``apt-get install gnubg``), its own rollout
runs on the same positions with the same settings and on the same number of threads
(:mod:`gnubg_rollout`: 1296 trials, seed 1, 0-ply play, variance reduction, quasi-random
dice, cubeless, truncated after 7 rolls or played out; gnubg also ends a trial at its
one-sided bear-off database), timed around its ``rollout`` command, with its equity and
standard error. ``gnubg_nn.rollout`` of the PyPI package ends in a segmentation fault,
so it is not used. A benchmark only: the tests never need gnubg.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Position  # noqa: E402
from engine.eval.evaluator import Evaluator  # noqa: E402
from engine.notation.gnubg_id import position_id  # noqa: E402
from engine.notation.parse import parse_position  # noqa: E402
from engine.search.nply import Search  # noqa: E402
from engine.search.rollout import Rollout, RolloutSettings  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from gnubg_rollout import gnubg_rollout  # noqa: E402

POSITIONS = {
    "opening": "start",
    # a middle game, the side to move with two back checkers (tests/data/perft, contact)
    "contact": "mPvNAAC1dcABAw",
    # a race, 73 pips each (tests/data/perft, race)
    "race": "uO8HAABtvyMAAA",
}


def _gnubg(pos: Position, trials: int, truncate: int, threads: int) -> str:
    """GNU Backgammon's own rollout of ``pos`` (Debian's ``gnubg`` program through
    :mod:`gnubg_rollout`, the same settings as ours, on ``threads`` threads): its time,
    equity and standard error, or why there are none."""
    try:
        r = gnubg_rollout(position_id(pos), trials, truncate, seed=1, threads=threads)
    except RuntimeError as e:
        return str(e).splitlines()[0]
    return f"{r['seconds']:7.2f} {r['equity']:+8.3f} {r['se']:8.4f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model file (default the released one)")
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--threads", default="1,2", help="thread counts, comma separated")
    ap.add_argument("--quick", action="store_true", help="truncated rollouts only")
    ap.add_argument("--no-gnubg", action="store_true", help="leave GNU Backgammon out")
    ap.add_argument("--prune", metavar="FILE", default=None,
                    help="pruning network beside --model (default: the released one with "
                         "the released model, none with a model given by file)")
    ap.add_argument("--no-prune", action="store_true",
                    help="every play of the trials rated by the network "
                         "(RolloutSettings(prune=False))")
    ap.add_argument("--race", metavar="FILE", default=None,
                    help="race network beside --model (default as --prune's)")
    args = ap.parse_args(argv)
    evaluator = Evaluator.load("backgammon", args.model, prune=args.prune, race=args.race)
    pruned = evaluator.prune is not None and not args.no_prune
    threads = [int(t) for t in args.threads.split(",")]
    modes = [7] if args.quick else [7, 0]
    Rollout(Search(evaluator, threads=1)).position(Position.start(),
                                                   RolloutSettings(trials=36, truncate=2))
    print(f"{args.trials} trials, 0-ply play"
          f"{', pruned (the best few by the pruning network rated again)' if pruned else ''}"
          f", variance reduction; {evaluator!r}; {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{os.cpu_count()} CPUs")
    print(f"{'position':<9} {'truncate':>8} {'threads':>7} {'wall s':>7} {'trials/s':>9} "
          f"{'equity':>8} {'se':>6} {'se plain':>8} | {'gnubg s':>7} {'gnubg eq':>8} "
          f"{'gnubg se':>8}")
    for name, text in POSITIONS.items():
        pos = parse_position(text)[0]
        for truncate in modes:
            settings = RolloutSettings(trials=args.trials, truncate=truncate,
                                       prune=not args.no_prune)
            for t in threads:
                gtext = "-" if args.no_gnubg else _gnubg(pos, args.trials, truncate, t)
                ro = Rollout(Search(evaluator, threads=t))
                t0 = time.perf_counter()
                r = ro.position(pos, settings)
                dt = time.perf_counter() - t0
                print(f"{name:<9} {truncate or 'full':>8} {t:7d} {dt:7.2f} "
                      f"{args.trials / dt:9.0f} {r.equity:+8.3f} {r.se['equity']:6.4f} "
                      f"{r.se_plain['equity']:8.4f} | {gtext}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
