"""Hand-crafted network inputs that the raw per-slot encoding cannot express.

Tesauro's raw units make pip counts, blot counts and made points linear functions of the
inputs, so one layer of sums gets those for free. What it cannot build is a *relation
between checkers*: whether the armies are still in contact, how many rolls hit a blot,
how long a prime is, how hard a back checker finds it to escape. :func:`features`
computes such numbers for a state, seen from the side to move, for the games with
opposite directions of play (backgammon, portes):

0. ``contact``: 1 while some checker of mine still has to pass one of the opponent's
   (0 in a pure race);
1. ``my_shots``: share of the 36 rolls on which the opponent can hit one of my blots
   from a distance of at most 12 (a die, the sum of both, or a double's multiples;
   points in between are not checked, and from the bar only an entering checker);
2. ``their_shots``: the same for the opponent's blots;
3. ``my_prime``: my longest run of made points (two or more checkers), divided by 6;
4. ``their_prime``: the opponent's, likewise;
5. ``my_escapes``: share of the rolls on which my rearmost checker can jump the
   opponent's points in the 12 in front of it (GNU Backgammon's "back escapes": the
   landing point open and not both one-die points closed);
6. ``their_escapes``: the same for the opponent's rearmost checker;
7. ``my_contained``: 1 - the fewest escapes a checker of mine would have from any of
   my points 15..24 (how well the opponent's points contain my back checkers);
8. ``their_contained``: the same for the opponent's checkers against my points;
9. ``my_behind``: pips my checkers must travel to pass the opponent's rearmost
   checker, / 152 (GNU Backgammon's "break contact");
10. ``their_behind``: the same for the opponent;
11. ``my_dance``: share of rolls on which a checker of mine on the bar would not
    enter, (closed points of the opponent's home board / 6) squared;
12. ``their_dance``: the same against my home board.

The first five are the encoder ``tesauro198+f5``; all thirteen ``tesauro198+f13``.
They take some tens of nanoseconds (bit masks and precomputed tables), and they are
returned as a tuple so the hot kernels allocate nothing.
"""

import numpy as np
from numba import njit

from . import _layout as L

N_FEATURES = 13
"""Inputs :func:`features` gives (an encoder may use the first few)."""


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


def _escape_table() -> np.ndarray:
    """``table[window]``: rolls (of 36) on which a checker jumps the closed points of
    ``window``, a 12-bit mask whose bit ``j`` is the point ``12 - j`` pips ahead: it
    escapes when the point both dice reach is open and not both one-die points are
    closed (GNU Backgammon's ``anEscapes``, on a mirrored mask)."""
    table = np.zeros(1 << 12, np.float32)
    for window in range(1 << 12):
        def closed(d):
            return window >> (12 - d) & 1
        rolls = 0
        for a in range(1, 7):
            for b in range(1, 7):
                if not closed(a + b) and not (closed(a) and closed(b)):
                    rolls += 1
        table[window] = rolls
    table.setflags(write=False)
    return table


_ESCAPES = _escape_table()


@njit(cache=True, inline="always")
def _closed(s, side):
    """Mask of the points (bit ``p``, in the *other* side's numbering) where ``side``
    has two or more checkers."""
    m = np.int64(0)
    for q in range(1, 25):
        if s[side + q] >= 2:
            m |= np.int64(1) << (25 - q)
    return m


@njit(cache=True, inline="always")
def _escapes(closed, r):
    """Escaping rolls of a checker on point ``r`` (25: the bar) of its side, against
    ``closed`` (the opponent's points in its numbering)."""
    return _ESCAPES[((closed << 12) >> r) & 4095]


@njit(cache=True, inline="always")
def _rearmost(s, side):
    """``side``'s highest point holding a checker (25: the bar; 0: none left)."""
    for p in range(25, 0, -1):
        if s[side + p] > 0:
            return p
    return 0


@njit(cache=True, inline="always")
def _side(s, side, other):
    """Escapes, containment, pips behind and dance of ``side`` against ``other``."""
    closed = _closed(s, other)
    rear = _rearmost(s, side)
    escapes = _escapes(closed, rear) / 36.0 if rear > 0 else 1.0
    fewest = 36.0
    for p in range(15, 25):
        e = _escapes(closed, p)
        if e < fewest:
            fewest = e
    their_rear = _rearmost(s, other)
    behind = 0
    for p in range(26 - their_rear, 26):
        behind += s[side + p] * (p - (25 - their_rear))
    home = 0
    for q in range(1, 7):
        if s[other + q] >= 2:
            home += 1
    return (np.float32(escapes), np.float32(1.0 - fewest / 36.0),
            np.float32(behind / 152.0), np.float32(home * home / 36.0))


@njit(cache=True)
def features(s):
    """The :data:`N_FEATURES` features of state ``s`` (from its side to move)."""
    contact = (np.float32(1.0) if _rearmost(s, L.ME) + _rearmost(s, L.THEM) > 25
               else np.float32(0.0))
    me_esc, me_cont, me_behind, me_dance = _side(s, L.ME, L.THEM)
    th_esc, th_cont, th_behind, th_dance = _side(s, L.THEM, L.ME)
    return (contact, _shots(s, L.ME, L.THEM), _shots(s, L.THEM, L.ME),
            _prime(s, L.ME), _prime(s, L.THEM), me_esc, th_esc, me_cont, th_cont,
            me_behind, th_behind, me_dance, th_dance)
