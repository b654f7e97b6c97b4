"""A game from start to end: when it is over, what it scores, the opening roll, and
playing it out between two players, in Python and, for speed, in numba.

The engine's positions are always seen from the side to move, so :func:`result` names
the winner relative to the position it is given: in a successor the side to move is
the side that did **not** just move, the loser when that move ended the game. The
scores follow ``docs/rules.md`` and are read from the :class:`~engine.rules.variants.Rules`
fields, never from a game's name (``backgammon_triple``, ``koks``, ``home_mars``,
``mother``). The cube multiplies the score a layer above; :func:`result` gives the
score at cube value 1 (Jacoby likewise is the money-play layer's business).

:func:`play_game` plays one game between two objects with a
``choose(position, dice, successors)`` method (:mod:`engine.play.players`), handling lost
turns and gul bara's pending segments. :func:`playouts` plays many games inside one
numba kernel, choosing uniformly among the successors of
:func:`engine.movegen._core.generate` (or by PubEval), checking every position it meets;
the property tests and benchmarks run thousands of games a second with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Sequence

import numpy as np

from engine._jit import njit
from engine.eval.pubeval import (
    _best_successor,
    _is_race,
    check_supported,
    weights as _pubeval_weights,
)
from engine.movegen._core import PLAY_BEAM, SCRATCH_LEN, generate_turn
from engine.movegen.generate import successors
from engine.rules import _layout as L
from engine.rules._rng import below, die, rng_state
from engine.rules.dice import Dice, roll_one
from engine.rules.position import CHECKERS, Position
from engine.rules.scoring import (
    S_HOME_MARS,
    S_KOKS,
    S_MOTHER,
    S_TRIPLE,
    Kind,
    result,
    result_k,
    score_table,
)
from engine.rules.variants import (
    CASCADE_GAME,
    CASCADE_NONE,
    MOTHER_DEFERRED,
    PIN,
    T_BAR,
    T_CASCADE,
    T_MEET,
    T_OPP,
    Rules,
    get_rules,
)

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
# error codes of the checking kernels
ERRORS = {
    1: "a side's checkers (board + bar + off) do not add up to 15",
    2: "a negative checker count",
    3: "a checker on the bar in a game without hitting",
    4: "a pin flag that is not 0/1, or outside plakoto, or on an empty / uncovered point",
    5: "checkers of both sides on one point without exactly one pinned single",
    6: "pending dice outside gul bara, out of 1..6, or not the unplayed tail of the cascade",
    7: "scratch fields or unused slots not cleared",
    8: "turn counters not advanced as docs/rules.md says",
    9: "a roll with no successor (a lost turn must give exactly one)",
    10: "the game did not end within max_turns",
    11: "both sides have borne off all 15",
    12: "an impossible score for this game",
}


@njit(cache=True)
def _check_state(s, table):
    """0 when state ``s`` is a legal position for the rules table, else an ERRORS code
    (the kernel twin of :meth:`Position.check`, plus the array's own invariants)."""
    meet = table[T_MEET]
    for side in (L.ME, L.THEM):
        total = 0
        for i in range(26):
            if s[side + i] < 0:
                return 2
            total += s[side + i]
        if total != CHECKERS:
            return 1
        if s[side + L.BAR] != 0 and table[T_BAR] == 0:
            return 3
    if s[L.ME + L.OFF] == CHECKERS and s[L.THEM + L.OFF] == CHECKERS:
        return 11
    for pin in (L.PIN_ME, L.PIN_THEM):
        if s[pin] != 0 or s[pin + 25] != 0:
            return 4
    for p in range(1, 25):
        q = table[T_OPP + p]
        mine = s[L.ME + p]
        theirs = s[L.THEM + q]
        pm = s[L.PIN_ME + p]
        pt = s[L.PIN_THEM + q]
        if pm < 0 or pm > 1 or pt < 0 or pt > 1:
            return 4
        if (pm or pt) and meet != PIN:
            return 4
        if mine and theirs:
            if meet != PIN or pm == pt:
                return 5
            if (pm and mine != 1) or (pt and theirs != 1):
                return 5
        elif pm or pt:
            return 4
    npend = s[L.NPEND]
    if npend < 0 or npend > L.MAXPEND or (npend and table[T_CASCADE] == CASCADE_NONE):
        return 6
    for k in range(L.MAXPEND):
        d = s[L.PEND + k]
        if k < npend:
            if d < 1 or d > 6:
                return 6
        elif d != 0:
            return 7
    for i in range(L.KEY_LEN, L.STATE_LEN):
        if s[i] != 0:
            return 7
    if s[L.TURNS_ME] < 0 or s[L.TURNS_THEM] < 0:
        return 8
    return 0


@njit(cache=True)
def _check_pending(before, after, d, table):
    """0 when the pending dice of ``after`` (from a roll ``d-d`` or a non-double, d = 0)
    can be what gul bara's cascade left unplayed, else ERRORS code 6."""
    n = after[L.NPEND]
    if n == 0:
        return 0
    casc = table[T_CASCADE]
    if d == 0 or casc == CASCADE_NONE:
        return 6
    if casc == CASCADE_GAME:
        on = before[L.TURNS_ME] + before[L.TURNS_THEM] >= 3
    else:
        on = before[L.TURNS_ME] >= 3
    if not on:
        return 6
    # a tail of d,d,d,d, d+1 x4, ..., 6 x4: nondecreasing, ends in 6, the first value
    # at most four times, every later value exactly four times
    if after[L.PEND + n - 1] != 6:
        return 6
    first = after[L.PEND]
    if first < d:
        return 6
    k = 0
    while k < n and after[L.PEND + k] == first:
        k += 1
    if k > 4:
        return 6
    v = first
    while k < n:
        v += 1
        for _ in range(4):
            if k >= n or after[L.PEND + k] != v:
                return 6
            k += 1
    return 0


@njit(cache=True)
def _valid_score(kind, points, sc, meet):
    """Whether ``(kind, points)`` is a score the scoring settings allow."""
    if kind == 1:
        return points == 1
    if kind == 2:
        return points == 2
    if kind == 3:
        return points == 3 and sc[S_TRIPLE] != 0
    if kind == 4:
        return points == 3 and sc[S_KOKS] != 0
    if kind == 5:
        return points == 4 and sc[S_HOME_MARS] != 0
    if kind == 6:
        return points == 2 and meet == PIN and sc[S_MOTHER] != 0
    if kind == 7:
        return points == 0 and sc[S_MOTHER] == MOTHER_DEFERRED
    return False


POLICY_RANDOM = 0
"""Kernel policy: every successor equally likely."""
POLICY_PUBEVAL = 1
"""Kernel policy: the successor PubEval scores highest (backgammon boards only)."""

# columns of the per-game statistics
G_WINNER, G_POINTS, G_KIND, G_TURNS, G_ERROR, G_MAXSUCC, G_STARTER, G_PENDING = range(8)
N_STATS = 8


# Not cached on purpose: numba's cache does not notice when a called function in another
# file (the move generator) changes, so a cached copy could keep a stale ``generate``.
@njit
def _playout(start, table, sc, rolls_both, n_games, st, policy, pw, max_turns,
             stats, rec, rec_meta, rec_games):
    """Play ``n_games`` games from ``start``, checking every position met.

    ``policy[player]`` is a POLICY_* code for player 0 (A) and 1 (B). Writes one row of
    ``stats`` per game (G_* columns; winner 0 = A, 1 = B, 2 = draw) and, for the first
    ``rec_games`` games, every state met into ``rec`` with ``rec_meta`` rows
    ``(game, d1, d2, mover, count)`` naming the roll played from it (0, 0 for a pending
    segment; -1, -1 on the final state) and its number of successors. Returns the
    number of recorded rows.
    """
    out = np.empty((64, L.STATE_LEN), np.int16)
    scratch = np.zeros(SCRATCH_LEN, np.int64)
    s = np.empty(L.STATE_LEN, np.int16)
    nrec = 0
    meet = table[T_MEET]
    for g in range(n_games):
        s[:] = start
        while True:
            a = die(st)
            b = die(st)
            if a != b:
                break
        mover = 0 if a > b else 1
        stats[g, G_STARTER] = mover
        opening = not rolls_both
        turns = 0
        err = _check_state(s, table)
        maxsucc = 0
        npending = 0
        winner, points, kind = result_k(s, sc)
        while err == 0 and winner < 0:
            if turns >= max_turns:
                err = 10
                break
            segment = s[L.NPEND] > 0
            if segment:
                d1 = 0
                d2 = 0
                npending += 1
            elif opening:
                d1 = a
                d2 = b
                opening = False
            else:
                d1 = die(st)
                d2 = die(st)
            recorded = g < rec_games and nrec < rec.shape[0]
            if recorded:
                rec[nrec] = s
                rec_meta[nrec, 0] = g
                rec_meta[nrec, 1] = d1
                rec_meta[nrec, 2] = d2
                rec_meta[nrec, 3] = mover
                nrec += 1
            n, out = generate_turn(s, d1, d2, table, scratch, out, PLAY_BEAM)
            if recorded:
                rec_meta[nrec - 1, 4] = n
            if n <= 0:
                err = 9
                break
            if n > maxsucc:
                maxsucc = n
            if n == 1:
                i = 0
            elif policy[mover] == POLICY_PUBEVAL and not segment:
                i = _best_successor(out, n, _is_race(s), pw)
            else:
                i = below(st, n)
            nxt = out[i]
            err = _check_state(nxt, table)
            if err != 0:
                s[:] = nxt
                break
            if segment:
                if (nxt[L.NPEND] != 0 or nxt[L.TURNS_ME] != s[L.TURNS_ME]
                        or nxt[L.TURNS_THEM] != s[L.TURNS_THEM]):
                    err = 8
            else:
                if nxt[L.TURNS_ME] != s[L.TURNS_THEM] or nxt[L.TURNS_THEM] != s[L.TURNS_ME] + 1:
                    err = 8
                if err == 0:
                    err = _check_pending(s, nxt, d1 if d1 == d2 else 0, table)
                mover ^= 1
                turns += 1
            s[:] = nxt
            winner, points, kind = result_k(s, sc)
        if err == 0 and not _valid_score(kind, points, sc, meet):
            err = 12
        if g < rec_games and nrec < rec.shape[0]:
            rec[nrec] = s
            rec_meta[nrec, 0] = g
            rec_meta[nrec, 1] = -1
            rec_meta[nrec, 2] = -1
            rec_meta[nrec, 3] = mover
            nrec += 1
        if winner == 2:
            stats[g, G_WINNER] = 2
        elif winner >= 0:
            stats[g, G_WINNER] = mover if winner == 0 else 1 - mover
        else:
            stats[g, G_WINNER] = -1
        stats[g, G_POINTS] = points
        stats[g, G_KIND] = kind
        stats[g, G_TURNS] = turns
        stats[g, G_ERROR] = err
        stats[g, G_MAXSUCC] = maxsucc
        stats[g, G_PENDING] = npending
    return nrec


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
    """Play ``n_games`` games in one numba kernel; see :func:`_playout`.

    ``policies`` gives player A's and B's POLICY_* code; PubEval needs a backgammon
    board. Every position met is checked (conservation, legal pins, pending dice, turn
    counters, a valid final score); failures are reported per game in ``error``, never
    raised, so a test can show them all.
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
    stats = np.zeros((n_games, N_STATS), dtype=np.int64)
    rows = record_rows if record_games else 1
    rec = np.zeros((rows, L.STATE_LEN), dtype=np.int16)
    rec_meta = np.zeros((rows, 5), dtype=np.int64)
    nrec = _playout(start_pos.to_array(), rules.table(), score_table(rules),
                    rules.opening_rolls_both, n_games, rng_state(rng), policy,
                    _pubeval_weights(), max_turns, stats, rec, rec_meta, record_games)
    trajectories: list = [[] for _ in range(min(record_games, n_games))]
    for r in range(nrec):
        g, d1, d2, mover, count = (int(v) for v in rec_meta[r])
        dice = "end" if d1 < 0 else (None if d1 == 0 else (d1, d2))
        trajectories[g].append(Step(Position.from_array(rec[r], variant), dice, mover,
                                    count, rec[r].copy()))
    return PlayoutBatch(variant, stats[:, G_WINNER], stats[:, G_POINTS], stats[:, G_KIND],
                        stats[:, G_TURNS], stats[:, G_ERROR], stats[:, G_MAXSUCC],
                        stats[:, G_STARTER], stats[:, G_PENDING], trajectories)
