"""Exact money cube decisions in short bear-offs.

Where both sides are home with six checkers or fewer and a checker off, the two-sided
bear-off table holds each side's cubeful money equity, both playing and doubling for
the most from there (:meth:`engine.eval.bearoff.BearoffDB.money_cube`), as GNU
Backgammon's two-sided database does: the cube's worth needs no efficiency model. This
module puts those equities in the cube's terms (:mod:`engine.cube.decision`) for every
caller that decides a cube, or ranks plays by cubeful equity, with a position in hand:
the command lines and protocols (:mod:`engine.cli._decide`) and the game loop's cube
policies (:class:`engine.play.match.DecisionCubePolicy`). In match play such a race is
valued by the model at the efficiencies those equities imply (:func:`match_efficiencies`),
as GNU Backgammon values it: its cube decisions (:func:`cube_efficiencies`, the one
choice of a decision's efficiencies, and :func:`cube_analysis`) and the plays into it
(:func:`cubeful_play_value`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from engine.cube.decision import (
    BEAROFF_EFFICIENCY,
    CubeDecision,
    CubeError,
    CubeState,
    DoubleAnswer,
    ProbabilityFn,
    analyse_cube,
    check_play_rows,
    classify,
    cube_efficiency,
    cubeful_value,
    last_roll,
    money_answer,
    money_cubeful_equity,
    play_value,
    play_values_of_rows,
    state_rows,
)
from engine.cube.met import MatchEquityTable
from engine.errors import PositionError, quote
from engine.rules import _layout as L
from engine.rules.position import CHECKERS, Position

EXACT_CUBE_HEADROOM = 32
"""The least ``max cube / cube value`` with which a short bear-off's money cube is
decided by the two-sided table, whose cube has no maximum (:func:`money_bearoff`).
Five doubles left change no equity of those races by more than 1e-4, nine by 4e-13
(2026-12-07, the table's recursion with the doubles left counted; two left moved them
by 0.06); below it the cube model decides, whose Janowski line missed the table by up
to 0.12 (a money bear-off at a cube of 4 under an XGID's usual max cube, 1024, when
this bound was 512: ``XGID=-A-B-BA---------------abb-:2:-1:1:53:0:0:0:0:10``, 5/off
3/off, -0.868 where the table and GNU Backgammon, which ignores the max cube, give
-0.985; helper 125's audit)."""


def money_bearoff(position: Position, state: CubeState) -> tuple | None:
    """The two-sided bear-off table's exact money ``(no_double, double_take)`` of the
    side on roll (:meth:`engine.eval.bearoff.BearoffDB.money_cube`; ``double_take``
    None with the opponent's cube), where it values the position: backgammon in money
    play with a cube without a maximum, or with at least :data:`EXACT_CUBE_HEADROOM`
    times its value, both sides home with six checkers or fewer and a checker off.
    None elsewhere."""
    if (not state.money or position.variant != "backgammon"
            or (state.max_value is not None
                and state.max_value < EXACT_CUBE_HEADROOM * state.value)
            or not _short_race(position)):
        return None
    from engine.eval import bearoff
    return bearoff.load().money_cube(position, state.owner)


def _short_race(position: Position) -> bool:
    """A quick first test (the table's own is :meth:`BearoffDB.pair`): nobody on the
    bar, every checker on its home points, six or fewer a side."""
    return (not any(position.bar) and not any(position.me[6:]) and not any(position.them[6:])
            and sum(position.me[:6]) <= 6 and sum(position.them[:6]) <= 6)


def exact_cube(position: Position, state: CubeState, decision: CubeDecision) -> CubeDecision:
    """``decision`` with the exact equities and action of a short bear-off in money
    play (:func:`money_bearoff`). Its take point and other fields stay the model's.
    Elsewhere ``decision`` itself."""
    exact = money_bearoff(position, state)
    if exact is None:
        return decision
    nd, dt = exact
    if dt is None or not state.can_double():
        return replace(decision, action="no_double", no_double=nd)
    # no gammon is left once both sides have borne a checker off: never too good
    return replace(decision, action=classify(nd, dt, 1.0, state.beavers, gammons=False),
                   no_double=nd, double_take=dt, double_pass=1.0)


def exact_answer(position: Position, state: CubeState) -> DoubleAnswer | None:
    """The exact answer to a double by the side on roll of a short bear-off in money
    play (:func:`money_bearoff`; :func:`engine.cube.decision.money_answer`), or None
    where the table does not value it."""
    exact = money_bearoff(position, state)
    if exact is None or exact[1] is None or state.at_max:
        return None
    return money_answer(exact[1], state.beavers)


def exact_play_value(after: Position, state: CubeState) -> float | None:
    """The mover's exact money value of a play that leaves the short bear-off ``after``
    (the opponent on roll, as the move generator gives it; ``state`` the cube before
    the play, seen from the mover): minus the opponent's value under his proper cube
    action there (:func:`exact_cube`, :func:`engine.cube.decision.cubeful_value`), as
    :func:`engine.cube.decision.play_value` values a play by the model. None where the
    table does not value ``after`` (a game over included)."""
    if after.is_over():
        return None
    model = CubeDecision("no_double", 0.0, None, None, None, 0.5, 0.0, 0.0, (0.0,) * 5)
    decision = exact_cube(after, state.flip(), model)
    return None if decision is model else -cubeful_value(decision)[0]


def cubeful_play_values(probs: Any, afters: Any, state: CubeState,
                        table: MatchEquityTable | None = None
                        ) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`cubeful_play_value` of many backgammon plays at once, with the same
    numbers: ``probs`` n x 5, ``afters`` the n positions after the plays; returns
    ``(equities, match winning chances or None in money play)`` as arrays
    (:func:`cubeful_play_values_of_rows` of the positions' rows)."""
    return cubeful_play_values_of_rows(probs, state_rows(afters), state, table)


def cubeful_play_values_of_rows(probs: Any, rows: np.ndarray, state: CubeState,
                                table: MatchEquityTable | None = None
                                ) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`cubeful_play_values` of backgammon plays given as the positions' state
    rows (the move generator's): the plays into a short bear-off one by one, the
    others by :func:`engine.cube.decision.play_values_of_rows`, no :class:`Position`
    made for them."""
    p, rows = check_play_rows(probs, rows)     # every row, short bear-offs too
    me, them = rows[:, L.ME + 1:L.ME + 25], rows[:, L.THEM + 1:L.THEM + 25]
    off = np.maximum(rows[:, L.ME + L.OFF], rows[:, L.THEM + L.OFF])
    short = ((rows[:, L.ME + L.BAR] == 0) & (rows[:, L.THEM + L.BAR] == 0)
             & ~me[:, 6:].any(axis=1) & ~them[:, 6:].any(axis=1)
             & (me[:, :6].sum(axis=1) <= 6) & (them[:, :6].sum(axis=1) <= 6)
             & (off < CHECKERS))
    rest = np.flatnonzero(~short)
    equity, mwc = play_values_of_rows(p[rest], rows[rest], state, table)
    equities = np.zeros(len(p))
    equities[rest] = equity
    mwcs = None if mwc is None else np.zeros(len(p))
    if mwcs is not None:
        mwcs[rest] = mwc
    for i in np.flatnonzero(short).tolist():
        after = Position.from_array(rows[i], "backgammon")
        equities[i], m = cubeful_play_value(p[i], after, state, table)
        if mwcs is not None and m is not None:
            mwcs[i] = m
    return equities, mwcs


def match_efficiencies(position: Position, state: CubeState) -> tuple[float, float] | None:
    """The cube efficiencies with which GNU Backgammon values a short bear-off in match
    play (its two-sided database's class): ``(no double, double/take)`` of the side on
    roll, the cube as ``state`` has it, then the taker's. Each is the share of the
    fully live cube's money gain (Janowski's at efficiency 1, no gammons, no Jacoby)
    that the table's exact money equity of not doubling with that cube shows, held to
    0 .. :data:`~engine.cube.decision.BEAROFF_EFFICIENCY`; that maximum where the two
    lines meet (within 1e-4) (GNU 1.07's ``EvaluatePositionCubeful4`` at its leaf, the
    cap its ``rTSCubeX``). Where the taker's cube is worth little the flat 0.6
    overvalued it: at 4-away 4-away, 2 and 3 checkers against 4 and 6 (GNU Backgammon
    ID SAAAoAIAAAAAAA, 1-1), 4/off was -0.425 for GNU's -0.649 and the exact -0.610
    (the taker's cube 0.10). None in money play (the table decides there,
    :func:`exact_cube`), on the last roll (the cube dead:
    :func:`engine.cube.decision.cube_efficiency`) and where the table does not value
    ``position``."""
    if state.money or position.variant != "backgammon" or not _short_race(position) \
            or last_roll(position):
        return None
    from engine.eval import bearoff
    db = bearoff.load()
    ij = db.pair(position)
    if ij is None:
        return None
    p = np.array([db.two[ij], 0.0, 0.0, 0.0, 0.0])
    cubeless = 2.0 * p[0] - 1.0

    def share(owner: str) -> float:
        live = money_cubeful_equity(p, owner, 1.0, jacoby=False)
        if abs(live - cubeless) <= 1e-4:
            return BEAROFF_EFFICIENCY
        x = (db.money_cube(position, owner)[0] - cubeless) / (live - cubeless)
        return float(min(max(x, 0.0), BEAROFF_EFFICIENCY))

    return share(state.owner), share("them")


def cube_efficiencies(position: Position, state: CubeState,
                      efficiency: float | None = None) -> tuple[float, float | None]:
    """The cube efficiencies a cube decision of ``position``'s side on roll is made at,
    ``(no double, double/take)`` as :func:`engine.cube.decision.cube_decision` and
    :func:`~engine.cube.decision.answer_double` take them (the second None: the
    first's): a given ``efficiency`` (a protocol's, a player's) for both; else in a
    short bear-off in match play the table's, one for each cube
    (:func:`match_efficiencies`); else the position's
    (:func:`engine.cube.decision.cube_efficiency`: 0 on the last roll). A cube at its
    maximum stays dead whatever these are (:func:`~engine.cube.decision.cube_decision`).
    At 4-away 4-away, the cube 2 ours, five checkers against five (GNU Backgammon ID
    SwIAAOMAAAAAAA), no redouble was -0.269 at the flat 0.6 for GNU Backgammon's
    -0.357 (our cube 0.28)."""
    # checked here, as analyse_cube checks them, since the table is read first
    if not isinstance(position, Position):
        raise PositionError(f"position {quote(position)}: expected a Position")
    if not isinstance(state, CubeState):
        raise CubeError(f"state {quote(state)}: expected a CubeState")
    if efficiency is not None:
        return efficiency, None
    x = match_efficiencies(position, state)
    return (cube_efficiency(position), None) if x is None else x


def cube_analysis(position: Position, state: CubeState, probability_fn: ProbabilityFn,
                  ply: int = 0, efficiency: float | None = None, *,
                  table: MatchEquityTable | None = None, rows_fn=None,
                  exact: bool = True) -> CubeDecision:
    """The cube decision of ``position``'s side on roll for the command lines, protocols
    and the game loop: :func:`engine.cube.decision.analyse_cube` at
    :func:`cube_efficiencies` (``efficiency``, where given, for both lines), a short
    bear-off in money play exact (:func:`exact_cube`; ``exact`` False leaves the model's
    decision, for probabilities a user gave)."""
    x, taken = cube_efficiencies(position, state, efficiency)
    decision = analyse_cube(position, state, probability_fn, ply, x, table, rows_fn,
                            double_efficiency=taken)
    return exact_cube(position, state, decision) if exact else decision


def cubeful_play_value(probs, after: Position, state: CubeState,
                       table: MatchEquityTable | None = None) -> tuple[float, float | None]:
    """A play's cubeful value as plays are ranked where a cube is in play:
    :func:`exact_play_value` for a play into a short bear-off in money play, else
    :func:`engine.cube.decision.play_value` of its chances ``probs``, in match play at
    the opponent's :func:`match_efficiencies` there where the table gives them. As
    ``(equity on the normalised scale of the mover's cube, match winning chance or
    None)``."""
    exact = exact_play_value(after, state)
    if exact is not None:
        return exact, None
    x = None if after.is_over() else match_efficiencies(after, state.flip())
    if x is None:
        return play_value(probs, after, state, table)
    return play_value(probs, after, state, table, efficiency=x[0], double_efficiency=x[1])
