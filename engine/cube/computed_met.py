"""Match equity tables computed from a gammon rate: the post-Crawford table in closed
form and the rest with the live-cube model of :func:`engine.cube.decision.match_cubeful_mwc`
(what a table for a game with other gammon rates, or a longer match, is built from).
"""

from __future__ import annotations

import numpy as np

from engine.cube.decision import match_cubeful_mwc
from engine.cube.met import MatchEquityTable, MatchError
from engine.errors import quote

MAX_LENGTH = 64
"""Longest match a computed table covers (the protocol's and UBGI's longest match); the
pre-Crawford recursion grows with the square of the length."""
_REAL = (int, float, np.integer, np.floating)
"""The types a rate or a free drop may have (a string or None is refused)."""


def _check_rate(name: str, value: object, label: str = "") -> None:
    """:class:`MatchError` unless ``value`` is a gammon rate, a real number 0 <= r < 1;
    the message names it as ``label`` (default ``name``)."""
    if isinstance(value, bool) or not isinstance(value, _REAL) or not 0 <= value < 1:
        raise MatchError(f"{label or name} = {quote(value)}: expected a number "
                         f"0 <= {name} < 1")


def _check_parameters(g: float, length: int, free_drop_2: float,
                      free_drop_4: float) -> None:
    """The checks of :func:`post_crawford_from_gammon_rate`'s arguments. The free drops
    are bounded so that every entry stays a chance in [0, 1]: an entry is half a mean
    of earlier entries (or of 1), less ``free_drop_2`` at 2-away and ``free_drop_4`` at
    4-away, so it stays in [0, 1] when each free drop is at least 0 and leaves its own
    entry above 0."""
    _check_rate("g", g, "gammon rate g")
    if (isinstance(length, bool) or not isinstance(length, (int, np.integer))
            or not 1 <= length <= MAX_LENGTH):
        raise MatchError(f"length = {quote(length)}: expected an integer 1..{MAX_LENGTH}")
    for name, value in (("free_drop_2", free_drop_2), ("free_drop_4", free_drop_4)):
        if isinstance(value, bool) or not isinstance(value, _REAL):
            raise MatchError(f"{name} = {quote(value)}: expected a number")
    if not 0.0 <= free_drop_2 < 0.5:
        raise MatchError(f"free_drop_2 = {quote(free_drop_2)}: expected 0 <= free_drop_2 "
                         f"< 0.5 (the trailer's 2-away chance is 0.5 less the free drop)")
    most = 0.5 * g + 0.5 * (1.0 - g) * (0.5 - free_drop_2)
    if not 0.0 <= free_drop_4 < most:
        raise MatchError(f"free_drop_4 = {quote(free_drop_4)}: expected 0 <= free_drop_4 "
                         f"< {most:.6g} (the trailer's 4-away chance before the free drop, "
                         f"at g = {g:g}, free_drop_2 = {free_drop_2:g})")


class _PartialTable(MatchEquityTable):
    """A table being filled in by :func:`met_from_gammon_rate`, which reads the entries
    already computed while the others are still NaN: built without the checks of
    :class:`MatchEquityTable`, which the finished table then passes."""

    def __post_init__(self) -> None:
        pass


def post_crawford_from_gammon_rate(g: float, length: int, free_drop_2: float = 0.015,
                                   free_drop_4: float = 0.004) -> np.ndarray:
    """Post-Crawford MWC of the trailer j+1-away against 1-away.

    The trailer doubles at once, so every game is worth 2 (4 with a gammon, rate ``g``)
    and is won half the time; the leader's free drop is worth ``free_drop_2`` at
    2-away and ``free_drop_4`` at 4-away (GNU Backgammon's Zadeh post-Crawford
    generator, defaults 0.015 and 0.004). Raises :class:`MatchError` for ``g`` outside
    [0, 1), ``length`` outside 1 .. :data:`MAX_LENGTH`, or a free drop below 0 or so
    large that the trailer's chance would fall below 0 (:func:`_check_parameters`).
    """
    _check_parameters(g, length, free_drop_2, free_drop_4)
    post = np.zeros(length, dtype=np.float64)
    for i in range(length):
        post[i] = (g * 0.5 * (post[i - 4] if i >= 4 else 1.0)
                   + (1.0 - g) * 0.5 * (post[i - 2] if i >= 2 else 1.0))
        if i == 1:
            post[i] -= free_drop_2
        if i == 3:
            post[i] -= free_drop_4
    return post


def met_from_gammon_rate(g: float, length: int, *, free_drop_2: float = 0.015,
                         free_drop_4: float = 0.004,
                         crawford_gammon_rate: float | None = None) -> MatchEquityTable:
    """A match equity table computed from the gammon rate ``g`` (the share of games won
    that are gammons, the same for both players; no backgammons).

    Post-Crawford: :func:`post_crawford_from_gammon_rate`. Crawford game (a player
    1-away, no cube): each player wins half the games, the trailer a gammon at rate
    ``crawford_gammon_rate`` (default ``g``). Other scores, by increasing total of the
    two aways: the cubeful MWC of a game started at 50% with a centred cube and the
    live-cube model of :func:`engine.cube.decision.match_cubeful_mwc` at full efficiency, whose
    end points (single and gammon wins and losses at each cube level) and take points
    need only scores already computed. Raises :class:`MatchError` naming the parameter
    out of range (``crawford_gammon_rate`` as ``g``, 0 <= r < 1).
    """
    if crawford_gammon_rate is not None:
        _check_rate("crawford_gammon_rate", crawford_gammon_rate)
    post = post_crawford_from_gammon_rate(g, length, free_drop_2, free_drop_4)
    gc = g if crawford_gammon_rate is None else crawford_gammon_rate
    name = f"gammon rate {g:g}"
    source = "computed by engine.cube.computed_met.met_from_gammon_rate"
    pre = np.full((length, length), np.nan)
    table = _PartialTable(name, pre, post, source)
    pre[0, 0] = 0.5
    for j in range(1, length):
        # Crawford game: the leader (1-away) wins half; the trailer gammons at rate gc
        lose_single = 1.0 - post[j - 1]
        lose_gammon = 1.0 - post[j - 2] if j >= 2 else 0.0
        pre[0, j] = 0.5 + 0.5 * ((1.0 - gc) * lose_single + gc * lose_gammon)
        pre[j, 0] = 1.0 - pre[0, j]
    probs = np.array([0.5, 0.5 * g, 0.0, 0.5 * g, 0.0])
    for total in range(4, 2 * length + 1):
        for i in range(1, length):
            j = total - 2 - i
            if 1 <= j < length and i <= j:
                v = match_cubeful_mwc(probs, table, i + 1, j + 1, 1, "centre",
                                      crawford=False, efficiency=1.0)
                pre[i, j] = v if i < j else 0.5
                pre[j, i] = 1.0 - pre[i, j]
    pre.setflags(write=False)
    post.setflags(write=False)
    return MatchEquityTable(name, pre, post, source)
