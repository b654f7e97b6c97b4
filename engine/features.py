"""Hand-crafted network inputs that the raw per-slot encoding cannot express.

Tesauro's raw units make pip counts, blot counts and made points linear functions of the
inputs, so one layer of sums gets those for free. What it cannot build is a *relation
between checkers*: whether the armies are still in contact, how many rolls hit a blot,
how long a prime is. :func:`features` computes five such numbers for a state, seen from
the side to move, for the games with opposite directions of play (backgammon, portes):

0. ``contact``: 1 while some checker of mine still has to pass one of the opponent's
   (0 in a pure race);
1. ``my_shots``: share of the 36 rolls on which the opponent can hit one of my blots
   from a distance of at most 12 (a die, the sum of both, or a double's multiples;
   points in between are not checked, and from the bar only an entering checker);
2. ``their_shots``: the same for the opponent's blots;
3. ``my_prime``: my longest run of made points (two or more checkers), divided by 6;
4. ``their_prime``: the opponent's, likewise.

They take a few tens of nanoseconds (bit masks and a precomputed table), and they are
returned as a tuple so the hot kernels allocate nothing.
"""

import numpy as np
from numba import njit

from . import _layout as L

N_FEATURES = 5
"""Inputs :func:`features` gives."""


def _hit_table() -> np.ndarray:
    """``table[mask]``: share of the 36 rolls that hit at some distance ``d`` (bit
    ``d - 1`` of the 12-bit ``mask``) with one die, the sum of both, or three or four
    times a double's number."""
    table = np.zeros(1 << 12, np.float32)
    for mask in range(1 << 12):
        hits = 0
        for a in range(1, 7):
            for b in range(1, 7):
                reach = {a, b, a + b}
                if a == b:
                    reach |= {3 * a, 4 * a}
                if any(d <= 12 and mask >> (d - 1) & 1 for d in reach):
                    hits += 1
        table[mask] = hits / 36.0
    table.setflags(write=False)
    return table


_HITS = _hit_table()


@njit(cache=True, inline="always")
def _shots(s, blot_side, shooter_side):
    """Share of rolls on which ``shooter_side`` hits a blot of ``blot_side``."""
    mask = 0
    for p in range(1, 25):
        if s[blot_side + p] != 1:
            continue
        # a shooter on its own point q stands on the blot side's point 25 - q and moves
        # toward the blot side's higher numbers; from the bar it enters at distance p
        for d in range(1, 13):
            r = p - d
            if r < 0:
                break
            if r == 0:
                if s[shooter_side + L.BAR] > 0:
                    mask |= 1 << (d - 1)
            elif s[shooter_side + 25 - r] > 0:
                mask |= 1 << (d - 1)
    return _HITS[mask]


@njit(cache=True, inline="always")
def _prime(s, side):
    best = 0
    run = 0
    for p in range(1, 25):
        if s[side + p] >= 2:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return np.float32(best / 6.0)


@njit(cache=True)
def features(s):
    """The :data:`N_FEATURES` features of state ``s`` (from its side to move)."""
    mine = 0
    for p in range(25, 0, -1):
        if s[L.ME + p] > 0:
            mine = p
            break
    theirs = 0
    for q in range(25, 0, -1):
        if s[L.THEM + q] > 0:
            theirs = q
            break
    contact = np.float32(1.0) if mine + theirs > 25 else np.float32(0.0)
    return (contact, _shots(s, L.ME, L.THEM), _shots(s, L.THEM, L.ME),
            _prime(s, L.ME), _prime(s, L.THEM))
