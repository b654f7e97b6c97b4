"""A game from start to end: the opening roll, and playing it out between two players,
in Python and, for speed, in numba. When a game is over and what it scores is
:mod:`engine.rules.scoring`'s (:func:`~engine.rules.scoring.result`).

:func:`play` is the one game loop in Python: turns, lost turns, gul bara's pending
segments and, in backgammon, the cube before a roll, with the dice and the choices
supplied by its caller. :func:`play_game` (two objects with a
``choose(position, dice, successors)`` method, :mod:`engine.play.players`),
:func:`engine.play.match.play_cube_game`, :func:`engine.play.duel.duel_players` and the
terminal game drive it. :func:`playouts` plays many games in one call of the numba game
loop (:mod:`engine.play.loop`), choosing uniformly among the successors (or by PubEval)
and checking every position it meets; the property tests and benchmarks run thousands
of games a second with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

import numpy as np

from engine.cube.decision import CUBE_LIMIT, CubeState
from engine.errors import NardyError, quote
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
from engine.play.players import check_player, check_rng
from engine.play.resign import Resigned, check_level, points as resign_points
from engine.rules import _layout as L
from engine.rules._rng import rng_state
from engine.rules.dice import Dice, roll_one
from engine.rules.position import Position
from engine.rules.scoring import Kind, result, score_table
from engine.rules.states import position_state
from engine.rules.variants import Rules, get_rules

if TYPE_CHECKING:  # pragma: no cover
    from engine.play.players import Player

MAX_TURNS = 100_000
"""Most rolls a game may be given before it is abandoned (``max_turns``): the loop keeps
a record row for each. Training's configuration takes the same bound from here."""


class GameError(NardyError):
    """A game that cannot be played: a bad player, generator, game or turn limit."""

    code = "invalid_game"


def check_max_turns(max_turns, error: type[NardyError] = NardyError) -> int:
    """``max_turns`` as an int in 1 .. :data:`MAX_TURNS`, else ``error``."""
    if isinstance(max_turns, (bool, np.bool_)) or not isinstance(
            max_turns, (int, np.integer)) or not 1 <= max_turns <= MAX_TURNS:
        raise error(f"max_turns = {quote(max_turns)}: expected an integer 1..{MAX_TURNS}")
    return int(max_turns)


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
    """0: player A won, 1: player B won, None: a draw (or a game cut at the turn limit)."""
    points: int
    """Points won: the result's points times the cube (a pass: the cube before the
    double; the Jacoby rule: a single while the cube was never turned)."""
    kind: Kind | None
    """How the game ended on the board; None when a double was passed or the game cut."""
    turns: int
    """Rolls played by both sides, lost turns and the opening turn included (gul bara
    pending segments are part of the turn that follows them, not turns of their own)."""
    starter: int
    """The player who moved first."""
    positions: tuple | None = None
    """With ``record=True``: every position met, in order, each from its side to move
    (start, then after every turn or pending segment, the final one included)."""
    dice: tuple | None = None
    """With ``record=True``: ``dice[i]`` led from ``positions[i]`` to ``positions[i + 1]``
    (None for a pending segment)."""
    cube_value: int = 1
    """Cube value at the end (before the refused double when passed)."""
    cube_owner: int | None = None
    """Who owned the cube at the end (None: centred)."""
    passed: bool = False
    """The game ended by a passed double."""
    doubles: tuple = ()
    """``(player, new value, taken)`` for every double offered, and a beaver as the
    taker's ``(player, value, True)`` right after it."""
    cut: bool = False
    """The game reached the turn limit unfinished (only with ``play(..., cut=True)``)."""
    resigned: int = 0
    """The game ended by the loser's resignation, accepted, at this level (1 single, 2
    gammon, 3 backgammon: :mod:`engine.play.resign`); 0 otherwise."""

    def points_for(self, player: int) -> int:
        """Signed score of ``player`` (0 = A, 1 = B)."""
        if self.winner is None:
            return 0
        return self.points if player == self.winner else -self.points


@dataclass(frozen=True)
class CubeRules:
    """How the cube is played in one backgammon game (:func:`play`)."""

    policies: Sequence
    """Two :class:`engine.play.match.CubePolicy` objects, A's and B's."""
    match_length: int = 0
    """0: money play; else the match's length."""
    score: tuple = (0, 0)
    """Match score (A, B) before the game."""
    crawford: bool = False
    """This is the Crawford game (no cube)."""
    jacoby: bool = True
    """Money play: gammons count single while the cube was never turned."""
    beavers: bool = False
    """Money play: a taker may beaver (double again, keeping the cube)."""
    max_cube: int | None = None
    """Highest cube value allowed (None: no limit)."""

    def state(self, value: int, owner: int | None, mover: int) -> CubeState:
        """The cube as ``mover`` sees it."""
        side = "centre" if owner is None else ("me" if owner == mover else "them")
        money = not self.match_length
        score = (0, 0) if money else (self.score[mover], self.score[1 - mover])
        return CubeState(value, side, self.match_length, score,
                         self.crawford and not money, self.jacoby and money,
                         self.beavers and money, self.max_cube)

    def allows(self, value: int) -> bool:
        """Whether the cube may reach ``value`` (never above
        :data:`engine.cube.decision.CUBE_LIMIT`)."""
        return value <= CUBE_LIMIT and (self.max_cube is None or value <= self.max_cube)


Turn = Callable[..., Position]
"""``turn(mover, position, dice)``: the position after ``mover`` (0 = A, 1 = B) plays
``dice`` (None: a gul bara pending segment) from ``position``; in a game with the cube
``turn(mover, position, dice, cube_state)``, the cube as the mover sees it
(:meth:`CubeRules.state`), so that a player may play for the score."""


def play_turn(player, pos: Position, dice, rules: Rules | None = None,
              moves: Callable[..., list] = successors,
              cube: CubeState | None = None) -> Position:
    """The position after ``player`` plays ``dice`` (None: a gul bara pending segment)
    from ``pos``, choosing among ``moves(pos, dice, rules)`` (by default every legal
    play, sorted by key); a turn with one legal successor is played without asking.
    Where the game has a cube (``cube``, the cube and score as the mover sees them) a
    player with a ``choose_with_cube(position, dice, successors, cube)`` method is
    asked that instead of ``choose``: it may rank the plays by cubeful equity."""
    succ = moves(pos, None if dice is None else tuple(dice), rules)
    if len(succ) == 1:
        return succ[0]
    with_cube = getattr(player, "choose_with_cube", None)
    if cube is not None and callable(with_cube):
        i = with_cube(pos, dice, succ, cube)
    else:
        i = player.choose(pos, dice, succ)
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(succ):
        raise ValueError(f"player {player!r} chose {i!r}; expected an index "
                         f"0..{len(succ) - 1}")
    return succ[int(i)]


def play(turn: Turn, rules: Rules, *, opening: tuple[int, Dice | None],
         roll: Callable[[], Dice], start: Position | None = None,
         cube: CubeRules | None = None, record: bool = False, max_turns: int = 20000,
         cut: bool = False, on_turn: Callable | None = None,
         resign: Callable | None = None) -> GameRecord:
    """The one game loop in Python, which every Python game drives: :func:`play_game`,
    :func:`engine.play.match.play_cube_game` (and so matches),
    :func:`engine.play.duel.duel_players` and the terminal game (:mod:`engine.cli.play`).

    ``opening`` is ``(starter, dice)`` (dice None: the starter rolls both dice, e.g. from
    :func:`opening_roll`); ``roll()`` gives every later roll; ``turn`` plays each turn
    and each gul bara pending segment (played before the roll of the side that received
    them). With ``cube`` (backgammon), the side on roll may double before rolling, as
    its policy says, and the other side takes, passes or beavers; ``turn`` then also
    gets the cube as the mover sees it (:data:`Turn`). ``max_turns`` guards
    against a game that never ends: :class:`RuntimeError`, or with ``cut`` a record
    with ``cut=True``. ``on_turn(mover, before, dice, after)``, when given, hears of
    every turn and pending segment as it is played (a board showing the game).

    Resignations (:mod:`engine.play.resign`): ``resign(mover, position, cube_state)``,
    when given, is asked before each roll (and its cube decision) whether the side on
    roll resigns and the opponent accepts: the level accepted, or 0 to play on. A
    turn or a cube policy may also raise :class:`engine.play.resign.Resigned` (a person
    who resigned at a prompt, accepted). Either ends the game: the opponent wins the
    level times the cube (a single game under the Jacoby rule while the cube was never
    turned), recorded as ``resigned``.
    """
    variant = rules.variant
    first, dice = opening
    max_turns = check_max_turns(max_turns)
    pos = start if start is not None else Position.start(variant)
    position_state(pos, rules)          # a legal position of this game (a backgammon
    #                                     start was played under plakoto's rules)
    mover = first
    turns = 0
    value, owner = 1, None
    doubles: list = []
    seen: list[Position] = [pos] if record else []
    rolls: list = []

    def done(**kw) -> GameRecord:
        return GameRecord(variant, turns=turns, starter=first,
                          positions=tuple(seen) if record else None,
                          dice=tuple(rolls) if record else None, cube_value=value,
                          cube_owner=owner, doubles=tuple(doubles), **kw)

    def played(before: Position, dice, after: Position) -> None:
        """A turn or pending segment played: heard, and recorded."""
        if on_turn is not None:
            on_turn(mover, before, dice, after)
        if record:
            seen.append(after)
            rolls.append(dice)

    def resigned(player: int, level: int) -> GameRecord:
        level = check_level(level, rules)
        state = None if cube is None else cube.state(value, owner, player)
        return done(winner=1 - player, points=resign_points(level, state), kind=None,
                    resigned=level)

    try:
        while True:
            over = result(pos, rules)
            if over is not None:
                break
            if turns >= max_turns:
                if cut:
                    return done(winner=None, points=0, kind=None, cut=True)
                raise RuntimeError(f"{variant} game not over after {max_turns} turns at {pos!r}")
            if pos.pending:
                before, pos = pos, turn(mover, pos, None)
                played(before, None, pos)
                over = result(pos, rules)
                if over is not None:
                    break
            if resign is not None:
                level = resign(mover, pos, None if cube is None
                               else cube.state(value, owner, mover))
                if level:
                    return resigned(mover, level)
            # the cube before a roll, never before the game's first (a starter given
            # instead of the opening roll)
            if cube is not None and dice is None and pos.turns != (0, 0):
                state = cube.state(value, owner, mover)
                if (state.can_double() and cube.allows(value * 2)
                        and cube.policies[mover].double(pos, state)):
                    taken = bool(cube.policies[1 - mover].take(pos, state))
                    doubles.append((mover, value * 2, taken))
                    if not taken:
                        return done(winner=mover, points=value, kind=None, passed=True)
                    value, owner = value * 2, 1 - mover
                    beaver = getattr(cube.policies[1 - mover], "beaver", None)
                    # the limit first: a beaver asked for is announced and recorded
                    if (state.beavers and beaver is not None and cube.allows(value * 2)
                            and beaver(pos, state)):
                        value *= 2                   # the taker keeps the cube
                        doubles.append((1 - mover, value, True))
            if dice is None:
                dice = roll()
            if cube is not None:
                before, pos = pos, turn(mover, pos, dice, cube.state(value, owner, mover))
            else:
                before, pos = pos, turn(mover, pos, dice)
            played(before, dice, pos)
            dice = None
            mover ^= 1
            turns += 1
    except Resigned as r:
        if r.player not in (0, 1):
            raise ValueError(f"Resigned by player {r.player!r}: expected 0 or 1") from None
        return resigned(r.player, r.level)
    points = over.points
    if (cube is not None and not cube.match_length and cube.jacoby and owner is None
            and over.winner is not None):
        points = 1
    winner = None if over.winner is None else (mover if over.winner == 0 else mover ^ 1)
    return done(winner=winner, points=points * value, kind=over.kind)


def play_game(player_a: "Player", player_b: "Player", rng: np.random.Generator,
              variant: str = "backgammon", rules: Rules | None = None, *,
              start: Position | None = None, record: bool = False,
              max_turns: int = 20000) -> GameRecord:
    """Play one cubeless game of ``variant`` (or of ``rules``, which then names the game)
    with dice from ``rng`` (:func:`play`).

    The opening roll picks who starts; ``start`` replaces the starting position (seen
    from the starter). A player is asked to choose only when a roll has two or more
    successors; a lost turn passes on its own.
    """
    if rules is not None and not isinstance(rules, Rules):
        raise GameError(f"rules = {quote(rules)}: expected None or a Rules")
    rules = rules or get_rules(variant)
    check_player(player_a, "player_a", rules.variant, GameError)
    check_player(player_b, "player_b", rules.variant, GameError)
    players = (player_a, player_b)
    check_rng(rng)
    check_max_turns(max_turns, GameError)
    return play(lambda mover, pos, dice: play_turn(players[mover], pos, dice, rules),
                rules, opening=opening_roll(rng, rules), roll=lambda: Dice.roll(rng),
                start=start, record=record, max_turns=max_turns)


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
