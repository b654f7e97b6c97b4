"""Playing strength: cubeless money games between two players on duplicate dice.

    python benchmarks/strength.py --a models/backgammon.npz --b pubeval --games 2000
    python benchmarks/strength.py --a runs/bg80/model.npz --b random --games 1000
    python benchmarks/strength.py --a runs/bg80/model.npz --b old/checkpoint-0000383551.npz
    python benchmarks/strength.py --a runs/bg80/model.npz --b gnubg0 --games 200
    python benchmarks/strength.py --a models/plakoto.npz --b heuristic --games 5000
    python benchmarks/strength.py --plot runs/bg80            # strength.png of the history

A player is a model file (any ``.npz`` model, or a checkpoint, which holds one; a run
folder means its ``model.npz``), ``pubeval``, ``random``, ``heuristic`` (the
hand-written player of :mod:`engine.eval.heuristic`, every game) or, when the PyPI package
``gnubg-nn`` is installed, ``gnubg0``: GNU Backgammon's 0-ply evaluator, asked once per
decision through ``gnubg_nn.best_move(board, d1, d2, n=0)`` (backgammon only; slow, so
use a few hundred games). Networks play greedy 0-ply, as in training. ``--a-race`` /
``--b-race`` give a network player a race network, which then plays its races
(positions without contact, home races included: the bear-off tables play no part
here); the released backgammon player is ``--a models/backgammon.npz --a-race
models/backgammon.race.npz``. ``--a-ply`` / ``--b-ply`` N > 0 make a network player
choose by the engine's N-ply search instead (:class:`engine.search.nply.SearchPlayer`:
its race network if given, the bear-off tables, the default move filters), in Python,
a few decisions a second at 2-ply. ``--search`` makes the network players choose so at
0-ply too: the engine's 0-ply as it ships (``engine.analyse --ply 0``: the race network,
and the bear-off tables for home races), where the greedy player rates home races with
a network:

    python benchmarks/strength.py --a models/backgammon.npz --a-race models/backgammon.race.npz --a-ply 2 --b gnubg0 --games 1000
    python benchmarks/strength.py --a models/backgammon.npz --a-race models/backgammon.race.npz --search --b gnubg0 --games 20000

Games come in pairs on the same dice with the players' seats swapped
(:mod:`engine.play.duel`): game 2k and 2k+1 share one dice stream, so most of the luck
cancels. Reported: player A's points per game with a 95% confidence interval over the
pair sums, A's win rate, and the gammon / backgammon rates of each side. Networks,
PubEval, the heuristic and random play inside one numba kernel; a gnubg match runs in Python. The
dice, and random players' choices, come from ``--seed`` alone.

``--record`` adds the result to player A's model card (A a model file): an entry of the
card's ``info.benchmarks`` (the command, the date, the players, the games, seed, points
per game with its 95% interval, win rate, wall time and the machine), written into the ``.npz`` and
its readable ``.json`` beside it (when there is one), atomically, the weights unchanged:
how a released network's card carries the figures measured against GNU Backgammon,
which ``training.release`` does not measure. Nothing in it is typed in by hand.

``--plot RUN`` draws the strength history that training recorded in the run's newest
checkpoint (points per game against training games; needs matplotlib, the ``plot``
extra) into ``RUN/strength.png`` or ``--png``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from engine.eval.network import Network, NetworkFileError, utc_now  # noqa: E402
from engine.play.duel import DuelError, DuelResult, duel, duel_players, pair_stats, stream_states  # noqa: E402
from engine.play.players import GreedyPlayer, PubEvalPlayer, RandomPlayer  # noqa: E402
from engine.rules.scoring import Kind
from engine.rules.variants import VARIANTS, get_rules  # noqa: E402
from training.release import machine  # noqa: E402

CHUNK_PAIRS = 250
"""Pairs per kernel call (for the progress bar; the match does not depend on it)."""


# --------------------------------------------------------------------- players
class GnubgPlayer:
    """GNU Backgammon's 0-ply evaluator through the ``gnubg_nn`` package.

    ``best_move(board, d1, d2, n=0, b=1)`` names the resulting board by its gnubg key;
    the successor with that key is played. Backgammon only (gnubg knows no other game).
    """

    def __init__(self):
        import gnubg_nn

        from engine.notation.gnubg_id import position_id
        self._g = gnubg_nn
        self._pid = position_id

    def _board(self, position):
        return self._g.board_from_position_id(self._pid(position))

    def choose(self, position, dice, successors) -> int:
        key = self._g.best_move(self._board(position), dice[0], dice[1], n=0, b=1)[1]
        for i, succ in enumerate(successors):
            if self._g.key_of_board(self._board(succ)) == key:
                return i
        raise RuntimeError(f"gnubg's move {key!r} for {position!r} with {dice} is not "
                           f"among the {len(successors)} legal successors")

    def __repr__(self) -> str:
        return "GnubgPlayer(0-ply)"


def gnubg_available() -> bool:
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return False
    return True


def load_player(spec: str):
    """``"random"``, ``"pubeval"``, ``"heuristic"``, ``"gnubg0"`` or a
    :class:`Network` from a path."""
    if spec in ("random", "pubeval", "heuristic"):
        return spec
    if spec == "gnubg0":
        if not gnubg_available():
            sys.exit("gnubg0 needs the PyPI package gnubg-nn (pip install gnubg-nn)")
        return spec
    path = Path(spec)
    if path.is_dir():
        path = path / "model.npz"
    try:
        return Network.load(path)
    except NetworkFileError as exc:
        sys.exit(f"player {spec!r}: not 'random', 'pubeval', 'heuristic', 'gnubg0' or a model: {exc}")


def describe(spec: str, player) -> str:
    if isinstance(player, Network):
        trained = player.info.get("trained_games")
        extra = f", {trained:,} games trained" if isinstance(trained, int) else ""
        return f"{spec} ({player.variant} {player.sizes}{extra})"
    return {"gnubg0": "gnubg0 (GNU Backgammon 0-ply, gnubg_nn)"}.get(spec, spec)


def python_player(player, seed: int, label: int, variant: str, race: Network | None = None,
                  ply: int = 0, search: bool = False, prune: Network | None = None):
    """The :class:`~engine.play.players.Player` object for the Python path (gnubg, or a
    network searched ``ply`` deep, with a pruning network ``prune`` inside the search
    if given; with ``search`` a network chooses by the search at 0-ply too)."""
    if isinstance(player, Network) and (ply > 0 or search):
        from engine.eval.evaluator import Evaluator
        from engine.search.nply import Search, SearchPlayer
        return SearchPlayer(Search(Evaluator(player, get_rules(variant), race=race,
                                             prune=prune)), ply)
    if isinstance(player, Network):
        return GreedyPlayer(player, get_rules(variant), race)
    if player == "pubeval":
        return PubEvalPlayer()
    if player == "heuristic":
        from engine.eval.heuristic import HeuristicPlayer
        return HeuristicPlayer(variant)
    if player == "random":
        # its own stream, apart from the dice (one per player)
        state = stream_states(seed, 3 + label, 0, 1)[0]
        return RandomPlayer(np.random.default_rng(int(state)))
    return GnubgPlayer()


# --------------------------------------------------------------------- with the cube
def play_cubeful(a, b, games: int, seed: int) -> tuple[np.ndarray, float, dict]:
    """Money games with the cube (Jacoby on, :mod:`engine.play.match`), in Python: each pair
    of games shares its dice (one generator seeded by ``(seed, pair)``) with the seats
    swapped. A network doubles and takes as :func:`engine.cube.decision.cube_decision` advises
    from its 0-ply probabilities; any other player never doubles and always takes.
    Returns player A's points per game, the seconds taken, and cube statistics."""
    from engine.cube.decision import network_probability_fn
    from engine.play.match import DecisionCubePolicy, NoCube, play_money_game

    def cube_policy(p):
        return DecisionCubePolicy(network_probability_fn(p)) if isinstance(p, Network) \
            else NoCube()

    pa, pb = python_player(a, seed, 0, "backgammon"), python_player(b, seed, 1, "backgammon")
    ca, cb = cube_policy(a), cube_policy(b)
    points = np.zeros(games, np.int64)
    stats = {"doubled": 0, "passed": 0, "max_cube": 1}
    t0 = time.perf_counter()
    for g in range(games):
        swap = g % 2
        rng = np.random.default_rng([seed, g // 2])
        players, policies = ((pb, pa), (cb, ca)) if swap else ((pa, pb), (ca, cb))
        rec = play_money_game(players, policies, rng)
        won = rec.points if rec.winner == (1 if swap else 0) else -rec.points
        points[g] = won if rec.winner is not None else 0
        stats["doubled"] += rec.cube_value > 1 or rec.passed
        stats["passed"] += rec.passed
        stats["max_cube"] = max(stats["max_cube"], rec.cube_value)
    return points, time.perf_counter() - t0, stats


# --------------------------------------------------------------------- the match
def play(a, b, games: int, seed: int, variant: str, max_turns: int,
         races=(None, None), plies=(0, 0), first_pair: int = 0,
         search: bool = False, prunes=(None, None)) -> tuple[DuelResult, float]:
    """Play the match, in chunks under a progress bar when stderr is a terminal; returns
    the result and the seconds it took (numba compilation excluded where the match runs
    in the numba game loop; a Python-loop match, with a search, ``gnubg0`` or a race
    network, counts the first compile of its kernels when the cache lacks them). ``races``: the
    players' race networks (None: none); ``plies``: their search depths;
    ``first_pair``: the seed's dice pair the match starts at (a later part of the same
    match: games ``2 * first_pair ..``); ``search``: network players choose by the
    search at their ply, 0 included."""
    from tqdm import tqdm
    kernel = all(p != "gnubg0" for p in (a, b)) and plies == (0, 0) and not search
    bar = tqdm(total=games, unit="game", disable=not sys.stderr.isatty(), leave=False)
    try:
        if not kernel:
            pa, pb = (python_player(p, seed, i, variant, races[i], plies[i], search,
                                    prunes[i])
                      for i, p in enumerate((a, b)))
            t = time.perf_counter()
            r = duel_players(pa, pb, games, seed, variant, max_turns=max_turns,
                             first_pair=first_pair, progress=lambda n: bar.update(n - bar.n))
            return r, time.perf_counter() - t
        rn = {"race_a": races[0], "race_b": races[1]}
        duel(a, b, 2, seed, variant, max_turns=max_turns, **rn)    # compile outside timing
        t = time.perf_counter()
        parts = []
        pairs = games // 2
        for first in range(first_pair, first_pair + pairs, CHUNK_PAIRS):
            n = min(CHUNK_PAIRS, first_pair + pairs - first)
            parts.append(duel(a, b, 2 * n, seed, variant, max_turns=max_turns,
                              first_pair=first, **rn))
            bar.update(2 * n)
        return DuelResult.join(parts), time.perf_counter() - t
    finally:
        bar.close()


def report(r: DuelResult, name_a: str, name_b: str, seed: int, command: str,
           seconds: float, first_pair: int = 0) -> str:
    """The results as text ready to paste into benchmarks/README.md."""
    ppg, half = r.ppg, r.ci95()
    gam = (Kind.GAMMON, Kind.BACKGAMMON, Kind.KOKS, Kind.HOME_MARS)
    lines = [
        "```",
        f"$ {command}",
        f"A = {name_a}",
        f"B = {name_b}",
        f"{r.variant}, {r.games} games ({r.games // 2} duplicate-dice pairs"
        + (f" from pair {first_pair}" if first_pair else "") + f"), seed {seed}, "
        f"{seconds:.1f} s ({r.games / seconds:,.0f} games/s)",
        f"A: {ppg:+.3f} ppg +- {half:.3f} (95% CI over pair sums: "
        f"{ppg - half:+.3f} .. {ppg + half:+.3f})",
        f"A wins {100 * r.rate(0):.1f}%  (B {100 * r.rate(1):.1f}%"
        + (f", draws {r.count(2)}" if r.count(2) else "")
        + (f", cut at max turns {r.count(-1)}" if r.count(-1) else "") + ")",
        f"gammons or more: A {100 * r.rate(0, *gam):.1f}%, B {100 * r.rate(1, *gam):.1f}%;"
        f"  backgammons: A {100 * r.rate(0, Kind.BACKGAMMON):.1f}%, "
        f"B {100 * r.rate(1, Kind.BACKGAMMON):.1f}%",
        f"mean turns per game {r.turns.mean():.1f}",
        "```",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------- the plot
def plot(run_dir: Path, png: Path | None) -> None:
    from training import checkpoint
    try:
        state = checkpoint.latest(run_dir)
    except checkpoint.CheckpointError as exc:
        sys.exit(str(exc))
    if state is None:
        sys.exit(f"{run_dir}: no readable checkpoint")
    if not state.history:
        sys.exit(f"{run_dir}: the newest checkpoint holds no strength history")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install 'matplotlib>=3.6', or the 'plot' "
              "extra: pip install -e '.[plot]'); skipping the plot")
        for games, ppg, opp, n in state.history:
            print(f"{games:>12,} games  {ppg:+.3f} ppg vs {opp} ({n} games)")
        return
    png = png or run_dir / "strength.png"
    fig, ax = plt.subplots(figsize=(7, 4))
    for opp in sorted({row[2] for row in state.history}):
        rows = [row for row in state.history if row[2] == opp]
        ax.plot([r[0] for r in rows], [r[1] for r in rows], "o-", ms=3,
                label=f"vs {opp} ({rows[-1][3]} games each)")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("training games")
    ax.set_ylabel("points per game (cubeless)")
    ax.set_title(f"{run_dir.name}: {state.config.variant} {state.net.sizes}, "
                 f"{state.games:,} games")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png} ({len(state.history)} measurements)")


def record(path: Path, entry: dict) -> list[Path]:
    """Add ``entry`` to the ``info.benchmarks`` list of the model card of ``path``;
    rewrites the model file (and its ``.json`` card beside it, when there is one) with
    the same weights. Returns the files written."""
    net = Network.load(path)
    net.info = {**net.info, "benchmarks": [*net.info.get("benchmarks", []), entry]}
    card = path.with_suffix(".json")
    net.save(path, card_file=card.exists())
    return [path, card] if card.exists() else [path]


# --------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--a", help="player A: model .npz / checkpoint / run folder, pubeval, "
                                "heuristic, random, gnubg0")
    ap.add_argument("--b", default="pubeval", help="player B (default pubeval)")
    ap.add_argument("--a-race", metavar="FILE",
                    help="race network of network player A (plays its races)")
    ap.add_argument("--b-race", metavar="FILE", help="race network of network player B")
    ap.add_argument("--a-prune", metavar="FILE",
                    help="pruning network inside the search of network player A (the "
                         "search's default keep, SearchSettings.prune_keep)")
    ap.add_argument("--b-prune", metavar="FILE", help="the same for player B")
    ap.add_argument("--a-ply", type=int, default=0, choices=(0, 1, 2, 3),
                    help="network player A chooses by an N-ply search (default 0: greedy)")
    ap.add_argument("--b-ply", type=int, default=0, choices=(0, 1, 2, 3),
                    help="the same for player B")
    ap.add_argument("--search", action="store_true",
                    help="network players choose by the engine's search at their ply, 0 "
                         "included (the bear-off tables play home races), in Python")
    ap.add_argument("--games", type=int, default=2000, help="games, even (default 2000)")
    ap.add_argument("--variant", choices=VARIANTS,
                    help="game (default: the network's, else backgammon)")
    ap.add_argument("--seed", type=int, default=1, help="dice seed (default 1)")
    ap.add_argument("--first-pair", type=int, default=0, metavar="K",
                    help="start at the seed's dice pair K (games 2K, 2K+1, ...): a later "
                         "part of the same match (default 0; a random player's own choices "
                         "start afresh where the match runs in Python)")
    ap.add_argument("--points", type=Path, metavar="FILE",
                    help="also write player A's points per game (int64, in game order) to "
                         "FILE with numpy.save (which adds .npy to a name without it), to "
                         "pool the parts of a match")
    ap.add_argument("--max-turns", type=int, default=10_000,
                    help="a game still going after this many rolls scores 0")
    ap.add_argument("--plot", type=Path, metavar="RUN",
                    help="plot the strength history of a training run folder")
    ap.add_argument("--png", type=Path, help="where --plot writes (default RUN/strength.png)")
    ap.add_argument("--record", action="store_true",
                    help="add the result to player A's model card (its .npz, and the "
                         ".json beside it): a whole cubeless match of a model file")
    ap.add_argument("--cube", action="store_true",
                    help="money games with the cube (backgammon, Jacoby on; in Python, "
                         "about 10 games/s)")
    args = ap.parse_args(argv)
    if args.plot is None and args.a is None:
        ap.error("give --a (and --b) to play a match, or --plot RUN")
    if args.plot is not None:
        plot(args.plot, args.png)
    if args.a is None:
        return
    if args.games < 2 or args.games % 2:
        ap.error(f"--games {args.games}: expected an even number >= 2 (pairs)")
    if args.first_pair < 0:
        ap.error(f"--first-pair {args.first_pair}: expected an integer >= 0")
    if args.cube and (args.points is not None or args.first_pair):
        ap.error("--points and --first-pair: for cubeless matches (not with --cube)")
    a, b = load_player(args.a), load_player(args.b)
    if args.record and not (isinstance(a, Network) and Path(args.a).suffix == ".npz"
                            and Path(args.a).is_file()):
        ap.error(f"--record: player A {args.a!r} must be a model file (.npz): its card "
                 f"gets the result")
    if args.record and (args.cube or args.first_pair):
        ap.error("--record: a whole cubeless match (not --cube or --first-pair)")
    races = tuple(None if f is None else load_player(f) for f in (args.a_race, args.b_race))
    for label, race in zip("ab", races):
        if race is not None and not isinstance(race, Network):
            ap.error(f"--{label}-race: expected a model file")
    prunes = tuple(None if f is None else load_player(f)
                   for f in (args.a_prune, args.b_prune))
    for label, p, ply, prune in zip("ab", (a, b), (args.a_ply, args.b_ply), prunes):
        if prune is not None and not (isinstance(prune, Network) and isinstance(p, Network)
                                      and (ply or args.search)):
            ap.error(f"--{label}-prune: a pruning network's model file, for a network "
                     f"player that searches (--{label}-ply or --search)")
    name_a, name_b = describe(args.a, a), describe(args.b, b)
    if races[0] is not None:
        name_a += f" + race network {describe(args.a_race, races[0])}"
    if races[1] is not None:
        name_b += f" + race network {describe(args.b_race, races[1])}"
    if prunes[0] is not None:
        name_a += f" + pruning network {describe(args.a_prune, prunes[0])}"
    if prunes[1] is not None:
        name_b += f" + pruning network {describe(args.b_prune, prunes[1])}"
    plies = (args.a_ply, args.b_ply)
    for label, p, ply in (("a", a, args.a_ply), ("b", b, args.b_ply)):
        if ply and not isinstance(p, Network):
            ap.error(f"--{label}-ply: only a network player searches")
    name_a += f", {args.a_ply}-ply search" if args.a_ply or (
        args.search and isinstance(a, Network)) else ""
    name_b += f", {args.b_ply}-ply search" if args.b_ply or (
        args.search and isinstance(b, Network)) else ""
    nets = [p for p in (a, b) if isinstance(p, Network)]
    variant = args.variant or (nets[0].variant if nets else "backgammon")
    if "gnubg0" in (a, b) and variant != "backgammon":
        sys.exit(f"gnubg0 plays backgammon only, not {variant!r}")
    command = "python benchmarks/strength.py " + " ".join(
        shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    if args.cube:
        if (variant != "backgammon" or "gnubg0" in (a, b) or races != (None, None)
                or plies != (0, 0) or args.search):
            sys.exit("--cube: backgammon between 0-ply networks (without race networks), "
                     "pubeval or random")
        pts, seconds, st = play_cubeful(a, b, args.games, args.seed)
        ppg, ci = pair_stats(pts)
        print(f"$ {command}\nA = {describe(args.a, a)}\nB = {describe(args.b, b)}\n"
              f"backgammon money play with the cube (Jacoby), {args.games} games "
              f"({args.games // 2} duplicate-dice pairs), seed {args.seed}, {seconds:.1f} s\n"
              f"A: {ppg:+.3f} ppg +- {ci:.3f} (95% CI over pair sums)\n"
              f"games doubled {st['doubled']}, doubles passed {st['passed']}, "
              f"highest cube {st['max_cube']}")
        return
    try:
        r, seconds = play(a, b, args.games, args.seed, variant, args.max_turns, races, plies,
                          args.first_pair, args.search, prunes)
    except DuelError as exc:
        sys.exit(str(exc))
    if args.points is not None:
        np.save(args.points, r.points.astype(np.int64))
    print(report(r, name_a, name_b, args.seed, command, seconds, args.first_pair))
    if args.record:
        ppg, half = r.ppg, r.ci95()
        entry = {"command": command, "date": utc_now(), "a": name_a, "b": name_b,
                 "variant": r.variant, "games": r.games, "seed": args.seed,
                 "ppg": round(ppg, 4), "ci95": [round(ppg - half, 4), round(ppg + half, 4)],
                 "win_rate": round(r.rate(0), 4), "seconds": round(seconds, 1),
                 "machine": machine()}
        written = record(Path(args.a), entry)
        print(f"recorded in the card of {' and '.join(map(str, written))}")


if __name__ == "__main__":
    main()
