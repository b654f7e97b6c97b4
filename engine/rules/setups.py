"""Random *set-up* positions of every game: checkers placed at random, obeying only the
invariants of Position JSON (docs/rules.md), not the history of a game.

A user or a GUI can set up any such position, so the move generator must serve it:
positions with six-blocks no opponent checker has passed, checkers borne off while
others are still far from home, a pinned mother, checkers on the bar behind a closed
board. Placement styles (a spread, runs of consecutive points, a race, a bear-off)
make those common rather than rare; :meth:`Position.check` accepts every one.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from engine.rules.position import Position
from engine.rules.variants import CASCADE_NONE, HIT, PIN, Rules, get_rules

CHECKERS = 15


def _place(rng, counts, points, n, style):
    """Put ``n`` checkers on ``points`` (my numbering, a list) into ``counts`` (index
    = point) in a placement ``style``."""
    if not points or n == 0:
        return n
    if style == "runs":
        # one or two runs of consecutive free points, a checker or two on each
        for _ in range(rng.integers(1, 3)):
            length = int(rng.integers(5, 9))
            lo = int(rng.integers(1, 26 - length))
            for p in range(lo, lo + length):
                if p in points and n > 0:
                    k = min(n, int(rng.integers(1, 3)))
                    counts[p] += k
                    n -= k
    heavy = rng.random() < 0.3
    while n > 0:
        if heavy and rng.random() < 0.5:
            p = points[int(rng.integers(min(3, len(points))))]  # stack a few points
        else:
            p = points[int(rng.integers(len(points)))]
        counts[p] += 1
        n -= 1
    return n


def setup_position(variant: str, rng: np.random.Generator,
                   rules: Rules | None = None) -> Position:
    """One random set-up position of ``variant``, side to move's view."""
    rules = rules or get_rules(variant)
    style = ("spread", "runs", "race", "home", "block")[int(rng.integers(5))]
    hit, pin = rules.meet == HIT, rules.meet == PIN
    me = [0] * 26                     # my numbering, index = point
    them = [0] * 26                   # the opponent's checkers, also in MY numbering
    bar = [0, 0]
    off = [0, 0]
    behind: Sequence[int] = range(1, 25)
    if style == "block":
        # my checkers on six or seven consecutive points of the opponent's path, his
        # checkers mostly behind the run (a six-block none of them has passed)
        length = int(rng.integers(6, 8))
        q0 = int(rng.integers(1, 26 - length))
        for q in range(q0, q0 + length):
            me[rules.opposite_point(q)] += int(rng.integers(1, 3))
        behind = [rules.opposite_point(q) for q in range(q0 + length, 25)]
        if not behind or rng.random() < 0.2:
            behind = range(1, 25)
    for side, counts in ((0, me), (1, them)):
        n = CHECKERS - sum(counts)
        if style == "home" or rng.random() < 0.15:
            off[side] = int(rng.integers(0, 15 if rng.random() < 0.97 else 16))
        elif rng.random() < 0.1:
            off[side] = int(rng.integers(1, 8))     # off, yet checkers far from home
        off[side] = min(off[side], n)
        n -= off[side]
        if hit and n and rng.random() < 0.25:
            bar[side] = int(rng.integers(1, min(n, 4) + 1))
            n -= bar[side]
        if style == "block":
            wanted = range(1, 25) if side == 0 else behind
        elif style == "home":
            wanted = range(1, 7) if side == 0 else range(19, 25)
        elif style == "race":
            wanted = range(1, 13) if side == 0 else range(13, 25)
        else:
            wanted = range(1, 25)
        if rules.geometry == 1 and side == 1 and style in ("home", "race"):
            # same direction: the opponent's home is my 13..18
            wanted = range(13, 19) if style == "home" else range(1, 25)
        other = them if side == 0 else me
        points = [p for p in wanted if other[p] == 0]
        if not points:
            points = [p for p in range(1, 25) if other[p] == 0]
        _place(rng, counts, points, n, style if rng.random() < 0.7 else "spread")
    pinned_me: list[int] = []         # my numbering
    pinned_them: list[int] = []
    if pin:
        # a few pins: a checker of the pinner moved onto a lone checker of the victim
        involved: set = set()
        for _ in range(int(rng.integers(0, 4))):
            victim = int(rng.integers(2))
            vic, top = (me, them) if victim == 0 else (them, me)
            lone = [p for p in range(1, 25) if vic[p] == 1 and p not in involved]
            donors = [p for p in range(1, 25) if top[p] > 0 and vic[p] == 0
                      and p not in involved]
            if not lone or not donors:
                continue
            p = lone[int(rng.integers(len(lone)))]
            q = donors[int(rng.integers(len(donors)))]
            top[q] -= 1
            top[p] += 1
            involved |= {p, q}
            (pinned_me if victim == 0 else pinned_them).append(p)
    turns = [int(rng.integers(0, 3 if rng.random() < 0.3 else 30)) for _ in range(2)]
    pending: tuple = ()
    if rules.cascade != CASCADE_NONE and turns[1] >= 4 and rng.random() < 0.25:
        first = int(rng.integers(1, 7))
        dice = [d for d in range(first, 7) for _ in range(4)]
        pending = tuple(dice[int(rng.integers(0, 4)):])
    them_own = [0] * 24
    for p in range(1, 25):
        them_own[rules.opposite_point(p) - 1] = them[p]
    pos = Position(variant, tuple(me[1:25]), tuple(them_own), (bar[0], bar[1]),
                   (off[0], off[1]),
                   (tuple(pinned_me), tuple(sorted(rules.opposite_point(p)
                                                   for p in pinned_them))),
                   (turns[0], turns[1]), pending)
    if off[0] == CHECKERS and off[1] == CHECKERS:
        return setup_position(variant, rng, rules)
    return pos.check(rules)


def setup_positions(variant: str, count: int, seed: int,
                    rules: Rules | None = None) -> list[Position]:
    """``count`` random set-up positions of ``variant`` (seeded)."""
    rng = np.random.default_rng(seed)
    return [setup_position(variant, rng, rules) for _ in range(count)]
