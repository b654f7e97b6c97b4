"""A game from start to end: the opening roll, and playing it out between two players,
in Python and, for speed, in numba. When a game is over and what it scores is
:mod:`engine.rules.scoring`'s (:func:`~engine.rules.scoring.result`).

:func:`play_game` plays one game between two objects with a
``choose(position, dice, successors)`` method (:mod:`engine.play.players`), handling lost
turns and gul bara's pending segments. :func:`playouts` plays many games in one call of
the numba game loop (:mod:`engine.play.loop`), choosing uniformly among the successors
(or by PubEval) and checking every position it meets; the property tests and
benchmarks run thousands of games a second with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Sequence

import numpy as np

from engine.eval.pubeval import check_supported
from engine.movegen.generate import successors
from engine.play.loop import (
    ERRORS,
    G_ERROR,
    G_KIND,
    G_MAXSUCC,
    G_PENDING,
    G_POINTS,
    G_STARTER,
    G_TURNS,
    G_WINNER,
    KIND_PUBEVAL,
    KIND_RANDOM,
    N_META,
    game_args,
    new_games,
    play_games,
)
from engine.rules import _layout as L
from engine.rules._rng import rng_state
from engine.rules.dice import Dice, roll_one
from engine.rules.position import Position
from engine.rules.scoring import Kind, result, score_table
from engine.rules.variants import Rules, get_rules

if TYPE_CHECKING:  # pragma: no cover
    from engine.play.players import Player


# --------------------------------------------------------------------- opening
def opening_roll(rng: np.random.Generator, rules: Rules) -> tuple[int, Dice | None]:
    """Who starts, and with which dice.

    Each player throws one die (player 0 first), ties are thrown again; the higher die
    starts. In backgammon and portes he plays those two numbers (the returned
    :class:`Dice`); in the other games (``rules.opening_rolls_both``) he then rolls both
    dice himself, so None is returned and a double may open the game.
    """
    while True:
        a, b = roll_one(rng), roll_one(rng)
        if a != b:
            break
    starter = 0 if a > b else 1
    return starter, (None if rules.opening_rolls_both else Dice(a, b))


# --------------------------------------------------------------------- one game
@dataclass(frozen=True)
class GameRecord:
    """One finished game between player A (index 0) and player B (index 1)."""

    variant: str
    """The game played."""
    winner: int | None
    """0: player A won, 1: player B won, None: a draw."""
    points: int
    """Points won at cube value 1."""
    kind: Kind
    """How the game ended."""
    turns: int
    """Rolls played by both sides, lost turns and the opening turn included (gul bara
    pending segments are part of the turn that follows them, not turns of their own)."""
    starter: int
    """The player who won the opening roll."""
    positions: tuple | None = None
    """With ``record=True``: every position met, in order, each from its side to move
    (start, then after every turn or pending segment, the final one included)."""
    dice: tuple | None = None
    """With ``record=True``: ``dice[i]`` led from ``positions[i]`` to ``positions[i + 1]``
    (None for a pending segment)."""

    def points_for(self, player: int) -> int:
        """Signed score of ``player`` (0 = A, 1 = B)."""
        if self.winner is None:
            return 0
        return self.points if player == self.winner else -self.points


def play_turn(player, pos: Position, dice, rules: Rules | None = None) -> Position:
    """The position after ``player`` plays ``dice`` (None: a gul bara pending segment)
    from ``pos``; a turn with one legal successor is played without asking."""
    succ = successors(pos, None if dice is None else tuple(dice), rules)
    if len(succ) == 1:
        return succ[0]
    i = player.choose(pos, dice, succ)
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(succ):
        raise ValueError(f"player {player!r} chose {i!r}; expected an index "
                         f"0..{len(succ) - 1}")
    return succ[int(i)]


def play_game(player_a: "Player", player_b: "Player", rng: np.random.Generator,
              variant: str = "backgammon", rules: Rules | None = None, *,
              start: Position | None = None, record: bool = False,
              max_turns: int = 20000) -> GameRecord:
    """Play one game of ``variant`` (or of ``rules``, which then names the game).

    The opening roll picks who starts; ``start`` replaces the starting position (seen
    from the starter). A player is asked to choose only when a roll has two or more
    successors; a lost turn passes on its own. Gul bara's pending dice are played as a
    segment (``dice=None``) before the roll of the side that received them.
    ``max_turns`` guards against a game that never ends, raising :class:`RuntimeError`.
    """
    rules = rules or get_rules(variant)
    variant = rules.variant
    players = (player_a, player_b)
    starter, dice = opening_roll(rng, rules)
    pos = start if start is not None else Position.start(variant)
    mover = starter
    turns = 0
    seen: list[Position] = [pos] if record else []
    rolls: list = []

    def step(pos: Position, dice) -> Position:
        return play_turn(players[mover], pos, dice, rules)

    while True:
        over = result(pos, rules)
        if over is not None:
            break
        if turns >= max_turns:
            raise RuntimeError(f"{variant} game not over after {max_turns} turns at {pos!r}")
        if pos.pending:
            pos = step(pos, None)
            if record:
                seen.append(pos)
                rolls.append(None)
            over = result(pos, rules)
            if over is not None:
                break
        if dice is None:
            dice = Dice.roll(rng)
        pos = step(pos, dice)
        if record:
            seen.append(pos)
            rolls.append(dice)
        dice = None
        mover ^= 1
        turns += 1
    winner = None if over.winner is None else (mover if over.winner == 0 else mover ^ 1)
    return GameRecord(variant, winner, over.points, over.kind, turns, starter,
                      tuple(seen) if record else None, tuple(rolls) if record else None)


# --------------------------------------------------------------------- numba playouts
POLICY_RANDOM = KIND_RANDOM
"""Playout policy: every successor equally likely."""
POLICY_PUBEVAL = KIND_PUBEVAL
"""Playout policy: the successor PubEval scores highest (backgammon boards only)."""


class Step(NamedTuple):
    """One recorded position of a kernel playout and the roll played from it."""

    position: Position
    """The position, from its side to move."""
    dice: object
    """``(d1, d2)`` as rolled, None for a gul bara pending segment, ``"end"`` when the
    game is over."""
    mover: int
    """Player to move (0 = A, 1 = B)."""
    count: int
    """Number of successors the roll had (0 on the final position)."""
    state: np.ndarray
    """The raw kernel state, for round-trip checks against :meth:`Position.to_array`."""


@dataclass(frozen=True)
class PlayoutBatch:
    """Many games played by :func:`playouts`; arrays hold one entry per game."""

    variant: str
    """The game played."""
    winner: np.ndarray
    """0: player A won, 1: player B won, 2: a draw (-1 only alongside an error)."""
    points: np.ndarray
    """Points won at cube value 1."""
    kind: np.ndarray
    """:class:`Kind` codes."""
    turns: np.ndarray
    """Rolls played, lost turns included."""
    error: np.ndarray
    """0, or the first broken invariant met (a key of :data:`ERRORS`)."""
    max_successors: np.ndarray
    """Most successors of any roll in the game."""
    starter: np.ndarray
    """Player who won the opening roll."""
    pending_segments: np.ndarray
    """Gul bara pending segments played."""
    trajectories: list
    """For the first ``record_games`` games: a list of :class:`Step` per game."""

    def errors(self) -> list[str]:
        """One line per game that broke an invariant (empty when all were clean)."""
        return [f"game {g}: {ERRORS.get(int(e), e)}" for g, e in enumerate(self.error) if e]


def playouts(variant: str, n_games: int, rng: np.random.Generator, *,
             rules: Rules | None = None, policies: Sequence[int] = (POLICY_RANDOM,
                                                                     POLICY_RANDOM),
             start: Position | None = None, record_games: int = 0,
             record_rows: int = 20000, max_turns: int = 20000) -> PlayoutBatch:
    """Play ``n_games`` games in one call of the game loop
    (:func:`engine.play.loop.play_games`), checking every position met.

    ``policies`` gives player A's and B's POLICY_* code; PubEval needs a backgammon
    board. Dice and random choices come from one stream seeded from ``rng``; player A
    throws the first opening die. Every position met is checked (conservation, legal
    pins, pending dice, turn counters, a valid final score); failures are reported per
    game in ``error``, never raised, so a test can show them all. The first
    ``record_games`` games are recorded (``record_rows`` states at most).
    """
    rules = rules or get_rules(variant)
    variant = rules.variant
    policy = np.array(policies, dtype=np.int64)
    if policy.shape != (2,) or not np.isin(policy, (POLICY_RANDOM, POLICY_PUBEVAL)).all():
        raise ValueError(f"policies {policies!r}: expected two of POLICY_RANDOM / "
                         f"POLICY_PUBEVAL")
    if (policy == POLICY_PUBEVAL).any():
        check_supported(rules)
    start_pos = start if start is not None else Position.start(variant)
    games = new_games(n_games)
    rows = record_rows if record_games else 1
    rec = np.zeros((rows, L.STATE_LEN), dtype=np.int16)
    rec_meta = np.zeros((rows, N_META), dtype=np.int64)
    nrec = play_games(*game_args(start_pos.to_array(), rules.table(), score_table(rules),
                                 rules.opening_rolls_both, policy, games=games,
                                 st=rng_state(rng), max_turns=max_turns, check=True,
                                 rec=rec, rec_meta=rec_meta, rec_games=record_games))
    trajectories: list = [[] for _ in range(min(record_games, n_games))]
    for r in range(nrec):
        g, d1, d2, mover, count = (int(v) for v in rec_meta[r])
        dice = "end" if d1 < 0 else (None if d1 == 0 else (d1, d2))
        trajectories[g].append(Step(Position.from_array(rec[r], variant), dice, mover,
                                    count, rec[r].copy()))
    return PlayoutBatch(variant, games[:, G_WINNER], games[:, G_POINTS], games[:, G_KIND],
                        games[:, G_TURNS], games[:, G_ERROR], games[:, G_MAXSUCC],
                        games[:, G_STARTER], games[:, G_PENDING], trajectories)
