"""Fast move generation for backgammon and portes, for self-play.

:func:`engine._movegen.generate` serves all six games through the rules table; this
kernel knows only the hitting games with opposite directions and none of the nardy
rules (head, six-block, start rule, cascade, pins), and is several times faster, which
is what self-play training spends most of its time on. It gives the same set of
successors, in the same format (flipped, turns advanced), as ``generate`` for those
games; ``tests/test_hitgen.py`` checks that against ``generate`` on many positions.

How: the mover's board ``me[0..25]`` (0 = off, 25 = bar) and the opponent's checkers in
the mover's numbering are plain arrays, moves are applied and undone in place, and the
turn is enumerated with nested loops: both orders of a non-double, and the moves of a
double in non-increasing order of their source points (any legal order of a double's
moves can be rearranged so, which removes most permutations). Results are
deduplicated on an exact 128-bit key (the mover's 26 counts, the blots hit). The
forced-play rules rank each complete play: all dice (or a play that ends the game),
then one die, the larger before the smaller; only the best rank is kept.
"""

import numpy as np
from numba import njit

from ._layout import BAR, ME, OFF, STATE_LEN, THEM, TURNS_ME, TURNS_THEM

_TABLE = 4096           # dedupe table slots (a backgammon roll has < 1000 results)
_KEYS = 4               # scratch layout: [best rank, count, stamp, -], keys, stamps
_STAMPS = _KEYS + 2 * _TABLE


@njit(cache=True, inline="always")
def _legal(me, opp, src, die, outside):
    """Whether my checker on ``src`` may move ``die`` points (``outside``: my checkers
    on points 7..25)."""
    if me[src] == 0:
        return False
    if me[BAR] > 0 and src != BAR:
        return False
    dest = src - die
    if dest >= 1:
        return opp[dest] < 2
    if outside > 0:
        return False
    if dest < 0:
        for p in range(src + 1, 7):
            if me[p] > 0:
                return False
    return True


@njit(cache=True, inline="always")
def _apply(me, opp, src, die):
    """Play the move; returns 1 if it hit a blot, else 0."""
    dest = src - die
    me[src] -= 1
    if dest >= 1:
        me[dest] += 1
        if opp[dest] == 1:
            opp[dest] = 0
            opp[0] += 1          # opp[0]: opponent checkers hit this turn
            return 1
        return 0
    me[OFF] += 1
    return 0


@njit(cache=True, inline="always")
def _undo(me, opp, src, die, hit):
    dest = src - die
    me[src] += 1
    if dest >= 1:
        me[dest] -= 1
        if hit:
            opp[dest] = 1
            opp[0] -= 1
    else:
        me[OFF] -= 1


@njit(cache=True, inline="always")
def _outside_delta(src, die):
    """Change of the count of my checkers outside home when ``src`` moves ``die``."""
    return -1 if src >= 7 and src - die <= 6 else 0


@njit(cache=True)
def _record(me, opp, s, rank, st, out):
    """Add the current board as a result of rank ``rank``; ``st`` holds
    [best rank, count, stamp] and the dedupe table. Returns ``out`` (maybe grown)."""
    best = st[0]
    if rank < best:
        return out
    if rank > best:
        st[0] = rank
        st[1] = 0
        st[2] += 1                      # forget the worse results
    k1 = np.int64(0)
    for p in range(1, 17):
        k1 = (k1 << 4) | me[p]
    k2 = np.int64(0)
    for p in range(17, 26):
        k2 = (k2 << 4) | me[p]
    k2 = (k2 << 4) | me[OFF]
    for p in range(1, 25):
        k2 = (k2 << 1) | (1 if (opp[p] == 0 and s[THEM + 25 - p] == 1) else 0)
    h = k1 * 1000003 ^ k2
    i = (h ^ (h >> 29) ^ (h >> 13)) & (_TABLE - 1)
    stamp = st[2]
    while st[_STAMPS + i] == stamp:
        if st[_KEYS + 2 * i] == k1 and st[_KEYS + 2 * i + 1] == k2:
            return out
        i = (i + 1) & (_TABLE - 1)
    st[_STAMPS + i] = stamp
    st[_KEYS + 2 * i] = k1
    st[_KEYS + 2 * i + 1] = k2
    n = st[1]
    if n == out.shape[0]:
        bigger = np.empty((2 * n, STATE_LEN), np.int16)
        bigger[:n] = out
        out = bigger
    row = out[n]
    row[:] = 0
    for q in range(1, 25):
        row[ME + q] = opp[25 - q]
    row[ME + OFF] = s[THEM + OFF]
    row[ME + BAR] = s[THEM + BAR] + opp[0]
    for i2 in range(26):
        row[THEM + i2] = me[i2]
    row[TURNS_ME] = s[TURNS_THEM]
    row[TURNS_THEM] = s[TURNS_ME] + 1
    st[1] = n + 1
    return out


def supports(rules) -> bool:
    """Whether :func:`generate_hit` plays the game of ``rules`` (an
    :class:`engine.variants.Rules`): hitting, opposite directions, no nardy rules."""
    from .variants import BLOCK_NONE, CASCADE_NONE, HIT, MOTHER_NONE, OPPOSITE
    return (rules.meet == HIT and rules.geometry == OPPOSITE and not rules.head
            and rules.block == BLOCK_NONE and not rules.start_rule
            and rules.cascade == CASCADE_NONE and rules.mother == MOTHER_NONE)


def new_scratch() -> np.ndarray:
    """Work space of :func:`generate_hit` (reuse one per thread of play)."""
    return np.zeros(4 + 3 * _TABLE, np.int64)


@njit(cache=True)
def generate_hit(s, d1, d2, st, out):
    """Every distinct legal successor of ``s`` for the roll ``d1, d2`` in a hitting
    game with opposite directions, flipped, into ``out`` (grown if needed); ``st`` is
    :func:`new_scratch`. Returns ``(count, out)`` like
    :func:`engine._movegen.generate`."""
    me = np.empty(26, np.int64)
    opp = np.zeros(25, np.int64)
    for i in range(26):
        me[i] = s[ME + i]
    for p in range(1, 25):
        opp[p] = s[THEM + 25 - p]
    outside = 0
    for p in range(7, 26):
        outside += me[p]
    st[0] = -1
    st[1] = 0
    st[2] += 1
    if d1 != d2:
        hi = max(d1, d2)
        lo = min(d1, d2)
        for order in range(2):
            a = hi if order == 0 else lo
            b = lo if order == 0 else hi
            rank1 = 2 if order == 0 else 1
            for s1 in range(25, 0, -1):
                if not _legal(me, opp, s1, a, outside):
                    continue
                h1 = _apply(me, opp, s1, a)
                o1 = outside + _outside_delta(s1, a)
                if me[OFF] == 15:
                    out = _record(me, opp, s, 3, st, out)
                else:
                    moved = False
                    for s2 in range(25, 0, -1):
                        if not _legal(me, opp, s2, b, o1):
                            continue
                        moved = True
                        h2 = _apply(me, opp, s2, b)
                        out = _record(me, opp, s, 3, st, out)
                        _undo(me, opp, s2, b, h2)
                    if not moved:
                        out = _record(me, opp, s, rank1, st, out)
                _undo(me, opp, s1, a, h1)
    else:
        d = d1
        for s1 in range(25, 0, -1):
            if not _legal(me, opp, s1, d, outside):
                continue
            h1 = _apply(me, opp, s1, d)
            o1 = outside + _outside_delta(s1, d)
            moved1 = False
            if me[OFF] == 15:
                out = _record(me, opp, s, 4, st, out)
                moved1 = True
            else:
                for s2 in range(s1, 0, -1):
                    if not _legal(me, opp, s2, d, o1):
                        continue
                    moved1 = True
                    h2 = _apply(me, opp, s2, d)
                    o2 = o1 + _outside_delta(s2, d)
                    moved2 = False
                    if me[OFF] == 15:
                        out = _record(me, opp, s, 4, st, out)
                        moved2 = True
                    else:
                        for s3 in range(s2, 0, -1):
                            if not _legal(me, opp, s3, d, o2):
                                continue
                            moved2 = True
                            h3 = _apply(me, opp, s3, d)
                            o3 = o2 + _outside_delta(s3, d)
                            moved3 = False
                            if me[OFF] == 15:
                                out = _record(me, opp, s, 4, st, out)
                                moved3 = True
                            else:
                                for s4 in range(s3, 0, -1):
                                    if not _legal(me, opp, s4, d, o3):
                                        continue
                                    moved3 = True
                                    h4 = _apply(me, opp, s4, d)
                                    out = _record(me, opp, s, 4, st, out)
                                    _undo(me, opp, s4, d, h4)
                            if not moved3:
                                out = _record(me, opp, s, 3, st, out)
                            _undo(me, opp, s3, d, h3)
                    if not moved2:
                        out = _record(me, opp, s, 2, st, out)
                    _undo(me, opp, s2, d, h2)
            if not moved1:
                out = _record(me, opp, s, 1, st, out)
            _undo(me, opp, s1, d, h1)
    if st[1] == 0:                      # nothing playable: the turn is lost
        out = _record(me, opp, s, 0, st, out)
    return st[1], out
