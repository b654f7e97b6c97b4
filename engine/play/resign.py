"""Resignations, as GNU Backgammon plays them: the side on roll gives the game up for a
single game, a gammon or a backgammon (``level`` 1, 2 or 3: that many times the cube;
in the nardy and tavli games their single game, double game or mars, and long nardy's
koks), and the opponent accepts, ending the game at that score, or declines, and the
game goes on.

* :func:`offer` -- whether a side should resign, and at which level: GNU Backgammon's
  ``getResignation``. The side's cubeless chances are valued at the score (money
  points, or in a match the match winning chance after each result); it resigns a
  backgammon when it is sure to lose one and playing on is worth exactly that, else a
  gammon when it is sure to lose one (a backgammon escaped) and playing on is worth
  exactly that, else a single game when playing on is worth exactly that (no chance to
  win anything it counts). With the bear-off tables' exact chances that is a lost race;
  a network's estimate is seldom within :data:`TOLERANCE` of 0 or 1 (a race network's
  2.4e-11 in a lost race is), so the engine seldom resigns where it merely judges the
  game lost.
* :func:`accepts` -- whether the opponent accepts a resignation: when resigning is worth
  no more to the resigner than playing on, both valued as :func:`offer` values them
  (his cubeless chances at the score, gammons counting as the score and the Jacoby rule
  make them count): GNU Backgammon's rule (``getResignEquities``, which its play and its
  external player both answer by). After the resigner's roll, his chances are those of
  his best play of it.

The points a resignation gives are :func:`points`: the level times the cube, but a
single game under the Jacoby rule while the cube is centred in money play (gammons
count for nothing there). A player whose resignation is accepted in the middle of a
turn (a person at a prompt) raises :class:`Resigned`, which
:func:`engine.play.game.play` turns into the game's end.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from engine.cube.decision import CubeState
from engine.cube.met import default_table
from engine.errors import NardyError, quote
from engine.rules.scoring import Kind, kind_words
from engine.rules.variants import Rules

TOLERANCE = 1e-9
"""Two values closer than this are equal (GNU Backgammon compares floats exactly; the
chances here are float32 network outputs or exact tables)."""


class ResignationError(NardyError):
    """A resignation that cannot be offered: a level outside the game's."""

    code = "invalid_resignation"


class Resigned(Exception):
    """Raised by a player whose resignation the opponent accepted, from wherever the
    game asked it (a play, a cube decision): :func:`engine.play.game.play` ends the game
    there, the opponent winning :func:`points`."""

    def __init__(self, player: int, level: int):
        super().__init__(f"player {player} resigned at level {level}, accepted")
        self.player = player
        """The resigner (0 = A, 1 = B)."""
        self.level = level
        """1, 2 or 3 (:func:`most`)."""


def most(rules: Rules) -> int:
    """The highest level a resignation of ``rules``' game may offer: 3 where the game
    scores a triple (backgammon's backgammon, long nardy's koks), else 2 (gul bara's
    home mars, 4 points, is not offered)."""
    return 3 if rules.backgammon_triple or rules.koks else 2


def check_level(level, rules: Rules) -> int:
    """``level`` as an int 1 .. :func:`most`, else :class:`ResignationError`."""
    top = most(rules)
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, np.integer)) \
            or not 1 <= level <= top:
        raise ResignationError(f"resignation level {quote(level)}: expected 1 (single), "
                               f"2 ({words(2, rules.variant)})"
                               + (f" or 3 ({words(3, rules.variant)})" if top == 3 else "")
                               + f" in {rules.variant}")
    return int(level)


def words(level: int, variant: str) -> str:
    """A level in the game's own words (``a gammon``, ``a mars``, ``a koks``)."""
    kind = {1: Kind.SINGLE, 2: Kind.GAMMON,
            3: Kind.KOKS if variant == "long_nardy" else Kind.BACKGAMMON}[level]
    return kind_words(variant, kind)


def jacoby_single(state: CubeState | None) -> bool:
    """Whether a gammon counts single here: money play under the Jacoby rule with the
    cube centred."""
    return state is not None and state.money and state.jacoby and state.owner == "centre"


def points(level: int, state: CubeState | None) -> int:
    """What a resignation at ``level`` gives the opponent: ``level`` times the cube (1
    without a cube), a single game under :func:`jacoby_single`."""
    value = 1 if state is None else state.value
    return (1 if jacoby_single(state) else level) * value


def _outcome(state: CubeState | None, top: int = 3) -> Callable[[int], float]:
    """The resigner's value of winning ``k`` times the cube (``-k``: losing), ``|k|``
    at most ``top`` (a game without a triple scores its backgammon as a gammon): money
    points (a gammon single under :func:`jacoby_single`), or in a match the match
    winning chance after it (:meth:`engine.cube.met.MatchEquityTable.after`)."""
    if state is None or state.money:
        single = jacoby_single(state)
        return lambda k: float(np.sign(k)) * (1 if single else min(abs(k), top))
    a, b = state.away
    table = default_table()
    return lambda k: table.after(a, b, int(np.sign(k)) * min(abs(k), top) * state.value)


def play_on(probs, state: CubeState | None, top: int = 3) -> float:
    """The resigner's cubeless value of playing on, from his five outputs ``probs``, on
    the scale of :func:`_outcome` (money points, or a match winning chance; ``top``: the
    most a game scores, :func:`most`)."""
    w, wg, wbg, lg, lbg = (float(x) for x in probs)
    u = _outcome(state, top)
    return (wbg * u(3) + (wg - wbg) * u(2) + (w - wg) * u(1)
            + lbg * u(-3) + (lg - lbg) * u(-2) + (1.0 - w - lg) * u(-1))


def offer(probs, state: CubeState | None, rules: Rules) -> int:
    """The level the side on roll should resign at, 0 for none (GNU Backgammon's
    ``getResignation``): ``probs`` are its five cubeless outputs, ``state`` the cube
    and score from its side (None: a game without a cube). A backgammon when it is sure
    to lose one (its chance above 0) and playing on is worth exactly that; else a gammon
    likewise; else a single game when playing on is worth exactly a single loss. Under
    :func:`jacoby_single` a gammon or backgammon is offered as a single game."""
    p = np.asarray(probs, np.float64)
    if p.shape != (5,) or not np.isfinite(p).all():
        raise ResignationError(f"probabilities {quote(probs)}: expected five numbers")
    top = most(rules)
    u = _outcome(state, top)
    value = play_on(p, state, top)
    level = 0
    if top >= 3 and p[4] > 0 and abs(u(-3) - value) <= TOLERANCE:
        level = 3
    elif p[3] > 0 and abs(u(-2) - value) <= TOLERANCE:
        level = 2
    elif abs(u(-1) - value) <= TOLERANCE:
        level = 1
    return 1 if level and jacoby_single(state) else level


def accepts(level: int, probs, state: CubeState | None, rules: Rules) -> bool:
    """Whether the opponent accepts a resignation at ``level`` by the side whose five
    cubeless outputs are ``probs`` (GNU Backgammon's ``getResignEquities`` rule): when
    the resignation is worth no more to the resigner than playing on, each valued at the
    score (:func:`play_on`: money points, the Jacoby rule's singles, or a match winning
    chance); ``state`` the cube and score from the resigner's side, None without a
    cube. A resigner sure to lose what he offers is accepted."""
    p = np.asarray(probs, np.float64)
    if p.shape != (5,) or not np.isfinite(p).all():
        raise ResignationError(f"probabilities {quote(probs)}: expected five numbers")
    top = most(rules)
    return _outcome(state, top)(-check_level(level, rules)) <= play_on(p, state, top) \
        + TOLERANCE
