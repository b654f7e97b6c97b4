"""Where a search expansion's time goes: microseconds a play for each part of rating
every play of a position's 21 rolls, as :func:`engine.search.nply.expand` does.

    python benchmarks/expand_parts.py            # 300 contact positions, one thread

Positions: 300 contact positions two rolls on from the middle game of ``rollout.py``
(``search_choice.contact_positions``, those of ``--agreement``). Each loop runs over the same 6,300 rolls:

- ``move generation``: the successors of each roll (:func:`engine.movegen._core.turn`);
- ``+ exact test, whole context``: that and ``exact_probs`` of every play, given the
  search's context (a tuple of some 27 arrays);
- ``+ exact test, may_be_exact``: move generation and the cheap test the search makes
  instead, given the score table and one flag;
- ``+ rating``: move generation and the search's ``_rate_children`` (that cheap test,
  the hidden layer from the node's by the inputs that changed, the output layer in one
  batch);
- ``+ features only``: move generation and the network's hand-crafted features of each
  play (:func:`engine.eval.features.features`), a part of the rating.

Reported: each loop's microseconds a play and what it adds: the two exact tests and the
features to move generation alone, the rating to move generation with the cheap test.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from search_choice import contact_positions  # noqa: E402

from engine._jit import njit  # noqa: E402
from engine.eval.evaluator import exact_probs, may_be_exact  # noqa: E402
from engine.eval.features import feature_values  # noqa: E402
from engine.eval.network import delta_work  # noqa: E402
from engine.movegen._core import turn  # noqa: E402
from engine.rules import _layout as L  # noqa: E402
from engine.rules.scoring import N_OUTPUTS  # noqa: E402
from engine.search.nply import (  # noqa: E402
    _ROLLS,
    Search,
    SearchSettings,
    _grow,
    _node_ref,
    _rate_children,
    _room,
    rate_space,
)

PARTS = ("move generation", "+ exact test, whole context", "+ exact test, may_be_exact",
         "+ rating (_rate_children)", "+ features only")


@njit(nogil=True)
def _loop(states, rolls, net, ctx, part):
    """Plays generated over ``states`` x ``rolls`` with the work of ``part`` (index into
    :data:`PARTS`) done on each; returns the plays and a checksum."""
    gen = np.empty((64, L.STATE_LEN), np.int16)
    probs = np.empty((64, N_OUTPUTS))
    eq = np.empty(64)
    idx = np.empty(64, np.int64)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(net.b1.shape[0], np.float32)
    work = delta_work()
    space = rate_space(64, net.b1.shape[0])
    scores = ctx.scores
    tables = ctx.bearoff
    plays = 0
    check = 0.0
    for i in range(states.shape[0]):
        if part == 3:
            _node_ref(states[i], False, net, ref, h_ref, work)
        for r in range(rolls.shape[0]):
            n, gen = turn(ctx.walk, states[i], rolls[r, 0], rolls[r, 1], ctx.table,
                          ctx.scratch, gen, 0)
            probs, eq, idx = _grow(n, probs, eq, idx)
            if part == 1:
                for k in range(n):
                    check += exact_probs(gen[k], ctx, probs[k])
            elif part == 2:
                for k in range(n):
                    check += may_be_exact(gen[k], scores, tables)
            elif part == 3:
                space = _room(n, space)
                _rate_children(ref, h_ref, work, False, gen, n, net, ctx, probs, eq, space)
                check += eq[0]
            elif part == 4:
                for k in range(n):
                    for x in feature_values(net.fidx, gen[k]):
                        check += x             # every feature used, none optimised away
            plays += n
    return plays, check


def main() -> int:
    import argparse
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help
    tree = Search.load("backgammon", threads=1)._tree(SearchSettings(ply=0))
    states = contact_positions(tree)
    before = base = 0.0
    print(f"{'part':32s} {'us a play':>10s} {'added':>8s}")
    for part, name in enumerate(PARTS):
        _loop(states[:2], _ROLLS, tree.net, tree.ctx, part)          # compiled, untimed
        t0 = time.perf_counter()
        plays, _ = _loop(states, _ROLLS, tree.net, tree.ctx, part)
        us = 1e6 * (time.perf_counter() - t0) / plays
        added = us - (base if part == 4 else before) if part else us
        print(f"{name:32s} {us:10.3f} {added:+8.3f}")
        base = us if part == 0 else base
        before = us if part != 1 else before           # the two exact tests add to the same base
    print(f"{plays:,} plays of {states.shape[0] * _ROLLS.shape[0]:,} rolls, one thread")
    return 0


if __name__ == "__main__":
    sys.exit(main())
