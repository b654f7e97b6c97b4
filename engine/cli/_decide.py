"""The engine's decisions as the text protocols ask for them (:mod:`.ubgi`,
:mod:`.external`): the best play of a roll, the cube action before a roll, the answer to
a double, the value of a position; one :class:`~engine.search.nply.Search` per game and
thread count, loaded on first use.

Plies are GNU Backgammon's (0-ply: the network), as everywhere in the engine; UBGI's
root-inclusive ``engine.ply`` is translated in :mod:`.ubgi`.
"""

from __future__ import annotations

import numpy as np

from engine.cube.decision import (
    CubeDecision,
    CubeError,
    CubeState,
    DoubleAnswer,
    analyse_cube,
    answer_double,
    cube_efficiency,
)
from engine.cube.met import MatchError, default_table
from engine.rules.position import Position
from engine.search.nply import Analysis, Search

DOUBLES = ("double_take", "double_pass", "double_beaver")
"""The cube actions (:data:`engine.cube.decision.ACTIONS`) in which the side on roll
doubles (with ``double_beaver`` the double is right even though it will be beavered)."""

_SEARCHES: dict = {}


def search_for(variant: str, threads: int | None = None) -> Search:
    """The search of ``variant``'s released model on ``threads`` threads (default: the
    engine's), loaded once (raises :class:`engine.eval.evaluator.NoModelError` when
    the game has no model)."""
    key = (variant, threads)
    if key not in _SEARCHES:
        _SEARCHES[key] = Search.load(variant, threads=threads)
    return _SEARCHES[key]


def best_play(search: Search, position: Position, dice, ply: int) -> Analysis:
    """The plays of ``dice`` (None: a gul bara pending segment) rated at ``ply``, the
    best first (only the best gets move text and an object)."""
    return search.analyse(position, dice, ply, top=1)


def probabilities(search: Search, position: Position, ply: int) -> np.ndarray:
    """The ``ply``-ply cubeless outputs of the side to move, before its roll."""
    return np.asarray(search.evaluate(position, ply).probabilities, np.float64)


def _check_table(state: CubeState) -> None:
    if not state.money and max(state.away) > default_table().length:
        raise MatchError(f"match to {state.match_length}: the match equity table covers "
                         f"matches to {default_table().length}")


def cube_advice(search: Search, position: Position, state: CubeState,
                ply: int) -> CubeDecision:
    """The cube decision of the side on roll (:func:`engine.cube.decision.analyse_cube`)
    with ``ply``-ply probabilities; backgammon only."""
    return analyse_cube(position, state, lambda pos, p: probabilities(search, pos, p), ply)


def doubles(decision: CubeDecision) -> bool:
    """Whether the side on roll should double (:data:`DOUBLES`)."""
    return decision.action in DOUBLES


def answer(search: Search, position: Position, state: CubeState, ply: int) -> DoubleAnswer:
    """The opponent's answer (take, pass or beaver) to a double by the side on roll of
    ``position`` (:func:`engine.cube.decision.answer_double`)."""
    if position.variant != "backgammon":
        raise CubeError(f"variant {position.variant!r} has no cube (backgammon only)")
    if position.is_over():
        raise CubeError("the game is over: no double to answer")
    _check_table(state)
    return answer_double(probabilities(search, position, ply), state,
                         cube_efficiency(position))
