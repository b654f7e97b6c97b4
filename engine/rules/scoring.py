"""How a game ends and what it scores: the kinds of ending, the points of each, and the
five outputs a finished game is worth (the network's targets), in Python and in numba.

The engine's positions are always seen from the side to move, so :func:`result` names
the winner relative to the position it is given: in a successor the side to move is
the side that did **not** just move, the loser when that move ended the game. The
scores follow ``docs/rules.md`` and are read from the :class:`~engine.rules.variants.Rules`
fields, never from a game's name (``backgammon_triple``, ``koks``, ``home_mars``,
``mother``). The cube multiplies the score a layer above; :func:`result` gives the
score at cube value 1 (Jacoby likewise is the money-play layer's business).

The five outputs (:data:`OUTPUTS`) are, for the side to move: win, win a gammon, win a
backgammon, lose a gammon, lose a backgammon (the gammon outputs include backgammons).
Cubeless money equity is ``2 win - 1 + wg - lg + wbg - lbg`` (:func:`equity`). Seen from
the other side the same numbers are ``1 - win, lg, lbg, wg, wbg`` (:func:`flip_probs`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from engine._jit import njit
from engine.errors import PositionError
from engine.rules import _layout as L
from engine.rules.position import CHECKERS, Position
from engine.rules.variants import (
    MOTHER_DEFERRED,
    MOTHER_IMMEDIATE,
    Rules,
    get_rules,
    race_geometry,
)


class Kind(enum.IntEnum):
    """How a game ended; the value is also the code the numba kernels use."""

    SINGLE = 1
    """The loser bore off at least one checker (backgammon single, nardy *oyn*): 1."""
    GAMMON = 2
    """The loser bore off none (gammon, nardy *mars*, plakoto / fevga / portes double): 2."""
    BACKGAMMON = 3
    """Backgammon: a gammon with a loser's checker on the bar or in the winner's home: 3."""
    KOKS = 4
    """Nardy option: mars with a loser's checker still in his first quarter (19-24): 3."""
    HOME_MARS = 5
    """Nardy option: mars with all the loser's checkers in his home (1-6): 4."""
    MOTHER = 6
    """Plakoto: the mother (the last checker on its owner's point 24) pinned: 2."""
    DRAW = 7
    """Plakoto deferred-mother option: both mothers pinned: 0."""


@dataclass(frozen=True)
class GameResult:
    """The end of a game, relative to the position it was read from."""

    winner: int | None
    """0: the side to move of that position won; 1: its opponent won; None: a draw."""
    points: int
    """Points won, at cube value 1."""
    kind: Kind
    """How the game ended."""

    def points_for(self, side: int) -> int:
        """Signed score for ``side`` (0 side to move, 1 opponent): +points, -points or 0."""
        if self.winner is None:
            return 0
        return self.points if side == self.winner else -self.points

    def flip(self) -> "GameResult":
        """The same result seen from the other side (as :meth:`Position.flip`)."""
        return GameResult(None if self.winner is None else 1 - self.winner,
                          self.points, self.kind)


_POINTS = {Kind.SINGLE: 1, Kind.GAMMON: 2, Kind.BACKGAMMON: 3, Kind.KOKS: 3,
           Kind.HOME_MARS: 4, Kind.MOTHER: 2, Kind.DRAW: 0}

_KIND_WORDS = {
    "backgammon": {Kind.SINGLE: "a single game", Kind.GAMMON: "a gammon",
                   Kind.BACKGAMMON: "a backgammon"},
    "long_nardy": {Kind.SINGLE: "oyn", Kind.GAMMON: "mars", Kind.KOKS: "koks",
                   Kind.HOME_MARS: "home mars"},
    "plakoto": {Kind.MOTHER: "the mother pinned"},
}
_KIND_WORDS["gul_bara"] = _KIND_WORDS["long_nardy"]


def kind_words(variant: str, kind: Kind) -> str:
    """How a game of ``variant`` ended (``kind``), in that game's own words for people:
    backgammon's gammon, nardy's mars, the tavli games' double game."""
    if kind == Kind.DRAW:
        return "a draw"
    return _KIND_WORDS.get(variant, {}).get(kind) or (
        "a single game" if kind == Kind.SINGLE else "a double game")


# packed scoring settings for the kernels
S_TRIPLE, S_KOKS, S_HOME_MARS, S_MOTHER, S_RACES, S_CASCADE = range(6)
N_SCORE_FIELDS = 6


def score_table(rules: Rules) -> np.ndarray:
    """The scoring fields of ``rules`` packed as ``int64[6]`` for :func:`result_k` and
    the evaluator: the triple game, koks, home mars, the mother checker, whether its
    races are backgammon's (:func:`engine.rules.variants.race_geometry`: backgammon,
    portes), whose turns the sanity check counts, and gul bara's cascade setting
    (``CASCADE_NONE`` elsewhere), which says when a home race's doubles cascade (the
    bear-off tables value such a race only once they all do)."""
    return np.array([int(rules.backgammon_triple), int(rules.koks), int(rules.home_mars),
                     rules.mother, int(race_geometry(rules)), rules.cascade],
                    dtype=np.int64)


def result(position: Position, rules: Rules | None = None) -> GameResult | None:
    """Whether ``position`` is a finished game, and its score; None while it goes on.

    The plain-Python reference; :func:`result_k` is the kernel twin checked against it.
    """
    rules = rules or get_rules(position.variant)
    mother = position.mother_end(rules)
    if mother == -1:
        return GameResult(None, 0, Kind.DRAW)
    if mother is not None:
        return GameResult(mother, 2, Kind.MOTHER)
    if position.off[1] == CHECKERS:
        winner, board, bar, off = 1, position.me, position.bar[0], position.off[0]
    elif position.off[0] == CHECKERS:
        winner, board, bar, off = 0, position.them, position.bar[1], position.off[1]
    else:
        return None
    kind = Kind.SINGLE
    if off == 0:
        kind = Kind.GAMMON
        back = bar > 0 or any(board[18:24])          # loser's points 19..24 or the bar
        if rules.backgammon_triple and back:
            kind = Kind.BACKGAMMON
        if rules.koks and any(board[18:24]):
            kind = Kind.KOKS
        if rules.home_mars and bar == 0 and not any(board[6:24]):
            kind = Kind.HOME_MARS
    return GameResult(winner, _POINTS[kind], kind)


def check_game_on(position: Position, rules: Rules | None = None) -> None:
    """Raise :class:`engine.errors.PositionError` when ``position`` is a finished game
    (:func:`result`): it has no plays to list or rate, and no roll to play."""
    done = result(position, rules)
    if done is None:
        return
    if done.winner is None:
        how = kind_words(position.variant, done.kind)         # "a draw"
    else:
        who = "the side to move" if done.winner == 0 else "the opponent"
        how = (f"won by {who} with {kind_words(position.variant, done.kind)}, "
               f"{done.points} point{'' if done.points == 1 else 's'}")
    raise PositionError(f"the game is over ({how}): a finished position has no plays")


@njit(cache=True, _nrt=False)
def result_k(s, sc):
    """Kernel twin of :func:`result` on a state: ``(winner, points, kind)`` with winner
    -1 while the game goes on, 0 / 1 as in :class:`GameResult`, 2 for a draw."""
    mother = sc[S_MOTHER]
    if mother == MOTHER_IMMEDIATE:
        if s[L.PIN_ME + 24]:
            return 1, 2, 6
        if s[L.PIN_THEM + 24]:
            return 0, 2, 6
    elif mother == MOTHER_DEFERRED:
        mine = s[L.PIN_ME + 24] != 0
        theirs = s[L.PIN_THEM + 24] != 0
        if mine and theirs:
            return 2, 0, 7
        if mine and s[L.THEM + 24] == 0:
            return 1, 2, 6
        if theirs and s[L.ME + 24] == 0:
            return 0, 2, 6
    if s[L.THEM + L.OFF] == CHECKERS:
        winner = 1
        loser = L.ME
    elif s[L.ME + L.OFF] == CHECKERS:
        winner = 0
        loser = L.THEM
    else:
        return -1, 0, 0
    if s[loser + L.OFF] > 0:
        return winner, 1, 1
    back = False
    for p in range(19, 25):
        if s[loser + p] > 0:
            back = True
    kind = 2
    if sc[S_TRIPLE] and (back or s[loser + L.BAR] > 0):
        kind = 3
    if sc[S_KOKS] and back:
        kind = 4
    if sc[S_HOME_MARS] and s[loser + L.BAR] == 0:
        home = True
        for p in range(7, 25):
            if s[loser + p] > 0:
                home = False
        if home:
            kind = 5
    points = 2
    if kind == 3 or kind == 4:
        points = 3
    elif kind == 5:
        points = 4
    return winner, points, kind


# --------------------------------------------------------------------- the five outputs
OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
"""The five outputs, for the side to move."""
N_OUTPUTS = len(OUTPUTS)


@njit(cache=True, inline="always")
def equity(o):
    """Cubeless money equity of outputs ``o`` for their side to move."""
    return 2.0 * o[0] - 1.0 + o[1] - o[3] + o[2] - o[4]


@njit(cache=True, inline="always")
def points_probs(winner, points, o):
    """The five outputs of a finished game for the side to move: ``winner`` as
    :func:`engine.play.game.result_k` gives it (0 it won, 1 it lost, 2 a draw) and the
    points at stake. 2 points set the gammon output (a gammon, nardy's mars, plakoto's
    mother, the double game of portes and fevga), 3 or more the backgammon output too
    (backgammon, koks; home mars, 4 points, is valued as 3 by the equity). A draw is
    half a win."""
    for k in range(N_OUTPUTS):
        o[k] = 0.0
    if winner == 0:
        o[0] = 1.0
        o[1] = 1.0 if points >= 2 else 0.0
        o[2] = 1.0 if points >= 3 else 0.0
    elif winner == 1:
        o[3] = 1.0 if points >= 2 else 0.0
        o[4] = 1.0 if points >= 3 else 0.0
    elif winner == 2:
        o[0] = 0.5


@njit(cache=True)
def result_probs(s, sc, o):
    """If ``s`` is a finished game, write its exact outputs for the side to move into
    ``o`` and return True; else False. ``sc`` is the game's score table
    (:func:`engine.rules.scoring.score_table`), the rules are :func:`engine.play.game.result_k`'s."""
    winner, points, kind = result_k(s, sc)
    if winner < 0:
        return False
    points_probs(winner, points, o)
    return True


@njit(cache=True, inline="always")
def flip_probs_into(v, w):
    """Outputs ``v`` for the other side, into ``w`` (the kernels' :func:`flip_probs`)."""
    w[0] = 1.0 - v[0]
    w[1] = v[3]
    w[2] = v[4]
    w[3] = v[1]
    w[4] = v[2]


def flip_probs(p: np.ndarray) -> np.ndarray:
    """The outputs for the other side: ``1 - win, lg, lbg, wg, wbg`` (last axis)."""
    p = np.asarray(p)
    return np.stack([1 - p[..., 0], p[..., 3], p[..., 4], p[..., 1], p[..., 2]], axis=-1)


def equities(probs: np.ndarray) -> np.ndarray:
    """Cubeless money equity of outputs (last axis 5)."""
    p = np.asarray(probs, dtype=np.float64)
    return 2 * p[..., 0] - 1 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]
