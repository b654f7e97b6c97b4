"""How well networks rate races, judged by GNU Backgammon.

    python benchmarks/race_accuracy.py --models models/backgammon.npz runs/race/it3/model.npz

Positions: races and bear-offs (``training.positions`` classes ``race`` and
``bearoff``) from the released network's self-play and from random set-ups, on seeds of
their own (``--games``, ``--setups``, ``--seed``; by default other seeds than the
training sets of ``training/README.md``). Each model's 0-ply outputs (the network
alone, no bear-off tables) are compared with GNU Backgammon's evaluation
(``gnubg_nn.probabilities(board, --gnubg-ply)``: its race network and bear-off
database), a judge independent of the engine; so are the engine's bear-off tables on the
``bearoff`` class, where the engine uses them, and with ``--search-plies`` the shipped
search's n-ply values of the races, with its race network (``models/backgammon.race.npz``)
and without it; with ``--labels`` the targets of labelled position sets on their races
(a labelling's own error). Reported per class: the mean absolute
and the mean signed cubeless equity difference (engine minus judge), and the share of
positions off by more than 0.05.

GNU Backgammon only judges: none of it goes into the engine or its training. Needs the
PyPI package ``gnubg-nn``.
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

from engine.eval.evaluator import Evaluator, model_path  # noqa: E402
from engine.eval.network import Network  # noqa: E402
from engine.notation.gnubg_id import position_id  # noqa: E402
from engine.rules.position import Position  # noqa: E402
from engine.rules.scoring import equities  # noqa: E402
from engine.search.nply import Search  # noqa: E402
from training.positions import (
    BEAROFF,
    CLASSES,
    RACE,
    PositionSet,
    selfplay_positions,
    setup_positions_set,  # noqa: E402
)


def judge(gnubg_nn, states: np.ndarray, ply: int) -> np.ndarray:
    """GNU Backgammon's five outputs of each state, for its side to move."""
    out = np.empty((len(states), 5))
    for i, row in enumerate(states):
        board = gnubg_nn.board_from_position_id(position_id(Position.from_array(row, "backgammon")))
        out[i] = gnubg_nn.probabilities(board, ply)
    return out


def line(name: str, eq: np.ndarray, ref: np.ndarray) -> str:
    d = eq - ref
    return (f"{name:<34} {len(d):6d} {np.abs(d).mean():8.4f} {d.mean():+8.4f} "
            f"{(np.abs(d) > 0.05).mean():7.1%}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["models/backgammon.npz"])
    ap.add_argument("--games", type=int, default=1500, help="self-play games sampled")
    ap.add_argument("--setups", type=int, default=3000, help="random set-ups sampled")
    ap.add_argument("--seed", type=int, default=97)
    ap.add_argument("--search-plies", type=int, nargs="*", default=[],
                    help="also the shipped search at these depths (released network, "
                         "pruning network, bear-off tables), with and without the race "
                         "network")
    ap.add_argument("--labels", nargs="*", default=[], metavar="SET",
                    help="also judge the targets of labelled position sets "
                         "(training.label) on their races")
    ap.add_argument("--gnubg-ply", type=int, default=0,
                    help="GNU Backgammon's evaluation depth (its race network is 0-ply)")
    args = ap.parse_args(argv)
    try:
        import gnubg_nn
    except ImportError:
        print("needs the PyPI package gnubg-nn (the judge)", file=sys.stderr)
        return 2
    t0 = time.time()
    net0 = Network.load(ROOT / "models/backgammon.npz")
    ps = PositionSet.join([selfplay_positions(net0, args.games, args.seed),
                           setup_positions_set("backgammon", args.setups, args.seed)])
    ps = ps.of_classes(["race", "bearoff"])
    ref = equities(judge(gnubg_nn, ps.states, args.gnubg_ply))
    print(f"{len(ps):,} positions ({ps.counts()['race']:,} race, "
          f"{ps.counts()['bearoff']:,} bear-off; self-play seed {args.seed}, "
          f"{args.games} games, {args.setups} set-ups), judged by gnubg "
          f"{args.gnubg_ply}-ply; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'rated by':<34} {'n':>6} {'mean |d|':>8} {'mean d':>8} {'|d|>.05':>7}")
    for model in args.models:
        eq = equities(Network.load(model).probabilities_of_arrays(ps.states)
                      .astype(np.float64))
        for k in (RACE, BEAROFF):
            m = ps.klass == k
            print(line(f"{Path(model).name[:22]} {CLASSES[k]}", eq[m], ref[m]))
    for race in (True, False):
        if race and not model_path("backgammon", "race").exists():
            continue
        search = Search(Evaluator.load("backgammon", race=None if race else False),
                        threads=2)
        for ply in args.search_plies:
            eq = equities(search.values_of(ps.states, ply))
            m = ps.klass == RACE
            who = "shipped" if race else "no race net"
            print(line(f"{who} {ply}-ply race", eq[m], ref[m]))
    for path in args.labels:
        lab = PositionSet.load(path)
        m = lab.klass == RACE
        if lab.targets is None or not m.any():
            print(f"{path}: no labelled races")
            continue
        how = lab.info.get("labels", {})
        name = (f"{how.get('trials')}-trial rollout" if "trials" in how
                else f"{how.get('ply')}-ply search")
        print(line(f"labels: {name}", equities(lab.targets[m].astype(np.float64)),
                   equities(judge(gnubg_nn, lab.states[m], args.gnubg_ply))))
    tables = Evaluator.load("backgammon", prune=False)
    m = ps.klass == BEAROFF
    eq = equities(tables.probabilities_of_arrays(ps.states[m]))
    print(line("bear-off tables bearoff", eq, ref[m]))
    print(f"wall {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
