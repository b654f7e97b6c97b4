"""Match equity tables computed from a gammon rate: the post-Crawford table in closed
form and the rest with the live-cube model of :func:`engine.cube.decision.match_cubeful_mwc`
(what a table for a game with other gammon rates, or a longer match, is built from).
"""

from __future__ import annotations

import numpy as np

from engine.cube.decision import match_cubeful_mwc
from engine.cube.met import MatchEquityTable, MatchError
from engine.errors import quote


def post_crawford_from_gammon_rate(g: float, length: int, free_drop_2: float = 0.015,
                                   free_drop_4: float = 0.004) -> np.ndarray:
    """Post-Crawford MWC of the trailer j+1-away against 1-away.

    The trailer doubles at once, so every game is worth 2 (4 with a gammon, rate ``g``)
    and is won half the time; the leader's free drop is worth ``free_drop_2`` at
    2-away and ``free_drop_4`` at 4-away (GNU Backgammon's Zadeh post-Crawford
    generator, defaults 0.015 and 0.004).
    """
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
    need only scores already computed.
    """
    if not 0.0 <= g < 1.0:
        raise MatchError(f"gammon rate {quote(g)}: expected 0 <= g < 1")
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise MatchError(f"length = {quote(length)}: expected a positive integer")
    gc = g if crawford_gammon_rate is None else crawford_gammon_rate
    post = post_crawford_from_gammon_rate(g, length, free_drop_2, free_drop_4)
    pre = np.full((length, length), np.nan)
    table = MatchEquityTable(f"gammon rate {g:g}", pre, post,
                             "computed by engine.cube.computed_met.met_from_gammon_rate")
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
    return table
