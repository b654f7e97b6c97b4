"""Does choosing a play by rollout beat choosing it at 2-ply? Decisions judged by GNU
Backgammon's 2-ply.

    python benchmarks/rollout_choice.py --decisions 100          # about 15 minutes
    python benchmarks/rollout_choice.py --decisions 20 --trials 324

Decisions: contact positions from the released network's own self-play (0-ply, no
exploration, seed ``--seed``), each with a random roll that has at least two legal plays.
For each, the engine picks a play twice with the same dice:

- **2-ply**: :meth:`engine.search.nply.Search.best` at ply 2;
- **rollout**: the best ``--candidates`` plays at 0-ply, each rolled out on the same
  dice (``--trials`` trials, truncated after ``--truncate`` rolls, 0-ply play inside,
  variance reduction; :meth:`engine.search.rollout.Rollout.candidates`), the one with the
  best rollout equity.

When the two differ, both resulting positions are valued by GNU Backgammon's 2-ply
evaluator (``gnubg_nn.probabilities(board, 2)``, cubeless money equity for the mover),
a judge independent of the engine. Reported: how often the choices differ, the mean
equity each chooser loses per decision against the better of the two (mEMG: thousandths
of a point), and the difference with its 95% interval. GNU Backgammon only judges: none
of it goes into the engine or its training. Needs the PyPI package ``gnubg-nn``.
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

import numpy as np  # noqa: E402

from engine.eval.evaluator import model_path  # noqa: E402
from engine.eval.network import Network  # noqa: E402
from engine.movegen.generate import successors  # noqa: E402
from engine.notation.gnubg_id import position_id  # noqa: E402
from engine.rules.position import Position  # noqa: E402
from engine.rules.scoring import equities  # noqa: E402
from engine.search.nply import Search  # noqa: E402
from engine.search.rollout import Rollout, RolloutSettings  # noqa: E402
from training.positions import CLASSES, selfplay_positions  # noqa: E402


def judge(gnubg_nn, after: Position, ply: int = 2) -> float:
    """GNU Backgammon's ``ply`` cubeless equity of the mover after his play (``after``
    is seen from the opponent, who is to roll)."""
    board = gnubg_nn.board_from_position_id(position_id(after))
    return -float(equities(np.array(gnubg_nn.probabilities(board, ply))))


def the_judge():
    """The ``gnubg_nn`` module, or None after saying on standard error that it is needed."""
    try:
        import gnubg_nn
    except ImportError:
        print("needs the PyPI package gnubg-nn (the judge)", file=sys.stderr)
        return None
    return gnubg_nn


def decisions(seed: int):
    """``(position, dice)`` decisions until the pool runs out: contact positions from
    the released network's own self-play (200 games at 0-ply, no exploration, ``seed``),
    in a seeded random order, each with a random roll that has at least two legal
    plays."""
    rng = np.random.default_rng(seed)
    pset = selfplay_positions(Network.load(model_path("backgammon")), 200, seed,
                              epsilon=0.0, keep=0.2)
    pool = pset.states[pset.klass == CLASSES.index("contact")]
    pool = pool[rng.permutation(len(pool))]
    for row in pool:
        pos = Position.from_array(row, "backgammon")
        dice = tuple(int(x) for x in rng.integers(1, 7, 2))
        if len(successors(pos, dice)) >= 2:
            yield pos, dice


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=100)
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--truncate", type=int, default=7)
    ap.add_argument("--candidates", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save", metavar="FILE.npy",
                    help="keep each decision's two losses (equity; columns 2-ply, rollout) in "
                         "FILE.npy, rewritten every 10 decisions, for pooling runs")
    args = ap.parse_args(argv)
    gnubg_nn = the_judge()
    if gnubg_nn is None:
        return 2
    search = Search.load("backgammon", threads=args.threads)
    roller = Rollout(search, RolloutSettings(trials=args.trials, truncate=args.truncate,
                                             seed=args.seed))
    losses, t0, n, differ = [], time.time(), 0, 0
    for pos, dice in decisions(args.seed):
        if n >= args.decisions:
            break
        n += 1
        two = search.best(pos, dice, 2).position
        ro = roller.candidates(pos, dice, args.candidates)[0].position
        if two.key() == ro.key():
            losses.append((0.0, 0.0))
        else:
            differ += 1
            e2, er = judge(gnubg_nn, two), judge(gnubg_nn, ro)
            best = max(e2, er)
            losses.append((best - e2, best - er))
        if n % 10 == 0:
            a = np.array(losses)
            if args.save:
                np.save(args.save, a)
            print(f"{n:4d} decisions, {time.time() - t0:6.0f} s: 2-ply loses "
                  f"{1000 * a[:, 0].mean():.1f}, rollout {1000 * a[:, 1].mean():.1f} mEMG",
                  file=sys.stderr)
    a = np.array(losses)
    if args.save:
        np.save(args.save, a)
    diff = a[:, 0] - a[:, 1]                    # > 0: the rollout chose better
    half = 1.96 * diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    print(f"decisions: {len(a)} (contact, self-play of the released network, seed "
          f"{args.seed}); rollout {args.trials} trials, truncated at {args.truncate}, "
          f"best of {args.candidates} 0-ply candidates; wall {time.time() - t0:.0f} s")
    print(f"choices differ: {differ} of {len(a)}")
    print(f"mean loss per decision, GNU Backgammon 2-ply as judge (mEMG): 2-ply "
          f"{1000 * a[:, 0].mean():.2f}, rollout {1000 * a[:, 1].mean():.2f}")
    print(f"rollout better by {1000 * diff.mean():+.2f} mEMG per decision "
          f"(95% interval {1000 * (diff.mean() - half):+.2f} .. "
          f"{1000 * (diff.mean() + half):+.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
