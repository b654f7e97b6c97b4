"""The engine's decisions as the text protocols ask for them (:mod:`.ubgi`,
:mod:`.external`): the best play of a roll, the cube action before a roll, the answer to
a double, the value of a position; one :class:`~engine.search.nply.Search` per game and
thread count, loaded on first use.

Plies are GNU Backgammon's (0-ply: the network), as everywhere in the engine; UBGI's
root-inclusive ``engine.ply`` is translated in :mod:`.ubgi`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.cube.decision import (
    CubeDecision,
    CubeError,
    CubeState,
    DoubleAnswer,
    analyse_cube,
    answer_double,
    classify,
    cube_efficiency,
    play_value,
    rolls_ahead,
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


def cubeful(state: CubeState | None, variant: str) -> bool:
    """Whether plays are ranked by cubeful equity, as GNU Backgammon ranks them where
    a cube is in play: ``state`` is backgammon money play or a match the match equity
    table covers (each player at most its length away)."""
    return state is not None and variant == "backgammon" and in_table(state)


def in_table(state: CubeState) -> bool:
    """Whether the match equity table covers ``state``: money play, or a match with each
    player at most the table's length away."""
    return state.money or max(state.away) <= default_table().length


def without_cube(match_length: int, score) -> CubeState:
    """The cube state of a backgammon match played without the cube, seen from the
    player whose score is first: the cube dead at 1 (its maximum), so that plays are
    ranked by the match winning chance at the score, no cube action after them (a
    match's engine that ranked by money equity played for gammons the score made
    worthless)."""
    return CubeState(1, "centre", match_length, tuple(score), False, False, False, 1)


def best_play(search: Search, position: Position, dice, ply: int,
              state: CubeState | None = None) -> Analysis:
    """The plays of ``dice`` (None: a gul bara pending segment) rated at ``ply``, the
    best first (only the best gets move text and an object). Given the cube ``state``
    of backgammon money play or of a match the match equity table covers, ranked by
    :func:`rank_cubefully`; otherwise by cubeless money equity."""
    if cubeful(state, position.variant):
        assert state is not None
        return rank_cubefully(search, position, dice, ply, state, top=1)
    return search.analyse(position, dice, ply, top=1)


def rank_cubefully(search: Search, position: Position, dice, ply: int, state: CubeState,
                   top: int | None = None, also: Position | None = None) -> Analysis:
    """:meth:`Search.analyse` with the plays rated at the full depth ranked by the
    mover's cubeful equity at the cube (and score) of ``state``
    (:func:`engine.cube.decision.play_value` of each play's chances: the opponent takes
    his proper cube action after it), as GNU Backgammon ranks plays where a cube is in
    play: gammons weigh what the cube and the score make them worth (nothing, with the
    Jacoby rule, while the cube is centred in money play). Plays a filter cut stay
    after them. The first ``top`` (None: all) carry their
    :attr:`~engine.search.nply.Candidate.cubeful_equity` and, in a match,
    :attr:`~engine.search.nply.Candidate.mwc` (a cut play's from its shallower
    rating; ``also``: a play listed after them, as :meth:`Search.analyse` has it). A
    match-play cube decision a play (about 0.1 ms each) makes a 0-ply
    ranking of a roll with a thousand plays take about a tenth of a second."""
    if position.variant != "backgammon":
        raise CubeError(f"variant {position.variant!r} has no cube (backgammon only)")
    _check_table(state)
    table = default_table()
    analysis = search.analyse(position, dice, ply, top=top,
                              rank=lambda after, p: play_value(p, after, state, table)[0],
                              also=also)
    rated = []
    for c in analysis.candidates:       # the cut ones too, on their shallower chances
        equity, mwc = play_value(c.probabilities, c.position, state, table)
        rated.append(replace(c, cubeful_equity=equity, mwc=mwc))
    return replace(analysis, candidates=tuple(rated))


def probabilities(search: Search, position: Position, ply: int) -> np.ndarray:
    """The ``ply``-ply cubeless outputs of the side to move, before its roll."""
    return np.asarray(search.evaluate(position, ply).probabilities, np.float64)


def _check_table(state: CubeState) -> None:
    if not in_table(state):
        raise MatchError(f"match to {state.match_length}: the match equity table covers "
                         f"matches to {default_table().length}")


def within_table(state: CubeState) -> CubeState:
    """``state``, or, for a match with a player farther away than the match equity
    table reaches (64 away, GNU Backgammon's longest match; a protocol may ask for
    longer), its cube decided as in money
    play (no Jacoby rule, no beavers): a long match's cube is close to money play's,
    and the protocols' engines answer every cube question rather than stop the game.
    Where the match's cube cannot be turned (the Crawford game, a dead cube) it stays
    so: held at its value, which no one doubles."""
    if in_table(state):
        return state
    # where the match's cube cannot be turned (the Crawford game, a dead cube), it is
    # held at its value: a cube at its maximum is dead, and no one doubles it
    top = state.max_value if state.can_double() else state.value
    return CubeState(state.value, state.owner, 0, (0, 0), False, False, False, top)


def cube_advice(search: Search, position: Position, state: CubeState,
                ply: int) -> CubeDecision:
    """The cube decision of the side on roll (:func:`engine.cube.decision.analyse_cube`)
    with ``ply``-ply probabilities; backgammon only; a match beyond the table's reach
    as money play (:func:`within_table`); a short bear-off in money play exact
    (:func:`exact_cube`)."""
    state = within_table(state)
    return exact_cube(position, state, analyse_cube(
        position, state, lambda pos, p: probabilities(search, pos, p), ply,
        rows_fn=lambda rows: search.values_of(rows, 0)))


EXACT_CUBE_HEADROOM = 512
"""The least ``max cube / cube value`` with which a short bear-off's money cube is
decided by the two-sided table, whose cube has no maximum (:func:`_money_bearoff`).
Nine doubles left change no equity of those races by more than 4e-13 (after a double,
eight: 2e-9); an XGID's usual max cube, 1024 (XG writes 10), leaves ten at a centred
cube, where nothing changes (2026-12-07, the table's recursion with the doubles left
counted; five left still moved equities by 1e-4, two by 0.06)."""


def _money_bearoff(position: Position, state: CubeState) -> tuple | None:
    """The two-sided bear-off table's exact money ``(no_double, double_take)`` of the
    side on roll (:meth:`engine.eval.bearoff.BearoffDB.money_cube`), where it values
    the position: money play with a cube without a maximum, or with at least
    :data:`EXACT_CUBE_HEADROOM` times its value, both sides home with six checkers or
    fewer and a checker off. None elsewhere."""
    if (not state.money or position.variant != "backgammon"
            or (state.max_value is not None
                and state.max_value < EXACT_CUBE_HEADROOM * state.value)):
        return None
    from engine.eval import bearoff
    return bearoff.load().money_cube(position, state.owner)


def exact_cube(position: Position, state: CubeState, decision: CubeDecision) -> CubeDecision:
    """``decision`` with the exact equities and action of a short bear-off in money
    play (:func:`_money_bearoff`), as GNU Backgammon decides them from its two-sided
    database: each side plays and doubles for the most equity from here on, so the
    cube's worth needs no efficiency. Its take point and other fields stay the
    model's. Elsewhere ``decision`` itself."""
    exact = _money_bearoff(position, state)
    if exact is None:
        return decision
    nd, dt = exact
    if dt is None or not state.can_double():
        return replace(decision, action="no_double", no_double=nd)
    return replace(decision, action=classify(nd, dt, 1.0, state.beavers), no_double=nd,
                   double_take=dt, double_pass=1.0)


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
    state = within_table(state)
    exact = _money_bearoff(position, state)
    if exact is not None and exact[1] is not None and not state.at_max:
        take = exact[1]
        answer = ("pass" if take >= 1.0 else
                  "beaver" if state.beavers and -2.0 <= take <= 0.0 else "take")
        return DoubleAnswer(answer, take, 1.0)
    return answer_double(probabilities(search, position, ply), state,
                         cube_efficiency(position),
                         after_roll=lambda: rolls_ahead(
                             position, lambda pos, p: probabilities(search, pos, p),
                             lambda rows: search.values_of(rows, 0)))
