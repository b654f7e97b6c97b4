"""Where the engine's 0-ply loses to GNU Backgammon's: each player's play judged by GNU
Backgammon's 2-ply evaluation, decision by decision, by position class.

    python benchmarks/class_choice.py                       # the shipped 0-ply
    python benchmarks/class_choice.py --players shipped race=none race=models/candidates/backgammon-race-r2.npz
    python benchmarks/class_choice.py --players shipped model=runs/sl2/it12r8/model.npz --seed 7

Decisions: positions of the released network's own self-play (``--games`` games at 0-ply,
no exploration, a sixth of the positions met kept; ``--seed``), every class of
``training.positions`` (contact, crashed, race, bear-off), in a seeded random order, each
with a random roll that has at least two legal plays; at most ``--decisions``. The class
is the position's before the roll.

A player is the engine's 0-ply search (:meth:`engine.search.nply.Search.best`, ply 0):
``shipped`` (the released network, its race network and the bear-off tables, as
``engine.analyse --ply 0`` plays), with options joined by ``+``: ``model=FILE`` (another
main network, the released race network beside it unless ``race=`` says otherwise),
``race=FILE`` (another race network), ``race=none`` (races rated by the main network).
GNU Backgammon's 0-ply picks its play (``gnubg_nn.best_move(board, d1, d2, n=0)``); where
the two differ, both plays are valued by ``gnubg_nn.probabilities(board, --judge-ply)``
(cubeless money equity for the mover), and the engine's loss is its play's value less
GNU Backgammon's, in mEMG (thousandths of a point; negative: the engine's play judged
worse). Reported per player and class: the decisions, the share where the plays differ,
the mean loss with its 95% interval and its sum; for each player after the first, its
loss less the first player's on the same decisions (paired) with its 95% interval.

The judge is GNU Backgammon's own evaluator, so its 0-ply's plays are favoured: read the
classes against each other and the players against each other, not the level. GNU
Backgammon only judges and plays here: none of it goes into the engine or its training.
Needs the PyPI package ``gnubg-nn``.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from rollout_choice import judge, the_judge  # noqa: E402

from engine.eval.evaluator import Evaluator, NoModelError, model_path  # noqa: E402
from engine.eval.network import Network, NetworkFileError  # noqa: E402
from engine.movegen.generate import successors  # noqa: E402
from engine.notation.gnubg_id import position_id  # noqa: E402
from engine.rules.position import Position  # noqa: E402
from engine.search.nply import Search, SearchSettings  # noqa: E402
from training.positions import CLASSES, selfplay_positions  # noqa: E402


def player(spec: str):
    """``(name, choose)`` of a player spec (module docstring): ``choose(pos, dice)``
    returns the position after the play the engine's 0-ply picks."""
    model, race = None, True
    for o in spec.split("+"):
        if o == "shipped":
            continue
        if o.startswith("model="):
            model = o[len("model="):]
        elif o == "race=none":
            race = False
        elif o.startswith("race="):
            race = o[len("race="):]
        else:
            raise SystemExit(f"player {spec!r}: unknown part {o!r}; expected shipped, "
                             f"model=FILE, race=FILE or race=none joined by +")
    try:
        search = Search(Evaluator.load("backgammon", model, prune=True, race=race),
                        SearchSettings(ply=0), 1)
    except (NoModelError, NetworkFileError) as exc:
        raise SystemExit(f"player {spec!r}: {exc}")
    return spec, lambda pos, dice: search.best(pos, dice).position


def decisions(games: int, seed: int):
    """``(position, dice, class)`` decisions until the pool runs out (module docstring)."""
    rng = np.random.default_rng(seed)
    pset = selfplay_positions(Network.load(model_path("backgammon")), games, seed,
                              epsilon=0.0, keep=1 / 6)
    for i in rng.permutation(len(pset)):
        pos = Position.from_array(pset.states[i], "backgammon")
        dice = tuple(int(x) for x in rng.integers(1, 7, 2))
        if len(successors(pos, dice)) >= 2:
            yield pos, dice, CLASSES[pset.klass[i]]


def gnubg_play(gnubg_nn, pos: Position, dice: tuple) -> Position:
    """The position after GNU Backgammon's 0-ply play of ``dice``."""
    key = gnubg_nn.best_move(gnubg_nn.board_from_position_id(position_id(pos)),
                             dice[0], dice[1], n=0, b=1)[1]
    for s in successors(pos, dice):
        if gnubg_nn.key_of_board(gnubg_nn.board_from_position_id(position_id(s))) == key:
            return s
    raise RuntimeError(f"gnubg's move {key!r} for {pos!r} with {dice} is not legal here")


def interval(v: np.ndarray) -> str:
    if len(v) < 2:
        return f"{v.mean():+.2f}" if len(v) else "-"
    h = 1.96 * v.std(ddof=1) / np.sqrt(len(v))
    return f"{v.mean():+.2f} ({v.mean() - h:+.2f} .. {v.mean() + h:+.2f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--players", nargs="+", default=["shipped"],
                    help="players (module docstring); the first is the others' reference")
    ap.add_argument("--decisions", type=int, default=8000)
    ap.add_argument("--games", type=int, default=1200,
                    help="self-play games of the decisions' pool")
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--judge-ply", type=int, default=2)
    args = ap.parse_args(argv)
    if args.decisions < 1 or args.games < 1:
        ap.error("--decisions and --games: expected positive integers")
    gnubg_nn = the_judge()
    if gnubg_nn is None:
        return 2
    players = [player(s) for s in args.players]
    t0 = time.time()
    classes, loss, differ = [], [[] for _ in players], [[] for _ in players]
    for pos, dice, klass in decisions(args.games, args.seed):
        theirs = gnubg_play(gnubg_nn, pos, dice)
        base = None
        for k, (_, choose) in enumerate(players):
            mine = choose(pos, dice)
            differ[k].append(mine != theirs)
            if mine == theirs:
                loss[k].append(0.0)
                continue
            if base is None:
                base = judge(gnubg_nn, theirs, args.judge_ply)
            loss[k].append(1000 * (judge(gnubg_nn, mine, args.judge_ply) - base))
        classes.append(klass)
        if len(classes) >= args.decisions:
            break
    klass = np.array(classes)
    loss = [np.array(v) for v in loss]
    differ = [np.array(v) for v in differ]
    print(f"{len(klass):,} decisions (self-play seed {args.seed}, {args.games} games), "
          f"judged by gnubg {args.judge_ply}-ply; mEMG a decision, the engine's 0-ply play "
          f"less GNU Backgammon's 0-ply play; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    w = max(6, *(len(name) for name, _ in players))
    print(f"{'player':{w}s} {'class':8s} {'n':>6s} {'differ':>6s}  {'mean (95%)':26s} "
          f"{'sum':>7s}  vs {players[0][0]}")
    for k, (name, _) in enumerate(players):
        for c in [*CLASSES, "all"]:
            rows = klass == c if c != "all" else np.ones(len(klass), bool)
            if not rows.any():
                continue
            v = loss[k][rows]
            paired = interval(v - loss[0][rows]) if k else ""
            print(f"{name:{w}s} {c:8s} {rows.sum():6d} {differ[k][rows].mean():6.2f}  "
                  f"{interval(v):26s} {v.sum():+7.0f}  {paired}")
    print(f"wall {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
