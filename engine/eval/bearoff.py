"""Bear-off databases: exact roll-count distributions of home-board races, and an exact
two-sided table of the small ones.

A side whose checkers are all on its home points 1..6 (at most 15 of them, the rest
borne off) races alone: the opponent cannot touch it in any of the six games once both
sides are home. For each of the ``C(21, 6) = 54264`` such home boards the database holds

* ``off[i, n]``: the probability that the side needs exactly ``n`` rolls to bear off
  every checker, each roll played to **minimise the expected number of rolls**;
* ``first[i, n]``: for boards of 15 checkers (none off yet), the probability that the
  first checker comes off on roll ``n``, each roll played to minimise the expected rolls
  to that first checker (saving the gammon); a board with a checker off has ``n = 0``.

Both are built here by dynamic programming over the 21 rolls, boards taken in
increasing pip count so that every successor is known before it is needed
(:func:`build`, about two seconds in numba), and cached in a file
(``python -m engine.eval.bearoff --build``; :func:`default_path`).

Where both sides are home (no bar, no pins, no pending dice) the race's outputs for the
side to move, who rolls first, follow from the two sides' distributions
(:func:`race_probs`): he wins when he needs no more rolls than the opponent, wins a
gammon when the opponent, with none off, has not got a checker off before his last roll,
and loses a gammon in the mirror case. No backgammon is possible in such a race. The
one-sided tables assume each side plays its own race optimally, which is the standard
approximation (GNU Backgammon's one-sided database does the same); it is exact whenever
one side's play cannot matter, e.g. when one side is sure to finish next roll.

Where both sides have :data:`SMALL_CHECKERS` (six) or fewer checkers left, the race is
valued exactly instead, by a two-sided table as GNU Backgammon's default two-sided
database (six points, six checkers): ``two[i, j]``, the side to move's chance to win
with board ``i`` against ``j`` (924 boards each), each side playing every roll to win
most often, built with the one-sided tables (:func:`_build_two`: 0.44 s compiled, 2.2 s
with its compile, the first ``load`` on a fresh machine 3.5 s longer than without it;
helper 91's measure, 2026-12-07, the machine busy) and cached in the same file. With nine or more checkers off each side no gammon is left,
so the winning chance is the whole answer. Against the one-sided estimate it moves the
winning chance by 0.001 on average, 0.009 at most, over 300 random pairs of such boards
(2026-12-07, this machine). Beside it, the same pairs' cubeful money equities with the
cube centred, the mover's or the opponent's, each side playing and doubling for the
most from there (:meth:`BearoffDB.money_cube`), which the cube decisions of money play
use (:mod:`engine.search.bearoff_cube`). Both agree with GNU Backgammon 1.07's own
two-sided database (Debian's ``gnubg_ts0.bd``, six points and six checkers, decoded
pair by pair, 2026-12-07): over all 851,929 pairs the winning chance within 5.7e-5 and
the three cubeful equities within 3e-4, its 16-bit storage's rounding (it rounds down,
so an exact tie of take and pass, double/pass here by GNU Backgammon's own rule, reads
as double/take there).

Gul bara has tables of its own (``cascade``): from a player's 4th turn a double
``d``-``d`` there is a cascade, four ``d``, four ``d + 1``, ..., four 6, and in a home
race every die of it is played (a home board can always play a die), so nothing passes
to the opponent; the tables value a gul bara home race once every double of both sides
cascades (each side's 4th turn reached, or the game's under the option). The tables do
not apply under the *home mars* option (such a mars scores 4, which the five outputs
cannot express); :func:`applies` says so.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from pathlib import Path

import numpy as np

from engine._jit import FAST, njit
from engine.errors import NardyError, quote
from engine.eval.crossings import side_counts
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.scoring import S_CASCADE, score_table
from engine.rules.states import position_state
from engine.rules.variants import CASCADE_GAME, CASCADE_NONE, CASCADE_OWN, Rules, get_rules

POINTS = 6
"""Home points covered."""
CHECKERS = 15
"""Most checkers on a board."""
N_POSITIONS = comb(CHECKERS + POINTS, POINTS)
"""Boards of 0..15 checkers on 6 points: 54264."""
MAX_ROLLS = 32
"""Length of each distribution (15 checkers on the 6 point need at most 30 rolls)."""
MAX_ENDS = 256
"""Most plays of one roll from one board :func:`_ends` lists (a double: 126 orders of
four sources at most, another roll 72)."""
FORMAT = "nardy-bearoff-os6"
"""Tag stored in the cache file."""
FORMAT_CASCADE = "nardy-bearoff-os6-cascade"
"""Tag stored in the cache file of gul bara's tables (every double a cascade)."""
VERSION = 2
"""Layout version of the cache file (2: the plain tables' file holds the two-sided
table too)."""

# (rank tables) _T[k, m]: boards of k points with at most m checkers = C(m + k, k);
# _PRE[k, m, c]: boards of k points, at most m checkers, whose top point holds < c.
_T = np.array([[comb(m + k, k) for m in range(CHECKERS + 1)] for k in range(POINTS + 1)],
              dtype=np.int64)
_PRE = np.zeros((POINTS + 1, CHECKERS + 1, CHECKERS + 2), dtype=np.int64)
for _k in range(1, POINTS + 1):
    for _m in range(CHECKERS + 1):
        for _c in range(1, _m + 2):
            _PRE[_k, _m, _c] = _PRE[_k, _m, _c - 1] + _T[_k - 1, _m - (_c - 1)]
SMALL_CHECKERS = 6
"""Most checkers of a board in the two-sided table (GNU Backgammon's default two-sided
database is the same: six points, six checkers)."""
N_SMALL = comb(SMALL_CHECKERS + POINTS, POINTS)
"""Boards of 0..6 checkers on 6 points: 924."""


@lru_cache(maxsize=None)
def small_ranks() -> np.ndarray:
    """The ranks (:func:`rank`) of the boards of at most :data:`SMALL_CHECKERS`
    checkers, in increasing pips (the empty board first): the two-sided table's
    order."""
    def boards(points: int, left: int):
        if points == 0:
            yield ()
            return
        for c in range(left + 1):
            for rest in boards(points - 1, left - c):
                yield (c, *rest)

    found = []
    for counts in boards(POINTS, SMALL_CHECKERS):
        r = int(rank(np.array((0, *counts), np.int64)))
        found.append((sum((p + 1) * c for p, c in enumerate(counts)), r))
    ranks = np.array([r for _, r in sorted(found)], np.int64)
    ranks.flags.writeable = False
    return ranks


_NO_TWO = np.zeros((1, 1))
"""The two-sided table of tables that have none (gul bara's cascade ones)."""
_ROLLS = np.array([(a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(1, a + 1)],
                  dtype=np.int64)


def _pip_tails(turns: int, top: int) -> np.ndarray:
    """``tail[k, d]``: the chance that ``k`` rolls move ``d`` pips or more in all (a
    double four times its number), for ``k`` up to ``turns`` and ``d`` up to ``top``."""
    roll = np.zeros(25)
    for a in range(1, 7):
        for b in range(1, 7):
            roll[4 * a if a == b else a + b] += 1 / 36
    dist = np.zeros(top + 1)            # pips moved; the last cell: ``top`` or more
    dist[0] = 1.0
    tails = np.zeros((turns + 1, top + 1))
    for k in range(turns + 1):
        tails[k] = dist[::-1].cumsum()[::-1]
        nxt = np.zeros(top + 1)
        for pips in np.nonzero(roll)[0]:
            nxt[pips:] += dist[:top + 1 - pips] * roll[pips]
            nxt[top] += dist[top + 1 - pips:].sum() * roll[pips]
        dist = nxt
    return tails


def _dice_tails(turns: int) -> np.ndarray:
    """``tail[k, c]``: the chance that ``k`` rolls hold ``c`` dice or more (a double four,
    any other roll two), for ``k`` up to ``turns`` and ``c`` up to ``4 * turns``."""
    tails = np.zeros((turns + 1, 4 * turns + 2))
    for k in range(turns + 1):
        for doubles in range(k + 1):
            chance = comb(k, doubles) * (1 / 6) ** doubles * (5 / 6) ** (k - doubles)
            tails[k, :2 * k + 2 * doubles + 1] += chance
    return tails


DICE_TAIL = _dice_tails(MAX_ROLLS)
"""``DICE_TAIL[k, c]``: the chance that ``k`` rolls hold ``c`` dice or more
(:func:`_dice_tails`): a die crosses at most one boundary of the quarter boards
(:func:`engine.eval.crossings.race_certain`), so a side is off no sooner than its rolls
hold as many dice as it has crossings to make (:func:`race_bounds`)."""
MAX_PIPS = 375
"""The most pips a side of fifteen checkers can have to move (all on the bar)."""
PIP_TAIL = _pip_tails(MAX_ROLLS, MAX_PIPS + 1)
"""``PIP_TAIL[k, d]``: the chance that ``k`` rolls move ``d`` pips or more
(:func:`_pip_tails`): a side cannot be off, or bear off a first checker, sooner than its
dice give the pips it must move (:func:`race_bounds`)."""


class BearoffError(NardyError):
    """A bear-off database file that is missing, of another version, or malformed."""

    code = "invalid_bearoff"


# --------------------------------------------------------------------- ranking
@njit(cache=True)
def rank(board):
    """Index 0..54263 of ``board`` (``board[p]`` checkers on point p, p = 1..6;
    ``board[0]`` ignored). Boards are ordered by the top point's count first."""
    total = 0
    for p in range(1, POINTS + 1):
        total += board[p]
    r = 0
    m = CHECKERS
    for k in range(POINTS, 0, -1):
        c = board[k]
        r += _PRE[k, m, c]
        m -= c
    return r


@njit(cache=True)
def _unrank_all(boards):
    """Every board into ``boards[rank]`` (nested loops over the counts)."""
    b = np.zeros(POINTS + 1, np.int64)
    for c6 in range(CHECKERS + 1):
        for c5 in range(CHECKERS + 1 - c6):
            for c4 in range(CHECKERS + 1 - c6 - c5):
                for c3 in range(CHECKERS + 1 - c6 - c5 - c4):
                    for c2 in range(CHECKERS + 1 - c6 - c5 - c4 - c3):
                        for c1 in range(CHECKERS + 1 - c6 - c5 - c4 - c3 - c2):
                            b[1], b[2], b[3], b[4], b[5], b[6] = c1, c2, c3, c4, c5, c6
                            r = rank(b)
                            for p in range(POINTS + 1):
                                boards[r, p] = b[p]


# --------------------------------------------------------------------- one-sided moves
@njit(cache=True, inline="always")
def _can_move(b, src, die):
    """Whether a checker on ``src`` may be played ``die`` points (all checkers home)."""
    if b[src] == 0:
        return False
    if src >= die:
        return True
    for p in range(src + 1, POINTS + 1):
        if b[p] > 0:
            return False
    return True


@njit(cache=True, inline="always")
def _apply(b, src, die):
    b[src] -= 1
    if src > die:
        b[src - die] += 1


@njit(cache=True, inline="always")
def _undo(b, src, die):
    b[src] += 1
    if src > die:
        b[src - die] -= 1


@njit(cache=True, inline="always")
def _empty(b):
    for p in range(1, POINTS + 1):
        if b[p] > 0:
            return False
    return True


@njit(cache=True, inline="always")
def _push(b, out, n):
    """Append the rank of board ``b`` to ``out[:n]``; the new count."""
    out[n] = rank(b)
    return n + 1


@njit(cache=True)
def _ends(b, d1, d2, out):
    """The end boards' ranks of every play of roll ``d1, d2`` from ``b`` into ``out``
    (some more than once: one per order of the dice or of a double's moves); their
    count. Every die can always be played while checkers remain, so the forced-play
    rule only stops a roll when the last checker is off. At most :data:`MAX_ENDS`."""
    n = 0
    if d1 != d2:
        for order in range(2):
            a = d1 if order == 0 else d2
            c = d2 if order == 0 else d1
            for s1 in range(1, POINTS + 1):
                if not _can_move(b, s1, a):
                    continue
                _apply(b, s1, a)
                if _empty(b):
                    n = _push(b, out, n)
                else:
                    for s2 in range(1, POINTS + 1):
                        if not _can_move(b, s2, c):
                            continue
                        _apply(b, s2, c)
                        n = _push(b, out, n)
                        _undo(b, s2, c)
                _undo(b, s1, a)
        return n
    d = d1
    # a double: four moves of d, sources in non-increasing order (any order of equal
    # moves can be so rearranged), stopping when the last checker is off
    for s1 in range(POINTS, 0, -1):
        if not _can_move(b, s1, d):
            continue
        _apply(b, s1, d)
        if _empty(b):
            n = _push(b, out, n)
        else:
            for s2 in range(s1, 0, -1):
                if not _can_move(b, s2, d):
                    continue
                _apply(b, s2, d)
                if _empty(b):
                    n = _push(b, out, n)
                else:
                    for s3 in range(s2, 0, -1):
                        if not _can_move(b, s3, d):
                            continue
                        _apply(b, s3, d)
                        if _empty(b):
                            n = _push(b, out, n)
                        else:
                            for s4 in range(s3, 0, -1):
                                if not _can_move(b, s4, d):
                                    continue
                                _apply(b, s4, d)
                                n = _push(b, out, n)
                                _undo(b, s4, d)
                        _undo(b, s3, d)
                _undo(b, s2, d)
        _undo(b, s1, d)
    return n


@njit(cache=True)
def _best_end(b, d1, d2, score):
    """Rank of the end board of roll ``d1, d2`` from ``b`` with the lowest ``score``
    (ties: the first found, :func:`_ends`' order)."""
    out = np.empty(MAX_ENDS, np.int64)
    n = _ends(b, d1, d2, out)
    best = -1
    best_s = 1e300
    for k in range(n):
        if score[out[k]] < best_s:
            best_s, best = score[out[k]], out[k]
    return best


@njit(cache=True)
def _cascade_ends(b, i, mean, ends, worth):
    """Board ``i`` (``b``)'s end of each cascade, played to the lowest ``mean``: for
    ``d`` = 6 down to 1, ``ends[d, i]`` is where four ``d`` and then the cascade of
    ``d + 1`` (its own best, already in ``ends[d + 1]``) lead, and ``worth[d, i]`` that
    end's ``mean``. Every step takes pips off, so the boards after four ``d`` come
    before ``i`` in the order of increasing pips and are known."""
    for d in range(POINTS, 0, -1):
        if d == POINTS:
            j = _best_end(b, d, d, mean)
            ends[d, i] = j
        else:
            j = _best_end(b, d, d, worth[d + 1])
            ends[d, i] = ends[d + 1, j]
        worth[d, i] = mean[ends[d, i]]


@njit(cache=True)
def _build(boards, order, rolls, off, first, cascade):
    """Fill ``off`` and ``first`` (see the module docstring), boards in ``order``
    (increasing pips); with ``cascade``, a double ``d``-``d`` is gul bara's cascade:
    four ``d``, four ``d + 1``, ..., four 6, in that order, each die played (a home
    board can always play a die while it holds a checker), the whole chosen to
    minimise the expected rolls."""
    n = boards.shape[0]
    mean_off = np.zeros(n)
    mean_first = np.zeros(n)
    # the cascades' ends and their worth, by first die (rows 1..6; row 0 unused)
    ends_off = np.zeros((POINTS + 1, n), np.int64)
    ends_first = np.zeros((POINTS + 1, n), np.int64)
    worth_off = np.zeros((POINTS + 1, n))
    worth_first = np.zeros((POINTS + 1, n))
    b = np.zeros(POINTS + 1, np.int64)
    for oi in range(n):
        i = order[oi]
        total = 0
        for p in range(POINTS + 1):
            b[p] = boards[i, p]
        for p in range(1, POINTS + 1):
            total += b[p]
        for d in range(1, POINTS + 1):      # an empty board, or one with a checker off
            ends_off[d, i] = i              # (first: nothing left to wait for) ends here
            ends_first[d, i] = i
        if total == 0:
            off[i, 0] = 1.0
            first[i, 0] = 1.0
            continue
        full = total == CHECKERS
        if not full:
            first[i, 0] = 1.0
        if cascade:
            _cascade_ends(b, i, mean_off, ends_off, worth_off)
            if full:
                _cascade_ends(b, i, mean_first, ends_first, worth_first)
        for r in range(rolls.shape[0]):
            w = rolls[r, 2] / 36.0
            d1, d2 = rolls[r, 0], rolls[r, 1]
            if cascade and d1 == d2:
                j = ends_off[d1, i]
            else:
                j = _best_end(b, d1, d2, mean_off)
            for t in range(MAX_ROLLS - 1):
                off[i, t + 1] += w * off[j, t]
            mean_off[i] += w * (1.0 + mean_off[j])
            if full:
                if cascade and d1 == d2:
                    j = ends_first[d1, i]
                else:
                    j = _best_end(b, d1, d2, mean_first)
                for t in range(MAX_ROLLS - 1):
                    first[i, t + 1] += w * first[j, t]
                mean_first[i] += w * (1.0 + mean_first[j])


@njit(cache=True)
def _build_two(boards, small, rolls, two, cube):
    """Fill ``two[i, j]``, the chance that the side to move with the small board ``i``
    (:data:`SMALL_CHECKERS` or fewer checkers; ``small`` lists their ranks, in
    increasing pips) wins against the small board ``j``, each side playing every roll
    to win most often. The roll's best end ``e`` is worth 1 when it is empty, else
    ``1 - two[j, e]``: the pair ``(j, e)`` has fewer pips than ``(i, j)`` (every roll
    takes pips off), so pairs taken in increasing total pips find it known.

    And ``cube[k, i, j]``, the cubeful money equity of the side to move if he does not
    double now (in cube units; each side playing every roll and taking every cube
    action for the most equity, no gammons being left, no beavers, the cube without a
    limit) with the cube centred (``k = 0``), his (1) or the opponent's (2). Doubled
    and taken, the cube is the opponent's at twice the value: double/take is
    ``2 * cube[2, i, j]``, double/pass 1."""
    ns = small.shape[0]
    index = np.full(boards.shape[0], -1, np.int64)
    pips = np.zeros(ns, np.int64)
    for k in range(ns):
        index[small[k]] = k
        for p in range(1, POINTS + 1):
            pips[k] += p * boards[small[k], p]
    nr = rolls.shape[0]
    ends = np.zeros((ns, nr, MAX_ENDS), np.int64)
    count = np.zeros((ns, nr), np.int64)
    out = np.empty(MAX_ENDS, np.int64)
    b = np.zeros(POINTS + 1, np.int64)
    for k in range(ns):
        for p in range(POINTS + 1):
            b[p] = boards[small[k], p]
        if pips[k] == 0:
            continue
        for r in range(nr):
            n = _ends(b, rolls[r, 0], rolls[r, 1], out)
            m = 0
            for t in range(n):                  # distinct ends only
                e = index[out[t]]
                seen = False
                for u in range(m):
                    if ends[k, r, u] == e:
                        seen = True
                        break
                if not seen:
                    ends[k, r, m] = e
                    m += 1
            count[k, r] = m
    # boards by pips: small[] is in increasing pips, so each pip count is a slice
    top = pips[ns - 1]
    lo = np.zeros(top + 2, np.int64)            # lo[p]: how many boards have < p pips
    for k in range(ns):
        lo[pips[k] + 1] += 1
    for p in range(1, top + 2):
        lo[p] += lo[p - 1]
    for total in range(2, 2 * top + 1):
        for i in range(ns):
            pj = total - pips[i]
            if pips[i] == 0 or pj < 1 or pj > top:
                continue
            for j in range(lo[pj], lo[pj + 1]):
                v = 0.0
                nd_c = 0.0
                nd_m = 0.0
                nd_o = 0.0
                for r in range(nr):
                    best = 0.0
                    best_c = -1e9
                    best_m = -1e9
                    best_o = -1e9
                    for u in range(count[i, r]):
                        e = ends[i, r, u]
                        if pips[e] == 0:
                            w = 1.0
                            c_c = c_m = c_o = 1.0        # the game won, a cube's worth
                        else:
                            w = 1.0 - two[j, e]
                            # the opponent on roll: the centred cube, ours (his view:
                            # the other's) or his own, each with his best action
                            take = min(2.0 * cube[2, j, e], 1.0)
                            c_c = -max(cube[0, j, e], take)
                            c_m = -cube[2, j, e]
                            c_o = -max(cube[1, j, e], take)
                        best = max(best, w)
                        best_c = max(best_c, c_c)
                        best_m = max(best_m, c_m)
                        best_o = max(best_o, c_o)
                    share = rolls[r, 2] / 36.0
                    v += share * best
                    nd_c += share * best_c
                    nd_m += share * best_m
                    nd_o += share * best_o
                two[i, j] = min(v, 1.0)            # a sum of 21 shares may pass 1 by an ulp
                cube[0, i, j] = nd_c
                cube[1, i, j] = nd_m
                cube[2, i, j] = nd_o


# --------------------------------------------------------------------- the tables
@dataclass(frozen=True, eq=False)
class BearoffDB:
    """The one-sided tables (see the module docstring)."""

    off: np.ndarray
    """``float64[54264, 32]``: P(exactly n rolls to bear off every checker)."""
    first: np.ndarray
    """``float64[54264, 32]``: P(first checker off on roll n); n = 0 once one is off."""
    off_tail: np.ndarray
    """``float64[54264, 33]``: P(at least n rolls to bear off), n = 0..32."""
    first_tail: np.ndarray
    """``float64[54264, 33]``: P(first checker needs at least n rolls)."""
    two: np.ndarray
    """``float64[924, 924]``: the two-sided table (:func:`_build_two`): ``two[i, j]``,
    the side to move's chance to win with the small board ``i`` against ``j``, both
    played to win; ``float64[1, 1]`` (none) in the cascade tables."""
    small: np.ndarray
    """``int64[54264]``: each board's row in ``two`` (its small index), -1 for a board
    of more than :data:`SMALL_CHECKERS` checkers."""
    cubeful: np.ndarray
    """``float64[3, 924, 924]``: the two-sided money equities of not doubling, the cube
    centred, the mover's or the opponent's (:func:`_build_two`); ``float64[3, 1, 1]``
    (none) in the cascade tables."""
    cascade: bool = False
    """Whether a double is gul bara's cascade in these tables (:func:`build`)."""

    @classmethod
    def from_tables(cls, off: np.ndarray, first: np.ndarray, cascade: bool = False,
                    two: np.ndarray | None = None,
                    cubeful: np.ndarray | None = None) -> "BearoffDB":
        off = np.ascontiguousarray(off, dtype=np.float64)
        first = np.ascontiguousarray(first, dtype=np.float64)
        two = _NO_TWO if two is None else np.ascontiguousarray(two, dtype=np.float64)
        cubeful = (np.zeros((3, 1, 1)) if cubeful is None
                   else np.ascontiguousarray(cubeful, dtype=np.float64))
        small = np.full(N_POSITIONS, -1, np.int64)
        small[small_ranks()] = np.arange(N_SMALL)
        return cls(off, first, _tails(off), _tails(first), two, small, cubeful,
                   bool(cascade))

    def arrays(self) -> tuple:
        """``(off, off_tail, first_tail)`` for the kernels."""
        return self.off, self.off_tail, self.first_tail

    def two_arrays(self) -> tuple:
        """``(two, small)`` for the kernels (:func:`race_probs`)."""
        return self.two, self.small

    def pair(self, position: Position) -> tuple[int, int] | None:
        """The two-sided table's rows ``(i, j)`` of ``position``'s side to move and
        opponent, or None where the table does not value it: not a home race of a game
        these tables serve (:func:`applies`), more than :data:`SMALL_CHECKERS` checkers
        on either side, or no two-sided table (the cascade ones)."""
        _check_position(position)
        if self.two.shape[0] != N_SMALL or not applies(position):
            return None
        if uses_cascade(get_rules(position.variant)) != self.cascade:
            return None
        if position.off[0] == 0 or position.off[1] == 0:
            return None
        i, j = (int(self.small[self.index(list(side[:POINTS]))])
                for side in (position.me, position.them))
        return (i, j) if i > 0 and j > 0 else None

    def money_cube(self, position: Position, owner: str) -> tuple[float, float] | None:
        """Exact money equities ``(no_double, double_take)`` of ``position``'s side to
        move, in cube units, with the cube ``owner`` ("centre", "me" or "them"; no
        double_take, None, when "them"), each side playing and doubling for the most
        equity from here on (:func:`_build_two`); None where the two-sided table does
        not value the position (:meth:`pair`). Double/pass is 1."""
        if owner not in ("centre", "me", "them"):      # whatever the position
            raise BearoffError(f"owner = {quote(owner)}: expected 'centre', 'me' or "
                               f"'them'")
        ij = self.pair(position)
        if ij is None:
            return None
        i, j = ij
        nd = float(self.cubeful[{"centre": 0, "me": 1, "them": 2}[owner], i, j])
        dt = None if owner == "them" else 2.0 * float(self.cubeful[2, i, j])
        return nd, dt

    def win_chance(self, board, against) -> float:
        """The two-sided table's chance that the side to move, with the home board
        ``board``, wins the race against ``against`` (each six counts, points 1..6, of
        :data:`SMALL_CHECKERS` checkers or fewer, and ``board`` not empty)."""
        if self.two.shape[0] != N_SMALL:
            raise BearoffError("the cascade tables have no two-sided table")
        i, j = (int(self.small[self.index(x)]) for x in (board, against))
        for name, x, k in (("board", board, i), ("against", against, j)):
            if k < 0:
                raise BearoffError(f"{name} = {quote(x)}: the two-sided table holds "
                                   f"boards of at most {SMALL_CHECKERS} checkers")
            if k == 0:
                raise BearoffError(f"{name} = {quote(x)}: no checker left (the game "
                                   f"is over)")
        return float(self.two[i, j])

    def index(self, board) -> int:
        """Rank of a home board given as six counts (points 1..6): six integers 0..15
        summing to at most 15, else :class:`BearoffError` naming ``board``."""
        try:
            a = np.asarray(board)
        except Exception:                      # a ragged or exotic object
            a = np.asarray(None)
        if (a.shape != (POINTS,) or a.dtype.kind not in "iu" or a.min() < 0
                or a.sum() > CHECKERS):
            raise BearoffError(f"board = {quote(board)}: expected six integer counts "
                               f"(points 1..6) of 0..{CHECKERS}, summing to at most "
                               f"{CHECKERS}")
        b = np.zeros(POINTS + 1, np.int64)
        b[1:] = a
        return int(rank(b))

    def rolls(self, board) -> np.ndarray:
        """Distribution of the rolls to bear off ``board`` (six counts, points 1..6)."""
        return self.off[self.index(board)]

    def first_off(self, board) -> np.ndarray:
        """Distribution of the rolls to the first checker off (15 checkers)."""
        return self.first[self.index(board)]

    def expected_rolls(self, board) -> float:
        """Mean number of rolls to bear off ``board``."""
        return float(np.dot(self.rolls(board), np.arange(MAX_ROLLS)))

    def probabilities(self, position: Position) -> np.ndarray:
        """The five outputs of ``position`` for its side to move; raises
        :class:`BearoffError` when the tables do not apply (see :func:`applies`), a
        :class:`~engine.errors.PositionError` when ``position`` is not a legal position
        (:func:`engine.rules.states.position_state`)."""
        _check_position(position)
        state = position_state(position)
        if not applies(position):
            raise BearoffError(f"{position!r} is not a race with both sides home "
                               f"in a game the bear-off tables cover")
        if uses_cascade(get_rules(position.variant)) != self.cascade:
            raise BearoffError(f"{position.variant} needs the "
                               f"{'plain' if self.cascade else 'cascade'} tables "
                               f"(load(cascade={not self.cascade})); these are the "
                               f"{'cascade' if self.cascade else 'plain'} ones")
        o = np.zeros(5)
        race_probs(state, *self.arrays(), *self.two_arrays(), o)
        return o


def _tails(p: np.ndarray) -> np.ndarray:
    """``tail[:, n] = sum(p[:, n:])``."""
    tail = np.zeros((p.shape[0], p.shape[1] + 1))
    tail[:, :-1] = np.cumsum(p[:, ::-1], axis=1)[:, ::-1]
    return tail


def build(cascade: bool = False) -> BearoffDB:
    """Build the tables from scratch (a couple of seconds); with ``cascade``, gul
    bara's, where every double is a cascade (:func:`_build`), and which have no
    two-sided table."""
    boards = np.zeros((N_POSITIONS, POINTS + 1), np.int64)
    _unrank_all(boards)
    pips = boards @ np.arange(POINTS + 1)
    order = np.argsort(pips, kind="stable")
    off = np.zeros((N_POSITIONS, MAX_ROLLS))
    first = np.zeros((N_POSITIONS, MAX_ROLLS))
    _build(boards, order, _ROLLS, off, first, bool(cascade))
    two = cube = None
    if not cascade:
        two = np.zeros((N_SMALL, N_SMALL))
        cube = np.zeros((3, N_SMALL, N_SMALL))
        _build_two(boards, small_ranks(), _ROLLS, two, cube)
    return BearoffDB.from_tables(off, first, cascade, two, cube)


def _format(cascade: bool) -> str:
    return FORMAT_CASCADE if cascade else FORMAT


def _file_name(cascade: bool) -> str:
    return "bearoff_os6_cascade.npz" if cascade else "bearoff_os6.npz"


def default_path(cascade: bool = False) -> Path:
    """Where the cache lives: ``$NARDY_BEAROFF`` if set, else
    ``$XDG_CACHE_HOME/nardy/bearoff_os6.npz`` (``~/.cache/nardy/...``); with
    ``cascade`` (gul bara's tables) the same name with ``_cascade`` before its suffix."""
    env = os.environ.get("NARDY_BEAROFF")
    if env:
        p = Path(env)
        return p.with_name(f"{p.stem}_cascade{p.suffix}") if cascade else p
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "nardy" / _file_name(cascade)


def save(db: BearoffDB, path: str | os.PathLike) -> Path:
    """Write the tables atomically (float64, compressed)."""
    import io

    from engine.eval.network import atomic_write_bytes
    buf = io.BytesIO()
    two = {} if db.cascade else {"two": db.two, "cubeful": db.cubeful}
    np.savez_compressed(buf, format=np.array(_format(db.cascade)), version=np.array(VERSION),
                        off=db.off, first=db.first, **two)
    atomic_write_bytes(path, buf.getvalue())
    return Path(path)


def read(path: str | os.PathLike, cascade: bool = False) -> BearoffDB:
    """Read a cache file written by :func:`save` (of gul bara's tables with
    ``cascade``); anything wrong with it (another format or version, tables of the
    wrong shape or type, values that are not distributions: non-finite, outside 0..1,
    rows not summing to 1; a two-sided table, or its cubeful one, missing from plain
    tables, or there in cascade ones) raises :class:`BearoffError`."""
    from engine.eval.network import NetworkFileError, read_npz
    try:
        z = read_npz(path, ("format", "version", "off", "first", "two", "cubeful"))
    except NetworkFileError as exc:
        raise BearoffError(f"not a readable bear-off file: {exc}") from None
    if ("format" not in z or "version" not in z or z["format"].shape != ()
            or z["version"].shape != ()):
        raise BearoffError(f"{path}: not a bear-off file (arrays {sorted(z)})")
    # the tag before the arrays: a version-1 file, or the other kind's tables, is named
    # as such (their arrays differ too: no two-sided table)
    fmt, version = z["format"], z["version"]
    want = _format(cascade)
    if (fmt.dtype.kind != "U" or str(fmt) != want or version.dtype.kind not in "iu"
            or int(version) != VERSION):
        raise BearoffError(f"{path}: format {quote(fmt.item())} version "
                           f"{quote(version.item())}; expected {want!r} {VERSION}")
    want_arrays = {"format", "version", "off", "first"} | (set() if cascade
                                                         else {"two", "cubeful"})
    if set(z) != want_arrays:
        raise BearoffError(f"{path}: arrays {sorted(z)}; expected {sorted(want_arrays)}: "
                           f"damaged")
    off, first = z["off"], z["first"]
    if off.shape != (N_POSITIONS, MAX_ROLLS) or first.shape != off.shape:
        raise BearoffError(f"{path}: tables of shape {off.shape}, {first.shape}; expected "
                           f"{(N_POSITIONS, MAX_ROLLS)}")
    for name, t in (("off", off), ("first", first)):
        if t.dtype.kind != "f":
            raise BearoffError(f"{path}: table {name} is {t.dtype}; expected float64")
        ok = np.isfinite(t).all(axis=1) & (t >= 0).all(axis=1) & (t <= 1 + 1e-9).all(axis=1)
        ok &= np.abs(t.sum(axis=1, where=np.isfinite(t)) - 1.0) <= 1e-6
        if not ok.all():
            row = int(np.flatnonzero(~ok)[0])
            raise BearoffError(f"{path}: table {name} row {row} is not a distribution "
                               f"(values 0..1 summing to 1): damaged")
    two = z.get("two")
    if two is not None:
        if two.shape != (N_SMALL, N_SMALL) or two.dtype.kind != "f":
            raise BearoffError(f"{path}: two-sided table of shape {two.shape}, "
                               f"{two.dtype}; expected float64{(N_SMALL, N_SMALL)}")
        if not (np.isfinite(two).all() and (two >= 0).all() and (two <= 1).all()):
            raise BearoffError(f"{path}: two-sided table holds values outside 0..1: "
                               f"damaged")
    cubeful = z.get("cubeful")
    if cubeful is not None:
        if cubeful.shape != (3, N_SMALL, N_SMALL) or cubeful.dtype.kind != "f":
            raise BearoffError(f"{path}: cubeful table of shape {cubeful.shape}, "
                               f"{cubeful.dtype}; expected float64{(3, N_SMALL, N_SMALL)}")
        if not (np.isfinite(cubeful).all() and (np.abs(cubeful) <= 1 + 1e-9).all()):
            raise BearoffError(f"{path}: cubeful table holds equities outside -1..1: "
                               f"damaged")
    return BearoffDB.from_tables(off, first, cascade, two, cubeful)


def _is_cache(path: Path, cascade: bool = False) -> bool:
    """Whether ``path`` is missing or a file :func:`load` may overwrite with the tables:
    one tagged as a bear-off cache of the same kind (:data:`FORMAT`, or with
    ``cascade`` :data:`FORMAT_CASCADE`; whatever is damaged in it: a file of the other
    kind is good tables asked for by the wrong name, kept) or the standard cache file
    (``<cache>/nardy/bearoff_os6.npz``, or ``bearoff_os6_cascade.npz``: this module's
    own)."""
    from engine.eval.network import NetworkFileError, read_npz
    if not os.path.lexists(path):
        return True
    if path.name == _file_name(cascade) and path.parent.name == "nardy":
        return True
    try:
        fmt = read_npz(path, ("format",)).get("format")
    except NetworkFileError:
        return False
    return fmt is not None and fmt.shape == () and fmt.dtype.kind == "U" \
        and str(fmt) == _format(cascade)


_LOADED: dict = {}


def load(path: str | os.PathLike | None = None, build_missing: bool = True,
         cascade: bool = False) -> BearoffDB:
    """The tables from ``path`` (default :func:`default_path`), built and cached there
    first when the file is missing (or unreadable) and ``build_missing``; kept in memory
    after the first call. ``cascade``: gul bara's tables (:func:`build`)."""
    cascade = bool(cascade)
    path = Path(path) if path is not None else default_path(cascade)
    key = (str(path), cascade)
    if key in _LOADED:
        return _LOADED[key]
    try:
        db = read(path, cascade)
    except BearoffError as exc:
        if not build_missing:
            raise
        if not _is_cache(path, cascade):
            raise BearoffError(f"{path} exists and is not a bear-off cache ({exc}); "
                               f"refusing to overwrite it with the tables: remove it or "
                               f"give another path") from None
        db = build(cascade)
        try:
            save(db, path)
        except OSError as exc:              # a read-only home: keep it in memory
            print(f"note: could not cache the bear-off tables at {path}: {exc}",
                  file=sys.stderr)
    _LOADED[key] = db
    return db


# --------------------------------------------------------------------- evaluation
def covers(rules: Rules) -> bool:
    """Whether the tables can value races of this game (not under the home mars
    option; gul bara's by its own tables, :func:`uses_cascade`)."""
    return not rules.home_mars


def uses_cascade(rules: Rules) -> bool:
    """Whether the game's tables are the cascade ones (gul bara: :func:`build`)."""
    return rules.cascade != CASCADE_NONE


def applies(position: Position, rules: Rules | None = None) -> bool:
    """Whether ``position`` is a race the tables value: both sides' checkers all on
    their home points (or off), nobody on the bar, no pins, no pending dice, the game
    not over, in a game :func:`covers` allows; in gul bara, with both sides' doubles
    cascading from now on (:func:`_home_race`)."""
    _check_position(position)
    if rules is None:
        rules = get_rules(position.variant)
    elif not isinstance(rules, Rules):
        raise BearoffError(f"rules = {quote(rules)}: expected a Rules "
                           f"(engine.rules.variants.get_rules) or None")
    return covers(rules) and bool(_home_race(position_state(position, rules),
                                             score_table(rules)))


def _check_position(position: object) -> None:
    if not isinstance(position, Position):
        raise BearoffError(f"position = {quote(position)}: expected a Position")


@njit(inline="always", **FAST)
def _home(s, side):
    """Whether every checker of the side whose block of ``s`` starts at ``side`` is on
    its points 1..6 (none on the bar)."""
    if s[side + L.BAR] != 0:
        return False
    for p in range(POINTS + 1, 25):
        if s[side + p] != 0:
            return False
    return True


@njit(cache=True)
def _home_race(s, scores):
    """Whether both sides of state ``s`` are home with checkers left, no bar, no pins,
    no pending dice; in gul bara (the score table ``scores`` gives its cascade
    setting) with every double of either side a cascade from now on, as the cascade
    tables have it (a player's 4th turn reached, or the game's under the option)."""
    if s[L.NPEND] != 0:
        return False
    cascade = scores[S_CASCADE]
    if cascade == CASCADE_OWN and (s[L.TURNS_ME] < 3 or s[L.TURNS_THEM] < 3):
        return False
    if cascade == CASCADE_GAME and s[L.TURNS_ME] + s[L.TURNS_THEM] < 3:
        return False
    if s[L.ME + L.OFF] == CHECKERS or s[L.THEM + L.OFF] == CHECKERS:
        return False
    if not (_home(s, L.ME) and _home(s, L.THEM)):
        return False
    for p in range(1, POINTS + 1):
        if s[L.PIN_ME + p] != 0 or s[L.PIN_THEM + p] != 0:
            return False
    return True


@njit(cache=True)
def _side_rank(s, side):
    b = np.zeros(POINTS + 1, np.int64)
    for p in range(1, POINTS + 1):
        b[p] = s[side + p]
    return rank(b)


@njit(cache=True)
def race_probs(s, off, off_tail, first_tail, two, small, o):
    """The five outputs of the home race ``s`` for its side to move, into ``o``
    (``s`` must satisfy :func:`_home_race`): exact by the two-sided table ``two``
    (``small``: each board's row there, :meth:`BearoffDB.two_arrays`) when both sides
    have :data:`SMALL_CHECKERS` or fewer checkers left and a checker off (no gammon
    then), else from the two sides' one-sided distributions."""
    a = _side_rank(s, L.ME)
    b = _side_rank(s, L.THEM)
    if two.shape[0] == N_SMALL and s[L.ME + L.OFF] > 0 and s[L.THEM + L.OFF] > 0:
        i = small[a]
        j = small[b]
        if i > 0 and j > 0:
            o[0] = two[i, j]
            o[1] = 0.0
            o[2] = 0.0
            o[3] = 0.0
            o[4] = 0.0
            return
    a_none_off = s[L.ME + L.OFF] == 0
    b_none_off = s[L.THEM + L.OFF] == 0
    win = 0.0
    wg = 0.0
    lg = 0.0
    for n in range(1, MAX_ROLLS):
        pa = off[a, n]
        if pa != 0.0:
            win += pa * off_tail[b, n]          # the opponent needs n or more rolls
            if b_none_off:
                wg += pa * first_tail[b, n]     # ... and has none off after n - 1
        if a_none_off:
            pb = off[b, n]
            if pb != 0.0:
                lg += pb * first_tail[a, n + 1]  # I have none off after n rolls
    win = min(max(win, 0.0), 1.0)
    if wg > win:
        wg = win
    if lg > 1.0 - win:
        lg = 1.0 - win
    o[0] = win
    o[1] = wg
    o[2] = 0.0
    o[3] = lg
    o[4] = 0.0


@njit(inline="always", **FAST)
def _off_first(s, home, other, off, mover):
    """``(chance, gammon_chance)``: a least chance that the side whose block of ``s``
    starts at ``home`` (all home) is off before the side at ``other`` is, and before
    that side bears off a first checker (0 when it has one off already). The home
    side's rolls to be off are the tables' (``off``: :meth:`BearoffDB.arrays`' first;
    the play that needs the fewest on average, so the best play does at least as well);
    the other side, whatever its play, is off within ``k`` turns only when its ``k``
    rolls hold a die for each of its crossings (:data:`DICE_TAIL`) and give its pips
    (:data:`PIP_TAIL`; the smaller chance bounds both), and it bears off a first checker
    so only with every checker home first. ``mover``: the home side rolls first, so the
    other has ``n - 1`` turns before the home side's ``n``-th, else ``n``. Each side's
    rolls are its own: the chances multiply."""
    a = _side_rank(s, home)
    cross, first, pips, _, g_pips = side_counts(s, other)
    none_off = s[other + L.OFF] == 0
    chance = 0.0
    gammon = 0.0
    for n in range(1, MAX_ROLLS + 1):
        p = off[a, n]
        if p == 0.0:
            continue
        k = n - 1 if mover else n               # the other side's turns by then
        done = min(PIP_TAIL[k, min(pips, MAX_PIPS + 1)], DICE_TAIL[k, min(cross, 4 * k + 1)])
        chance += p * (1.0 - done)
        if none_off:
            started = min(PIP_TAIL[k, min(g_pips, MAX_PIPS + 1)],
                          DICE_TAIL[k, min(first, 4 * k + 1)])
            gammon += p * (1.0 - started)
    return min(chance, 1.0), min(gammon, 1.0)


# the tables' lookup allocates: counted even when called from a kernel compiled without
# reference counts (engine/_jit.py), as exact_probs
@njit(cache=True, _nrt=True)
def race_bounds(s, off, o):
    """Bound the outputs ``o`` of the race ``s`` (backgammon's geometry; no contact;
    not both sides home; the network's, made sane) by the exact bear-off distribution
    of a side that is home (``off``: :meth:`BearoffDB.arrays`' first) and the fewest
    turns and pips the other side needs (:func:`_off_first`): a least chance for the
    home side to win, and to win a gammon. The race network, far from the races it
    learned, gave four checkers on the ace point against fifteen on the opponent's
    9-point a gammon chance of 0.22 (the exact one: 1), and nine on the 4- to 6-points
    against fifteen on the opponent's 8- to 11-points 0.76 (a 1296-trial rollout:
    0.97). The side to move, ``me``, rolls first."""
    me_home = _home(s, L.ME)
    if me_home == _home(s, L.THEM):
        return
    if me_home:
        win, gammon = _off_first(s, L.ME, L.THEM, off, True)
        o[1] = max(o[1], gammon)
        o[0] = max(o[0], win, o[1])
    else:
        lose, gammon = _off_first(s, L.THEM, L.ME, off, False)
        o[3] = max(o[3], gammon)
        o[0] = min(o[0], 1.0 - max(lose, o[3]))
    # the cumulative order again, the bounds kept
    o[1] = min(o[1], o[0])
    o[2] = min(o[2], o[1])
    o[3] = min(o[3], 1.0 - o[0])
    o[4] = min(o[4], o[3])


# --------------------------------------------------------------------- CLI
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.eval.bearoff",
                                 description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--build", action="store_true",
                    help="build the tables and write them to the cache file")
    ap.add_argument("--path", default=None,
                    help=f"cache file (default {default_path()}, or with --cascade "
                         f"{default_path(True)})")
    ap.add_argument("--cascade", action="store_true",
                    help="gul bara's tables, where every double is a cascade")
    ap.add_argument("--show", metavar="BOARD", default=None,
                    help="print the distributions of a home board, six counts for "
                         "points 1..6, e.g. 0,0,0,0,0,2")
    args = ap.parse_args(argv)
    path = Path(args.path) if args.path else default_path(args.cascade)
    if args.build:
        t0 = time.perf_counter()
        db = build(args.cascade)
        dt = time.perf_counter() - t0
        save(db, path)
        print(f"built {N_POSITIONS} boards in {dt:.1f} s; wrote {path} "
              f"({path.stat().st_size / 1e6:.1f} MB)")
    if args.show:
        db = load(path, cascade=args.cascade)
        try:
            board = [int(x) for x in args.show.replace(" ", "").split(",")]
            dist = db.rolls(board)
        except (ValueError, BearoffError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"board {board}: expected rolls {db.expected_rolls(board):.4f}")
        for n in np.nonzero(dist)[0]:
            print(f"  {n:2d} rolls: {dist[n]:.6f}")
        if sum(board) == CHECKERS:
            fo = db.first_off(board)
            print("first checker off:")
            for n in np.nonzero(fo)[0]:
                print(f"  {n:2d} rolls: {fo[n]:.6f}")
    if not args.build and not args.show:
        ap.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
