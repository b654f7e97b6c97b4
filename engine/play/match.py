"""Games with the cube, and matches of every game.

:func:`play_cube_game` plays one game in the one Python game loop
(:func:`engine.play.game.play`) with what :func:`engine.play.game.play_game` leaves
out: a cube (backgammon: doubles, takes and passes before a roll, the Jacoby rule in
money play, the Crawford game in a match) decided by two :class:`CubePolicy` objects,
and a chosen starter (in a match the previous game's winner starts the next one in the
nardy and tavli games, rolling both dice).

Matches:

* :func:`play_match` -- a match to N points of one game: backgammon with the cube and
  the Crawford rule, and portes (every game opens with the opening roll); plakoto,
  fevga, long nardy and gul bara (nardy to 3, 5 or 7 as the rules say; any length up to
  :data:`MAX_MATCH_LENGTH`), the previous game's winner starting the next;
* :func:`play_tavli_match` -- portes, plakoto and fevga in rotation until a player
  reaches the total, the winner of a game starting the next.

Players are numbered 0 (A) and 1 (B) throughout; cube states handed to the policies are
seen from the side on roll (:class:`engine.cube.decision.CubeState`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from engine.cube.computed_met import MAX_LENGTH
from engine.cube.decision import (
    CUBE_LIMIT,
    CubeState,
    ProbabilityFn,
)
from engine.cube.met import MatchEquityTable, MatchError
from engine.errors import quote
from engine.play.game import (
    CubeRules,
    GameRecord,
    check_max_turns,
    opening_roll,
    play,
    play_turn,
)
from engine.play.players import Player, check_players, check_rng
from engine.rules.dice import Dice
from engine.rules.position import Position
from engine.rules.variants import Rules, rules_for
from engine.search.bearoff_cube import cube_analysis

TAVLI_GAMES = ("portes", "plakoto", "fevga")
"""The tavli rotation, in order."""
MAX_GAMES = 100_000
"""Most games a match may be given (``max_games``)."""


def _is_int(x) -> bool:
    return not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, np.integer))


def _check_bool(value, name: str) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise MatchError(f"{name} = {quote(value)}: expected true or false")


def _check_callback(fn, name: str) -> None:
    if fn is not None and not callable(fn):
        raise MatchError(f"{name} = {quote(fn)}: expected None or a function")


def _check_policies(policies) -> tuple:
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence) \
            or len(policies) != 2:
        raise MatchError(f"cube_policies = {quote(policies)}: expected None or two cube "
                         f"policies (A's and B's)")
    for i, p in enumerate(policies):
        if not (callable(getattr(p, "double", None)) and callable(getattr(p, "take", None))):
            raise MatchError(f"cube_policies[{i}] = {quote(p)}: expected a CubePolicy (double "
                             f"and take methods)")
    return tuple(policies)


def _check_max_games(max_games) -> int:
    if not _is_int(max_games) or not 1 <= max_games <= MAX_GAMES:
        raise MatchError(f"max_games = {quote(max_games)}: expected an integer "
                         f"1..{MAX_GAMES}")
    return int(max_games)


# --------------------------------------------------------------------- cube policies
@runtime_checkable
class CubePolicy(Protocol):
    """Doubles and answers doubles. Both calls get the position before the roll of the
    side that may double and the :class:`CubeState` from that side's view."""

    def double(self, position: Position, state: CubeState) -> bool:
        """Whether the side on roll doubles (asked only when it may)."""
        ...

    def take(self, position: Position, state: CubeState) -> bool:
        """Whether the opponent of the side on roll takes its double."""
        ...

    # Optional: ``beaver(position, state) -> bool``, whether the opponent, having
    # taken, beavers (money play with beavers allowed); a policy without it never does.


class NoCube:
    """Never doubles, always takes: a cubeless player in a cubeful game."""

    def double(self, position, state) -> bool:
        return False

    def take(self, position, state) -> bool:
        return True

    def beaver(self, position, state) -> bool:
        return False

    def __repr__(self) -> str:
        return "NoCube()"


class DecisionCubePolicy:
    """Doubles and takes as :func:`engine.cube.decision.cube_decision` advises, from the cubeless
    probabilities ``probability_fn(position, ply)`` (the network at 0-ply, a search
    deeper)."""

    def __init__(self, probability_fn: ProbabilityFn, ply: int = 0,
                 efficiency: float | None = None, table: MatchEquityTable | None = None):
        if not callable(probability_fn):
            raise MatchError(f"probability_fn = {quote(probability_fn)}: expected a function "
                             f"(position, ply) -> cubeless probabilities")
        if not _is_int(ply) or ply < 0:
            raise MatchError(f"ply = {quote(ply)}: expected an integer 0 or more")
        if efficiency is not None and (isinstance(efficiency, (bool, np.bool_)) or not
                                       isinstance(efficiency, (int, float, np.number))
                                       or not 0 <= efficiency <= 1):
            raise MatchError(f"efficiency = {quote(efficiency)}: expected None or a number "
                             f"0..1")
        if table is not None and not isinstance(table, MatchEquityTable):
            raise MatchError(f"table = {quote(table)}: expected None or a MatchEquityTable")
        self.probability_fn = probability_fn
        """Cubeless probabilities of a position for its side to move."""
        self.ply = ply
        """Ply handed to ``probability_fn``."""
        self.efficiency = efficiency
        """Cube efficiency; None: the position's
        (:func:`engine.search.bearoff_cube.cube_efficiencies`)."""
        self.table = table
        """Match equity table; None: Kazaross-XG2."""

    def decide(self, position: Position, state: CubeState):
        """The decision (:func:`engine.search.bearoff_cube.cube_analysis`), with the
        opponent's free double in match play valued after our roll
        (:func:`engine.cube.decision.rolls_ahead`, at 0-ply); a short bear-off exact in
        money play, in a match at the table's efficiencies."""
        return cube_analysis(position, state, self.probability_fn, self.ply, self.efficiency,
                             table=self.table)

    def double(self, position, state) -> bool:
        return self.decide(position, state).doubles

    def take(self, position, state) -> bool:
        return self.decide(position, state).takes

    def beaver(self, position, state) -> bool:
        return self.decide(position, state).beavers

    def __repr__(self) -> str:
        return f"DecisionCubePolicy(ply={self.ply})"


# --------------------------------------------------------------------- one game
def play_cube_game(players: Sequence[Player], rng: np.random.Generator,
                   variant: str = "backgammon", rules: Rules | None = None, *,
                   cube_policies: Sequence[CubePolicy] | None = None,
                   match_length: int = 0, score: tuple = (0, 0), crawford: bool = False,
                   jacoby: bool = True, beavers: bool | None = None,
                   starter: int | None = None,
                   start: Position | None = None, max_cube: int | None = None,
                   max_turns: int = 20000, on_turn: Callable | None = None) -> GameRecord:
    """Play one game (:func:`engine.play.game.play`), with the cube when
    ``cube_policies`` are given (backgammon only).

    ``match_length`` 0 is money play (``jacoby`` applies, and ``beavers``, by default
    the rules' option: a player who takes may beaver, doubling the cube again and
    keeping it, when his policy's ``beaver`` says so); otherwise ``score`` (A, B)
    and ``crawford`` (this is the Crawford game: no cube) describe the match. With
    ``starter`` given that player starts and rolls both dice; otherwise the opening
    roll decides (and, in backgammon and portes, gives the first roll). ``max_cube``
    caps the cube (no limit when None); ``on_turn`` is :func:`engine.play.game.play`'s.
    """
    rules = rules_for(variant, rules)
    variant = rules.variant
    players = check_players(players, "players", variant, MatchError)
    check_rng(rng)
    check_max_turns(max_turns, MatchError)
    _check_callback(on_turn, "on_turn")
    if cube_policies is not None:
        if variant != "backgammon":
            raise MatchError(f"{variant} has no cube (backgammon only)")
        cube_policies = _check_policies(cube_policies)
    if starter is None:
        opening = opening_roll(rng, rules)
    elif _is_int(starter) and starter in (0, 1):
        opening = (int(starter), None)
    else:
        raise MatchError(f"starter = {quote(starter)}: expected 0, 1 or None")
    most = MAX_LENGTH if cube_policies is not None else MAX_MATCH_LENGTH
    if not _is_int(match_length) or not 0 <= match_length <= most:
        raise MatchError(f"match_length = {quote(match_length)}: expected an integer "
                         f"0..{most:,} (0: money play)"
                         + (" with the cube (the match equity tables' reach)"
                            if cube_policies is not None else ""))
    if isinstance(score, (str, bytes)) or not isinstance(score, Sequence) or len(score) != 2 \
            or not all(_is_int(x) and x >= 0 for x in score) \
            or (match_length and max(score) >= match_length):
        raise MatchError(f"score = {quote(score)}: expected two integers 0 or more (A, B)"
                         + (f", each below the match length {match_length}"
                            if match_length else ""))
    for name, flag in (("crawford", crawford), ("jacoby", jacoby)):
        _check_bool(flag, name)
    if beavers is not None:
        _check_bool(beavers, "beavers")
    if max_cube is not None and (not _is_int(max_cube) or not 2 <= max_cube <= CUBE_LIMIT
                                 or max_cube & (max_cube - 1)):
        raise MatchError(f"max_cube = {quote(max_cube)}: expected None or a power of two "
                         f"2..2**{CUBE_LIMIT.bit_length() - 1}")
    cube = None if cube_policies is None else CubeRules(
        cube_policies, match_length, tuple(int(x) for x in score), bool(crawford),
        bool(jacoby),
        (rules.beavers if beavers is None else beavers) and not match_length, max_cube)
    if crawford and not match_length:
        raise MatchError("crawford = True in money play (match_length 0): the Crawford "
                         "game is a match's")
    if cube is not None:
        cube.state(1, None, 0)       # a Crawford game at a score that has none: refused now
    def turn(mover: int, pos: Position, dice, state: CubeState | None = None) -> Position:
        return play_turn(players[mover], pos, dice, rules, cube=state)

    return play(turn, rules, opening=opening, roll=lambda: Dice.roll(rng), start=start,
                cube=cube, max_turns=max_turns, on_turn=on_turn,
                resign=resignations(players))


def resignations(players: Sequence) -> Callable | None:
    """:func:`engine.play.game.play`'s ``resign`` hook for two players that may resign:
    before each roll the side on roll's ``resign(position, cube_state) -> level`` (0:
    play on), when it has one, and, for a level, the opponent's
    ``accept_resignation(position, cube_state, level) -> bool`` (without one he
    declines); None when neither player has a ``resign`` method."""
    if not any(callable(getattr(p, "resign", None)) for p in players):
        return None

    def resign(mover: int, position: Position, state: CubeState | None) -> int:
        offer = getattr(players[mover], "resign", None)
        level = offer(position, state) if callable(offer) else 0
        if not level:
            return 0
        answer = getattr(players[1 - mover], "accept_resignation", None)
        return int(level) if callable(answer) and answer(position, state, level) else 0
    return resign


def play_money_game(players: Sequence[Player], cube_policies: Sequence[CubePolicy],
                    rng: np.random.Generator, *, jacoby: bool = True,
                    **kwargs) -> GameRecord:
    """One backgammon money game with the cube (see :func:`play_cube_game`)."""
    return play_cube_game(players, rng, "backgammon", cube_policies=cube_policies,
                          jacoby=jacoby, **kwargs)


# --------------------------------------------------------------------- matches
@dataclass(frozen=True)
class MatchGame:
    """One game of a match."""

    variant: str
    """The game played."""
    score_before: tuple
    """Score (A, B) before the game."""
    crawford: bool
    """The Crawford game (backgammon)."""
    record: GameRecord
    """The game itself."""


@dataclass(frozen=True)
class MatchRecord:
    """A finished match between A (0) and B (1)."""

    length: int
    """Points needed to win."""
    winner: int
    """0: A, 1: B."""
    score: tuple
    """Final score (A, B); the winner's is at least :attr:`length` (points beyond the
    total are counted as won, not capped)."""
    games: tuple = field(default_factory=tuple)
    """Every game, in order."""


MAX_MATCH_LENGTH = 10 ** 6
"""The longest match without a cube (nardy, plakoto, tavli ...); with the cube,
:data:`engine.cube.computed_met.MAX_LENGTH`, the match equity tables' reach."""


def _check_length(length, name: str = "length", cube: bool = False) -> None:
    most = MAX_LENGTH if cube else MAX_MATCH_LENGTH
    if not _is_int(length) or not 1 <= length <= most:
        raise MatchError(f"match {name} {quote(length)}: expected an integer "
                         f"1..{most:,}" + (" with the cube" if cube else ""))


def crawford_game(score, length: int, crawford_done: bool) -> bool:
    """Whether the next game of a match to ``length`` at ``score`` is its Crawford
    game: the first game after a player reaches ``length - 1`` (``crawford_done``: it
    was played already). Never with both players 1-away: a match to 1 has none
    (nobody reaches 0), and a longer one gets there only after it."""
    return (not crawford_done and length - 1 in score and score[0] != score[1]
            and max(score) < length)


def play_match(length: int, players: Sequence[Player], rng: np.random.Generator,
               variant: str = "backgammon", rules: Rules | None = None, *,
               cube_policies: Sequence[CubePolicy] | None = None,
               crawford_rule: bool = True, max_games: int = 10000,
               max_turns: int = 20000, on_turn: Callable | None = None,
               on_game: Callable | None = None) -> MatchRecord:
    """Play a match to ``length`` points of one game.

    Backgammon: with the cube when ``cube_policies`` are given; the first game after a
    player reaches ``length - 1`` is the Crawford game (no cube) when ``crawford_rule``;
    every game opens with the opening roll. Portes: no cube; every game opens with the
    opening roll, as in backgammon. Plakoto, fevga, long nardy, gul bara: no cube; the
    first game opens with the opening roll, each later one is started by the previous
    game's winner, who rolls both dice (after a draw, the opening roll again)
    (``docs/rules.md``, section 8). ``on_turn`` hears of every turn
    (:func:`engine.play.game.play`), ``on_game(game)`` of every :class:`MatchGame` when it
    ends.
    """
    _check_length(length, cube=cube_policies is not None)
    rules = rules_for(variant, rules)
    variant = rules.variant
    players = check_players(players, "players", variant, MatchError)
    check_rng(rng)
    max_games = _check_max_games(max_games)
    check_max_turns(max_turns, MatchError)
    _check_bool(crawford_rule, "crawford_rule")
    _check_callback(on_turn, "on_turn")
    _check_callback(on_game, "on_game")
    if cube_policies is not None:
        if variant != "backgammon":
            raise MatchError(f"{variant} has no cube (backgammon only)")
        cube_policies = _check_policies(cube_policies)
    score = [0, 0]
    crawford_done = False
    games: list = []
    starter: int | None = None
    for _ in range(max_games):
        crawford = (variant == "backgammon" and crawford_rule
                    and crawford_game(score, length, crawford_done))
        if crawford:
            crawford_done = True
        rec = play_cube_game(players, rng, variant, rules, cube_policies=cube_policies,
                             match_length=length, score=tuple(score), crawford=crawford,
                             starter=None if variant in ("backgammon", "portes") else starter,
                             max_turns=max_turns, on_turn=on_turn)
        games.append(MatchGame(variant, tuple(score), crawford, rec))
        if on_game is not None:
            on_game(games[-1])
        if rec.winner is not None:
            score[rec.winner] += rec.points
            starter = rec.winner
        else:
            starter = None
        if max(score) >= length:
            return MatchRecord(length, int(np.argmax(score)), tuple(score), tuple(games))
    raise RuntimeError(f"match to {length} not over after {max_games} games")


def play_tavli_match(target: int, players: Sequence[Player], rng: np.random.Generator, *,
                     games: Sequence[str] = TAVLI_GAMES, max_games: int = 10000,
                     max_turns: int = 20000, on_turn: Callable | None = None,
                     on_game: Callable | None = None) -> MatchRecord:
    """A tavli match: ``games`` (portes, plakoto, fevga) in rotation until a player
    reaches ``target`` points. The first game opens with the opening roll; the winner
    of each game starts the next, rolling both dice (after a draw, the opening roll).
    ``on_turn`` and ``on_game`` as for :func:`play_match`."""
    _check_length(target, "target")
    if isinstance(games, (str, bytes)) or not isinstance(games, Sequence) or not games \
            or not all(isinstance(g, str) and g in TAVLI_GAMES for g in games):
        raise MatchError(f"games = {quote(games)}: expected a non-empty sequence of "
                         f"{', '.join(TAVLI_GAMES)}")
    games = tuple(games)
    players = check_players(players, "players", None, MatchError)
    for g in set(games):                 # a player built for one game plays only it
        check_players(players, "players", g, MatchError)
    check_rng(rng)
    max_games = _check_max_games(max_games)
    check_max_turns(max_turns, MatchError)
    _check_callback(on_turn, "on_turn")
    _check_callback(on_game, "on_game")
    score = [0, 0]
    played: list = []
    starter: int | None = None
    for k in range(max_games):
        variant = games[k % len(games)]
        rec = play_cube_game(players, rng, variant, starter=starter, max_turns=max_turns,
                             on_turn=on_turn)
        played.append(MatchGame(variant, tuple(score), False, rec))
        if on_game is not None:
            on_game(played[-1])
        if rec.winner is not None:
            score[rec.winner] += rec.points
            starter = rec.winner
        else:
            starter = None
        if max(score) >= target:
            return MatchRecord(target, int(np.argmax(score)), tuple(score), tuple(played))
    raise RuntimeError(f"tavli match to {target} not over after {max_games} games")

