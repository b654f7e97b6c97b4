"""The engine's decisions as the text protocols ask for them (:mod:`.ubgi`,
:mod:`.external`): the best play of a roll, the cube action before a roll, the answer to
a double, the value of a position; one :class:`~engine.search.nply.Search` per game and
thread count, loaded on first use. A play is told to the other program as it can read
it: a step for each die it uses (:func:`~engine.notation.movetext.die_steps`), and a
game-ending play as the one of the same result that uses the most dice
(:func:`~engine.notation.movetext.gnu_ending`).

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
    answer_double,
    rolls_ahead,
)
from engine.cube.met import MatchError, default_table
from engine.errors import NardyError
from engine.movegen.generate import successor_arrays
from engine.play.resign import accepts, check_level, most, offer, play_on
from engine.rules.position import Position
from engine.rules.scoring import flip_probs
from engine.rules.variants import get_rules
from engine.search.bearoff_cube import (
    cube_analysis,
    cube_efficiencies,
    cubeful_play_values,
    cubeful_play_values_of_rows,
    exact_answer,
)
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
    Jacoby rule, while the cube is centred in money play); a play into a short
    bear-off in money play by its exact value
    (:func:`engine.search.bearoff_cube.cubeful_play_value`). Plays a filter cut stay
    after them. The first ``top`` (None: all) carry their
    :attr:`~engine.search.nply.Candidate.cubeful_equity` and, in a match,
    :attr:`~engine.search.nply.Candidate.mwc` (a cut play's from its shallower
    rating; ``also``: a play listed after them, as :meth:`Search.analyse` has it). The
    plays' cubeful values are made over arrays
    (:func:`engine.search.bearoff_cube.cubeful_play_values_of_rows`), a few
    microseconds a play."""
    if position.variant != "backgammon":
        raise CubeError(f"variant {position.variant!r} has no cube (backgammon only)")
    _check_table(state)
    table = default_table()
    analysis = search.analyse(position, dice, ply, top=top, also=also,
                              rank_rows=lambda rows, p: cubeful_play_values_of_rows(
                                  p, rows, state, table)[0])
    cands = analysis.candidates         # the cut ones too, on their shallower chances
    equities, mwcs = cubeful_play_values([c.probabilities for c in cands],
                                         [c.position for c in cands], state, table)
    rated = tuple(replace(c, cubeful_equity=float(equities[i]),
                          mwc=None if mwcs is None else float(mwcs[i]))
                  for i, c in enumerate(cands))
    return replace(analysis, candidates=rated)


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
    """The cube decision of the side on roll
    (:func:`engine.search.bearoff_cube.cube_analysis`) with ``ply``-ply probabilities;
    backgammon only; a match beyond the table's reach as money play
    (:func:`within_table`); a short bear-off exact in money play, in a match at the
    table's efficiencies."""
    state = within_table(state)
    return cube_analysis(position, state, lambda pos, p: probabilities(search, pos, p), ply,
                         rows_fn=lambda rows: search.values_of(rows, 0))


def doubles(decision: CubeDecision) -> bool:
    """Whether the side on roll should double (:data:`DOUBLES`)."""
    return decision.action in DOUBLES


def answer(search: Search, position: Position, state: CubeState, ply: int) -> DoubleAnswer:
    """The opponent's answer (take, pass or beaver) to a double by the side on roll of
    ``position`` (:func:`engine.cube.decision.answer_double`, at
    :func:`engine.search.bearoff_cube.cube_efficiencies`)."""
    if position.variant != "backgammon":
        raise CubeError(f"variant {position.variant!r} has no cube (backgammon only)")
    if position.is_over():
        raise CubeError("the game is over: no double to answer")
    state = within_table(state)
    exact = exact_answer(position, state)
    if exact is not None:
        return exact
    x, taken = cube_efficiencies(position, state)
    return answer_double(probabilities(search, position, ply), state, x,
                         after_roll=lambda: rolls_ahead(
                             position, lambda pos, p: probabilities(search, pos, p),
                             lambda rows: search.values_of(rows, 0)),
                         double_efficiency=taken)


def _resign_state(position: Position, state: CubeState | None) -> CubeState | None:
    """The cube and score a resignation is valued at: backgammon's (a match beyond the
    table as money play, :func:`within_table`), None in a game without a cube."""
    if state is None or position.variant != "backgammon":
        return None
    return within_table(state)


def accepts_resignation(search: Search, position: Position, state: CubeState | None,
                        level: int, ply: int = 0, dice=None) -> bool:
    """Whether the opponent of the side on roll of ``position`` accepts its resignation
    at ``level`` (:func:`engine.play.resign.accepts`, GNU Backgammon's rule): the
    resigner's cubeless chances at ``ply`` valued at the score (``state``, from the
    resigner's side, :func:`_resign_state`); with ``dice`` (he has rolled), the chances
    after his best play of them at 0-ply, as GNU Backgammon values a resignation after
    the roll (before it where a gul bara cascade is too large to list)."""
    rules = get_rules(position.variant)
    level = check_level(level, rules)
    state = _resign_state(position, state)
    probs = None
    if dice is not None:
        try:
            rows = successor_arrays(position, tuple(dice))
        except NardyError:
            rows = None
        if rows is not None:
            mine = flip_probs(np.asarray(search.values_of(rows, 0), np.float64))
            top = most(rules)
            probs = max(mine, key=lambda p: play_on(p, state, top))
    if probs is None:
        probs = np.asarray(search.evaluate(position, ply).probabilities, np.float64)
    return accepts(level, probs, state, rules)


def resignation_offer(search: Search, position: Position, state: CubeState | None) -> int:
    """The level the side on roll of ``position`` resigns at, 0 for none
    (:func:`engine.play.resign.offer` on its 0-ply chances: exact in a short bear-off or
    a race the tables settle); ``state`` the cube and score from its side
    (:func:`_resign_state`)."""
    if position.is_over():
        return 0
    probs = np.asarray(search.evaluate(position, 0).probabilities, np.float64)
    return offer(probs, _resign_state(position, state), get_rules(position.variant))
