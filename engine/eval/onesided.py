"""One-sided race rollouts: the mean number of rolls a side needs to bear off alone
when some of its checkers are still outside its home board (or on the bar), for the
effective pip count (EPC) of :mod:`engine.eval.race`.

A side racing alone is never blocked, so only its own rolls matter. Once all its
checkers are home, the one-sided bear-off tables (:mod:`engine.eval.bearoff`) give the
exact mean number of rolls left, played to minimise it; until then each trial plays
the side's rolls by a fixed rule, and its value is the rolls it took to get home plus
the table's mean from the board it got home with. The rule, for each die while a
checker is outside (only those move; a checker on the bar enters first):

1. a checker that lands exactly on the 6-point, home without a pip lost;
2. else the rearmost checker that crosses into another quarter of the board with it
   (into home, or one quarter nearer it): the crossings are the rolls' bottleneck;
3. else the rearmost checker.

Once every checker is home, a die left of the roll is played where the table's mean of
the result is least. A roll that is not a double is played in both orders, and the
better result kept: home with the lesser mean, or home against not yet home, or the
fewer crossings left, then the fewer checkers outside.

A trial's first roll runs through the 36 rolls in turn (when the trials are a multiple
of 36), the rest come from numba's generator, seeded: the same board, trials and seed
give the same mean. This is GNU Backgammon's method for the EPC of such a side (its
one-sided rollout of 5,760 trials, ``show onesidedrollout``), its rule defined here
afresh. Over 864 sides with checkers outside (helper 130's race positions, 2026-12-08)
the two EPCs differ by 0.19 pips on average, this one 0.15 lower (it plays the better
order of the dice), at most 1.2 but for fourteen checkers on the 18-point, where GNU
Backgammon 1.07's 247.3 is below the side's 252 pips and this one's 260.3 above.
"""

from __future__ import annotations

import numpy as np

from engine._jit import njit
from engine.eval import bearoff

TRIALS = 5760
"""Trials of :func:`mean_rolls` by default: GNU Backgammon's one-sided rollout's."""
SEED = 1
"""The dice's seed by default: the EPC shown is the same at every run."""

_HOME_FAR = 1 << 20
"""A board not yet home sorts after every home board in the comparison of two orders."""


@njit(cache=True)
def _home_mean(b, means):
    """The table's mean rolls of ``b`` (points 1..6 used; every checker home)."""
    return means[bearoff.rank(b)]


@njit(cache=True)
def _outside(b):
    n = 0
    for p in range(7, 26):
        n += b[p]
    return n


@njit(cache=True)
def _crossings(b):
    """The quarter boundaries the side's checkers have left to cross (the bar counts
    as a quarter of its own)."""
    n = 0
    for p in range(7, 26):
        n += b[p] * ((p - 1) // 6)
    return n


@njit(cache=True)
def _step_outside(b, die):
    """Play ``die`` with a checker outside home, by the module's rule (from the bar
    while a checker is there: it enters first)."""
    best = -1
    if b[25] > 0:
        best = 25
    elif b[6 + die] > 0:
        best = 6 + die
    else:
        for p in range(25, 6, -1):
            if b[p] > 0 and (p - 1) // 6 != (max(p - die, 1) - 1) // 6:
                best = p
                break
        if best < 0:
            for p in range(25, 6, -1):
                if b[p] > 0:
                    best = p
                    break
    b[best] -= 1
    b[best - die] += 1


@njit(cache=True)
def _step_home(b, die, means):
    """Play ``die`` inside home (or off) where the table's mean of the result is
    least; nothing when no checker is left."""
    best, best_mean = -1, 1e9
    for src in range(1, 7):
        if not bearoff._can_move(b, src, die):
            continue
        bearoff._apply(b, src, die)
        m = _home_mean(b, means)
        bearoff._undo(b, src, die)
        if m < best_mean:
            best, best_mean = src, m
    if best > 0:
        bearoff._apply(b, best, die)


@njit(cache=True)
def _play(b, dice, n, means):
    for i in range(n):
        if _outside(b) > 0:
            _step_outside(b, dice[i])
        else:
            _step_home(b, dice[i], means)


@njit(cache=True)
def _key(b, means):
    """Lower is better: a home board's mean, else past every home board, by the
    crossings then the checkers left outside."""
    out = _outside(b)
    if out == 0:
        return _home_mean(b, means)
    return _HOME_FAR + _crossings(b) * 16.0 + out


@njit(cache=True)
def _mean_rolls(start, means, trials, seed):
    np.random.seed(seed)
    b = np.zeros(26, np.int64)
    other = np.zeros(26, np.int64)
    dice = np.zeros(4, np.int64)
    stratify = trials % 36 == 0
    total = 0.0
    for t in range(trials):
        b[:] = start
        rolls = 0
        while _outside(b) > 0:
            if rolls == 0 and stratify:
                d1, d2 = t % 6 + 1, (t // 6) % 6 + 1
            else:
                d1, d2 = np.random.randint(1, 7), np.random.randint(1, 7)
            rolls += 1
            if d1 == d2:
                dice[:] = d1
                _play(b, dice, 4, means)
                continue
            other[:] = b
            dice[0], dice[1] = d1, d2
            _play(b, dice, 2, means)
            dice[0], dice[1] = d2, d1
            _play(other, dice, 2, means)
            if _key(other, means) < _key(b, means):
                b[:] = other
        total += rolls + _home_mean(b, means)
    return total / trials


def mean_rolls(side, trials: int = TRIALS, seed: int = SEED) -> float:
    """The mean number of rolls for ``side`` to bear off alone: 25 counts, own points
    1..24 then the bar. Exact from the one-sided tables when every checker is home,
    else a one-sided rollout of ``trials`` trials (module docstring)."""
    side = np.asarray(side, dtype=np.int64)
    if side.shape != (25,) or side.min() < 0 or side.sum() > bearoff.CHECKERS:
        raise ValueError(f"side = {side!r}: expected 25 counts (points 1..24, the bar) "
                         f"of at most {bearoff.CHECKERS} checkers")
    if not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials = {trials!r}: expected a positive integer")
    start = np.zeros(26, np.int64)
    start[1:] = side
    table = bearoff.load()
    if not start[7:].any():
        return table.expected_rolls(side[:6])
    return float(_mean_rolls(start, _means(table), trials, seed))


_MEANS: list = [None, None]
"""The table the means were last made for, and the means."""


def _means(table: bearoff.BearoffDB) -> np.ndarray:
    """Each home board's mean rolls to bear off, by rank (made once per table)."""
    if _MEANS[0] is not table:
        _MEANS[:] = [table, table.off @ np.arange(bearoff.MAX_ROLLS, dtype=np.float64)]
    return _MEANS[1]
