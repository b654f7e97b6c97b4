"""Where a gul bara network's losses to random play come from.

    python benchmarks/gul_bara_losses.py --games 3000 --seed 11
    python benchmarks/gul_bara_losses.py --model runs/gb128/model.npz
    python benchmarks/gul_bara_losses.py --games 1100 --seed 7 --ply 1

Plays a network (greedy 0-ply over the successors duels offer: a cascade's plays
sampled, :func:`engine.movegen.generate.successor_arrays` with ``play=True``; or, with ``--ply``
1 to 3, the best of every legal play by :class:`engine.search.nply.Search` at that depth)
against uniformly random play, seats alternating. Each game draws its dice and the
random player's choices from streams of their own (seeded by ``--seed`` and the game's
number), so runs at different depths play the same dice. It splits the games by
whether the network rolled a cascade early, on its own 4th to 6th turn, when few of
its checkers can have left the head (one a turn): most of such a cascade's 24 single moves then cannot be played and
pass to the opponent as pending dice. Reported: the win rate in each group and the
group's share of the network's losses, and the pending dice each side passed in its
lost games. In Python, about 100 games/s at 0-ply, one game in 2 s at 1-ply.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from engine.eval.evaluator import Evaluator  # noqa: E402
from engine.movegen.generate import successor_arrays  # noqa: E402
from engine.play.game import play as play_game_loop  # noqa: E402
from engine.rules.position import Position  # noqa: E402
from engine.rules.scoring import equities  # noqa: E402
from engine.rules.variants import get_rules  # noqa: E402
from engine.search.nply import Search  # noqa: E402

EARLY = range(4, 7)
"""The network's own turns on which a cascade counts as early."""


def play(evaluator: Evaluator, games: int, seed: int, max_turns: int = 2000,
         search: Search | None = None, ply: int = 0) -> np.ndarray:
    """One row per game: network won, network rolled an early cascade, random did,
    pending dice passed by the network, by random. With ``ply`` > 0 the network's play
    is ``search``'s best (its settings at that depth)."""
    rules = get_rules("gul_bara")
    rows = np.zeros((games, 5), np.int64)
    for g in range(games):
        rng = np.random.default_rng([seed, g, 1])        # the dice
        choice = np.random.default_rng([seed, g, 2])     # the random player's choices
        net = g % 2                               # the network's seat: 0 moves first
        own, early, passed = [0, 0], [0, 0], [0, 0]

        def turn(mover: int, pos: Position, dice) -> Position:
            segment = dice is None
            if not segment:
                own[mover] += 1
                early[mover] += dice[0] == dice[1] and own[mover] in EARLY
            if mover == net and ply:
                kids, _, eq, plies, _ = search.rate(pos.to_array(), dice, search.settings)
                n = len(kids)               # ranked as Search.analyse ranks them
                after = kids[np.lexsort((np.arange(n), -eq[:n], -plies[:n]))[0]]
            else:
                succ = successor_arrays(pos, dice, rules, play=True)
                if mover == net:
                    eq = equities(evaluator.probabilities_of_arrays(succ))
                    # a segment leaves the same side to move; a turn flips the view
                    i = int(np.argmax(eq)) if segment else int(np.argmin(eq))
                else:
                    i = int(choice.integers(len(succ)))
                after = succ[i]
            after = Position.from_array(after, "gul_bara")
            if not segment:
                passed[mover] += len(after.pending)
            return after

        game = play_game_loop(turn, rules, opening=(0, None), cut=True, max_turns=max_turns,
                              roll=lambda: (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
        rows[g] = (game.winner == net, early[net] > 0, early[1 - net] > 0,
                   passed[net], passed[1 - net])
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model (default models/gul_bara.npz)")
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--ply", type=int, default=0, choices=range(4),
                        help="the network's search depth (default 0: as in the duels)")
    args = parser.parse_args(argv)
    evaluator = Evaluator.load("gul_bara", args.model)
    search = Search.load("gul_bara", args.model, ply=args.ply) if args.ply else None
    t = time.time()
    rows = play(evaluator, args.games, args.seed, search=search, ply=args.ply)
    won, net_early, rnd_early = rows[:, 0] == 1, rows[:, 1] == 1, rows[:, 2] == 1
    lost = ~won
    print(f"{args.games} games against random play at {args.ply}-ply, seed {args.seed}: "
          f"network wins {won.mean():.2%} ({lost.sum()} lost, {time.time() - t:.0f} s)")
    for name, m in (("network rolled an early cascade", net_early),
                    ("it did not", ~net_early),
                    ("neither side did", ~net_early & ~rnd_early)):
        print(f"  {name:<32} {m.mean():6.1%} of games, network wins {won[m].mean():.2%}, "
              f"{(lost & m).sum() / max(1, lost.sum()):4.0%} of its losses")
    if lost.any():
        print(f"  pending dice passed in the lost games: network {rows[lost, 3].mean():.1f}, "
              f"random {rows[lost, 4].mean():.1f} per game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
