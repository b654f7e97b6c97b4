"""Counting a race's turns (backgammon's geometry: backgammon, portes): the quarter-board
boundaries each side's checkers must still cross, its pips, and the results those make
certain whatever the dice, for the evaluator's sanity check
(:func:`engine.eval.network.sane`). The bear-off tables' bounds build on the same counts
(:func:`engine.eval.bearoff.race_bounds`). A module of its own: the network's sanity
check reads it, and the bear-off tables read the network's file helpers."""

from __future__ import annotations

from engine._jit import FAST, njit
from engine.rules import _layout as L


@njit(inline="always", **FAST)
def side_counts(s, side):
    """``(crossings, to_first_off, pips, to_clear, pips_to_first_off)`` of the side whose
    block of the race
    ``s`` starts at ``side``: the quarter-board boundaries its checkers must still cross
    to be borne off (bearing off counts as one; a checker on its point p crosses
    ``ceil(p / 6)``), the crossings before its first checker can be borne off (every
    checker home, then one more), its pip count, and the crossings before none of its
    checkers is left in the opponent's home board (its points 19..24), and the fewest
    pips it must move before it can bear off a first checker (every checker home, then
    one pip at least)."""
    cross = 0
    home_in = 0
    pips = 0
    clear = 0
    home_pips = 0
    for p in range(1, 25):
        n = s[side + p]
        if n:
            c = (p + 5) // 6
            cross += n * c
            home_in += n * (c - 1)
            pips += n * p
            if p >= 19:
                clear += n
            if p > 6:
                home_pips += n * (p - 6)
    return cross, home_in + 1, pips, clear, home_pips + 1


@njit(inline="always", **FAST)
def race_certain(o, s, triple):
    """Set in ``o`` the results of the race ``s`` (backgammon's geometry: backgammon,
    portes; ``triple``: backgammons count) that are certain whatever the dice, by
    counting turns, as GNU Backgammon's sanity check does (the race network gave a
    certain gammon, two checkers on the ace point against fifteen on the
    opponent's 13-point, a chance of 0.0045). A die crosses at most one boundary of the
    quarter boards and a turn has at most four dice, so a side needs at least
    ``ceil(crossings / 4)`` turns; every die of a race can be played and takes at least
    one pip, and a turn has at least two dice, so a side needs at most ``ceil(pips /
    2)`` turns. The side to move, ``me``, rolls first: its k-th turn comes before the
    opponent's k-th."""
    me_cross, me_first, me_pips, me_clear, _ = side_counts(s, L.ME)
    them_cross, them_first, them_pips, them_clear, _ = side_counts(s, L.THEM)
    me_max = (me_pips + 1) // 2
    them_max = (them_pips + 1) // 2
    if me_max <= (them_cross + 3) // 4:
        # I am off before the opponent can be
        o[0] = 1.0
        o[3] = 0.0
        o[4] = 0.0
        if s[L.THEM + L.OFF] == 0 and me_max <= (them_first + 3) // 4:
            o[1] = 1.0
            if triple and me_max <= (them_clear + 3) // 4:
                o[2] = 1.0
    elif (me_cross + 3) // 4 > them_max:
        # the opponent is off before I can be
        o[0] = 0.0
        o[1] = 0.0
        o[2] = 0.0
        if s[L.ME + L.OFF] == 0 and (me_first + 3) // 4 > them_max:
            o[3] = 1.0
            if triple and (me_clear + 3) // 4 > them_max:
                o[4] = 1.0
