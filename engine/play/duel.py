"""Duplicate-dice duels: cubeless money games between two players on shared dice.

Games come in pairs. Both games of pair *k* draw their dice from the same stream (seeded
from ``(seed, k)``), and the second game swaps the players' seats: the player who sat in
seat 0 (rolling the first opening die) in game ``2k`` sits in seat 1 in game ``2k + 1``.
Each seat therefore gets the same opening roll and the same sequence of rolls in both
games, as far as the two games run alike, and most of the luck cancels within a pair:
two players that choose the same move for every position and roll score exactly 0 over
every pair. The pair sums are independent, the two games of a pair are not, so the
confidence interval of points per game is taken over the pair sums
(:func:`pair_stats`).

Two ways to play:

* :func:`duel`: the whole match in one call of the numba game loop
  (:func:`engine.play.loop.play_games`), for the players it knows: ``"random"``,
  ``"pubeval"`` (backgammon boards only), ``"heuristic"`` (:mod:`engine.eval.heuristic`)
  and any :class:`~engine.eval.network.Network` (greedy 0-ply, as in training),
  thousands of games a second;
* :func:`duel_players`: the same dice and seats in Python, for any object with the
  :class:`~engine.play.players.Player` ``choose`` method (an external engine, say). With
  :class:`~engine.play.players.PubEvalPlayer` and :class:`~engine.play.players.GreedyPlayer` it
  plays the very games the kernel plays, and the tests check that it does.

Random choices come from a stream of their own (one per game), never from the dice
stream, so a random player cannot shift the other game's dice. Nothing here touches a
global random generator: every stream is derived from the caller's ``seed``.

:func:`heuristic_duel` is the quick check of the heuristic against a random mover
(plain games, seats alternating, one stream from a numpy generator), through the same
game loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence, Union

import numpy as np

from engine._jit import announce_compile
from engine.errors import NardyError, VariantError, quote
from engine.eval.encoding import extends
from engine.eval.heuristic import HeuristicError, check_weights, weights as heuristic_weights
from engine.eval.network import Network
from engine.eval.pubeval import check_supported
from engine.movegen.generate import successor_arrays
from engine.play import loop
from engine.play.game import check_max_turns, play, play_turn
from engine.play.loop import KIND_HEURISTIC, KIND_NETWORK, KIND_PUBEVAL, KIND_RANDOM
from engine.play.players import check_player, check_rng
from engine.rules._rng import GAMMA, MIX2, die, mix, rng_state
from engine.rules.position import Position
from engine.rules.scoring import Kind, score_table
from engine.rules.states import position_state
from engine.rules.variants import Rules, race_geometry, rules_for

if TYPE_CHECKING:  # pragma: no cover
    from engine.play.players import Player


class DuelError(NardyError):
    """A duel that cannot be played: an unknown player, a player that does not know the
    game, an odd number of games."""

    code = "invalid_duel"


MAX_GAMES = 1_000_000
"""Most games of one call: their rows are held at once. Training's strength figures take
the same bound from here."""
MAX_PAIR = 1 << 62
"""Bound on ``first_pair`` (pair numbers index a 64-bit random stream)."""


# columns of the per-game rows
G_POINTS, G_WINNER, G_KIND, G_TURNS, G_STARTER = range(5)
N_COLUMNS = 5
WINNER_DRAW = loop.WINNER_DRAW
"""``winner`` of a drawn game (plakoto's deferred mother)."""
WINNER_CUT = -1
"""``winner`` of a game stopped at ``max_turns`` (it scores 0)."""


# --------------------------------------------------------------------- seeds
DICE_STREAM = 1
"""Stream number of the dice (one state per pair)."""
CHOICE_STREAM = 2
"""Stream number of random players' choices (one state per game)."""


def stream_states(seed: int, stream: int, first: int, n: int) -> np.ndarray:
    """``uint64[n]`` kernel random states number ``first .. first + n - 1`` of
    ``stream`` under ``seed``. State *k* depends only on ``(seed, stream, k)``, so a
    match played in chunks draws the same dice as one played at once."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise DuelError(f"seed = {quote(seed)}: expected an int in 0 .. 2**64 - 1")
    with np.errstate(over="ignore"):
        base = mix(np.array([seed], np.uint64) ^ (np.uint64(stream) * MIX2))
        k = np.arange(first, first + n, dtype=np.uint64) + np.uint64(1)
        return mix(base + k * GAMMA)


# --------------------------------------------------------------------- results
def pair_stats(points: Sequence[int] | np.ndarray, z: float = 1.959964) -> tuple[float, float]:
    """Points per game and the half-width of its confidence interval (95% by default).

    ``points[2k]`` and ``points[2k + 1]`` are the two games of pair *k* on the same
    dice; they are correlated, so the spread is taken over the pair sums
    ``x_k = points[2k] + points[2k + 1]``: ppg ``= mean(x) / 2`` and the half-width is
    ``z * sd(x) / sqrt(pairs) / 2`` (sample standard deviation; 0 for a single pair).
    """
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 1 or p.size % 2 or p.size == 0:
        raise DuelError(f"{p.size} game results: expected a positive even number (pairs)")
    x = p[0::2] + p[1::2]
    half = z * x.std(ddof=1) / np.sqrt(x.size) / 2 if x.size > 1 else 0.0
    return float(x.mean() / 2), float(half)


@dataclass(frozen=True)
class DuelResult:
    """The games of a duplicate-dice duel, one entry per game; game ``2k + 1`` replays
    the dice of game ``2k`` with the seats swapped."""

    variant: str
    """The game played."""
    points: np.ndarray
    """Player A's score per game at cube value 1: + when A won, - when B won, 0 for a
    draw or a game cut at ``max_turns``."""
    winner: np.ndarray
    """0: A won, 1: B won, :data:`WINNER_DRAW`, :data:`WINNER_CUT`."""
    kind: np.ndarray
    """How each game ended, a :class:`~engine.rules.scoring.Kind` code (0 for a cut game)."""
    turns: np.ndarray
    """Rolls played per game."""
    starter: np.ndarray
    """Player (0 = A, 1 = B) who won the opening roll."""

    @classmethod
    def from_rows(cls, variant: str, rows: np.ndarray) -> "DuelResult":
        """From kernel rows (G_* columns)."""
        return cls(variant, rows[:, G_POINTS].copy(), rows[:, G_WINNER].copy(),
                   rows[:, G_KIND].copy(), rows[:, G_TURNS].copy(), rows[:, G_STARTER].copy())

    @classmethod
    def from_games(cls, variant: str, games: np.ndarray) -> "DuelResult":
        """From the game loop's rows (:mod:`engine.play.loop` G_* columns)."""
        winner = games[:, loop.G_WINNER]
        won = games[:, loop.G_POINTS]
        points = np.where(winner == 0, won, np.where(winner == 1, -won, 0))
        return cls(variant, points, np.where(winner == loop.WINNER_NONE, WINNER_CUT, winner),
                   games[:, loop.G_KIND].copy(), games[:, loop.G_TURNS].copy(),
                   games[:, loop.G_STARTER].copy())

    @classmethod
    def join(cls, parts: Sequence["DuelResult"]) -> "DuelResult":
        """Chunks of one match (in pair order) as one result."""
        if not parts:
            raise DuelError("no results to join")
        return cls(parts[0].variant,
                   *(np.concatenate([getattr(p, f) for p in parts])
                     for f in ("points", "winner", "kind", "turns", "starter")))

    @property
    def games(self) -> int:
        """Games played (twice the pairs)."""
        return int(self.points.size)

    @property
    def ppg(self) -> float:
        """Player A's mean points per game."""
        return pair_stats(self.points)[0]

    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of :attr:`ppg`, over pair sums."""
        return pair_stats(self.points)[1]

    def rate(self, player: int, *kinds: Kind) -> float:
        """Share of all games that ``player`` (0 = A, 1 = B) won, counting only games
        ending as one of ``kinds`` when any are given."""
        hit = self.winner == player
        if kinds:
            hit &= np.isin(self.kind, [int(k) for k in kinds])
        return float(hit.mean())

    def count(self, winner: int) -> int:
        """Games whose ``winner`` field is ``winner``."""
        return int((self.winner == winner).sum())

    def kinds_won(self, player: int) -> dict[Kind, int]:
        """Games ``player`` won, by how they ended."""
        sel = self.kind[self.winner == player]
        return {Kind(k): int((sel == k).sum()) for k in np.unique(sel)}


# --------------------------------------------------------------------- the kernel duel
KernelPlayer = Union[str, Network]
"""What :func:`duel` plays: ``"random"``, ``"pubeval"``, ``"heuristic"`` or a
:class:`Network`."""

def _kernel_player(p: KernelPlayer, rules: Rules, label: str) -> tuple[int, Network | None]:
    if isinstance(p, Network):
        if p.variant != rules.variant:
            raise DuelError(f"player {label}: network {p!r} plays {p.variant!r}, not "
                            f"{rules.variant!r}")
        return KIND_NETWORK, p
    if p in ("random", "pubeval", "heuristic"):
        if p == "pubeval":
            try:
                check_supported(rules)
            except VariantError as exc:
                raise DuelError(f"player {label}: {exc}") from None
        kinds = {"random": KIND_RANDOM, "pubeval": KIND_PUBEVAL, "heuristic": KIND_HEURISTIC}
        return kinds[p], None
    raise DuelError(f"player {label} = {quote(p)}: expected 'random', 'pubeval', 'heuristic' "
                    f"or a Network")


def _check_games(n_games: int) -> int:
    if isinstance(n_games, (bool, np.bool_)) or not isinstance(n_games, (int, np.integer)) \
            or not 2 <= n_games <= MAX_GAMES or n_games % 2:
        raise DuelError(f"n_games = {quote(n_games)}: expected an even number 2..{MAX_GAMES} "
                        f"(games come in pairs on the same dice)")
    return int(n_games)


def _check_first_pair(first_pair: int) -> int:
    if isinstance(first_pair, (bool, np.bool_)) or not isinstance(
            first_pair, (int, np.integer)) or not 0 <= first_pair <= MAX_PAIR:
        raise DuelError(f"first_pair = {quote(first_pair)}: expected an integer "
                        f"0..2**62")
    return int(first_pair)


def _check_turns(max_turns) -> int:
    return check_max_turns(max_turns, DuelError)


def _race_network(race: Network | None, net: Network | None, rules: Rules,
                  label: str) -> Network | None:
    """``race`` checked as the race network of network player ``label`` (``net``)."""
    if race is None:
        return None
    if net is None:
        raise DuelError(f"player {label}: a race network needs a network player")
    if not isinstance(race, Network) or race.variant != rules.variant:
        raise DuelError(f"player {label}: race network = {quote(race)}: expected a "
                        f"{rules.variant} Network")
    if not race_geometry(rules):
        raise DuelError(f"player {label}: a race network needs backgammon's geometry "
                        f"(sides moving in opposite directions, hitting); "
                        f"{rules.variant} has none")
    if race.encoder.name != net.encoder.name:
        if not extends(net.encoder, race.encoder):
            raise DuelError(f"player {label}: race network inputs {race.encoder.name!r}, "
                            f"expected its network's {net.encoder.name!r} or the first of "
                            f"them")
        race = race.reencoded(net.encoder.name)      # the same values, one kernel type
    return race


def duel(a: KernelPlayer, b: KernelPlayer, n_games: int, seed: int,
         variant: str = "backgammon", *, rules: Rules | None = None,
         start: Position | None = None, max_turns: int = 10_000,
         first_pair: int = 0, race_a: Network | None = None,
         race_b: Network | None = None) -> DuelResult:
    """Play ``n_games`` (even) duplicate-dice games between ``a`` and ``b`` in one
    call of the game loop; see the module docstring. ``first_pair`` numbers the first pair, so
    that a long match played in chunks (``first_pair = 0, c, 2c, ...``) is the same
    match as one played at once. ``start`` replaces the starting position. ``race_a`` /
    ``race_b``: a network player's race network, which then plays its races (positions
    without contact; as :class:`engine.eval.evaluator.Evaluator` rates them, but with
    no bear-off tables: the race network plays home races too)."""
    rules = rules_for(variant, rules)
    n = _check_games(n_games)
    max_turns = _check_turns(max_turns)
    first_pair = _check_first_pair(first_pair)
    kind_a, net_a = _kernel_player(a, rules, "A")
    kind_b, net_b = _kernel_player(b, rules, "B")
    race_a = _race_network(race_a, net_a, rules, "A")
    race_b = _race_network(race_b, net_b, rules, "B")
    start_pos = start if start is not None else Position.start(rules.variant)
    position_state(start_pos, rules)          # a legal position of this game
    games = loop.new_games(n)
    announce_compile("the game loop", [loop.play_games], "30-60 seconds")
    loop.play_games(*loop.game_args(
        start_pos.to_array(), rules.table(), score_table(rules), rules.opening_rolls_both,
        [kind_a, kind_b], net_a, net_b, games=games, st=np.zeros(1, np.uint64),
        race_a=race_a, race_b=race_b, cst=np.zeros(1, np.uint64), hw=heuristic_weights(rules), max_turns=max_turns,
        dice_seeds=stream_states(seed, DICE_STREAM, first_pair, n // 2),
        choice_seeds=stream_states(seed, CHOICE_STREAM, 2 * first_pair, n), swap=True))
    return DuelResult.from_games(rules.variant, games)


def heuristic_duel(variant: str, n_games: int, rng: np.random.Generator, *,
                   rules: Rules | None = None, w: np.ndarray | None = None,
                   max_turns: int = 5000) -> np.ndarray:
    """Signed points per game of the heuristic (:mod:`engine.eval.heuristic`, weights
    ``w``, by default the game's) against a random mover, in one call of the game loop:
    the heuristic sits in seat 0 in the even games, in seat 1 in the odd ones; dice and
    random choices come from one stream seeded from ``rng`` (no duplicate dice). A game
    cut at ``max_turns`` or drawn scores 0."""
    rules = rules_for(variant, rules)
    try:
        w = check_weights(w, rules)                       # the kernel reads 15
    except HeuristicError as exc:
        raise DuelError(f"heuristic weights: {exc}") from None
    if isinstance(n_games, (bool, np.bool_)) or not isinstance(
            n_games, (int, np.integer)) or not 1 <= n_games <= MAX_GAMES:
        raise DuelError(f"n_games = {quote(n_games)}: expected an integer 1..{MAX_GAMES}")
    max_turns = _check_turns(max_turns)
    check_rng(rng)
    games = loop.new_games(int(n_games))
    loop.play_games(*loop.game_args(
        Position.start(rules.variant).to_array(), rules.table(), score_table(rules),
        rules.opening_rolls_both, [KIND_HEURISTIC, KIND_RANDOM], games=games,
        st=rng_state(rng), hw=w, max_turns=max_turns, swap=True))
    return DuelResult.from_games(rules.variant, games).points


# --------------------------------------------------------------------- any players
def duel_players(a: "Player", b: "Player", n_games: int, seed: int,
                 variant: str = "backgammon", *, rules: Rules | None = None,
                 start: Position | None = None, max_turns: int = 10_000,
                 first_pair: int = 0,
                 progress: Callable[[int], None] | None = None) -> DuelResult:
    """:func:`duel` for any two :class:`~engine.play.players.Player` objects, in Python:
    the same dice streams, seats and rules, so it plays the kernel's games when the
    players choose as the kernel's do. Successors are offered in the move generator's
    order (the kernel's), each player asked only when there are two or more.
    ``progress(games_done)`` is called after every game."""
    rules = rules_for(variant, rules)
    n = _check_games(n_games)
    max_turns = _check_turns(max_turns)
    first_pair = _check_first_pair(first_pair)
    check_player(a, "player A", rules.variant, DuelError)
    check_player(b, "player B", rules.variant, DuelError)
    if progress is not None and not callable(progress):
        raise DuelError(f"progress = {quote(progress)}: expected None or a function")
    start_pos = start if start is not None else Position.start(rules.variant)
    position_state(start_pos, rules)          # a legal position of this game
    seeds = stream_states(seed, DICE_STREAM, first_pair, n // 2)
    players = (a, b)
    rows = np.zeros((n, N_COLUMNS), np.int64)
    st = np.empty(1, np.uint64)

    def kernel_order(pos, dice, rules):
        return [Position.from_array(x, rules.variant)
                for x in successor_arrays(pos, dice, rules, play=True)]

    def roll() -> tuple[int, int]:
        return int(die(st)), int(die(st))

    for g in range(n):
        half = g % 2
        st[0] = seeds[g // 2]
        d_a = d_b = 0
        while d_a == d_b:
            d_a, d_b = roll()
        first = 0 if d_a > d_b else 1
        rec = play(lambda mover, pos, dice: play_turn(players[mover ^ half], pos, dice,
                                                      rules, kernel_order),
                   rules, opening=(first, None if rules.opening_rolls_both else (d_a, d_b)),
                   roll=roll, start=start_pos, max_turns=max_turns, cut=True)
        rows[g, G_STARTER] = first ^ half
        rows[g, G_TURNS] = rec.turns
        if rec.cut:
            rows[g, G_WINNER] = WINNER_CUT
        elif rec.winner is None:
            rows[g, G_WINNER] = WINNER_DRAW
            rows[g, G_KIND] = int(rec.kind)
        else:
            won = rec.winner ^ half
            rows[g, G_WINNER] = won
            rows[g, G_KIND] = int(rec.kind)
            rows[g, G_POINTS] = rec.points if won == 0 else -rec.points
        if progress is not None:
            progress(g + 1)
    return DuelResult.from_rows(rules.variant, rows)
