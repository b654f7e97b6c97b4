"""The fast backgammon move generator gives exactly what the general one gives."""

import numpy as np
from numba import njit

from engine import _layout as L
from engine._hitgen import generate_hit, new_scratch
from engine._movegen import generate
from engine.position import Position
from engine.variants import get_rules


@njit
def _walk(start, table, n, seed, states, dice):
    """Random play: the states met and the rolls, ``n`` of them."""
    np.random.seed(seed)
    out = np.empty((64, L.STATE_LEN), np.int16)
    s = start.copy()
    for k in range(n):
        a = np.random.randint(1, 7)
        b = np.random.randint(1, 7)
        states[k] = s
        dice[k, 0] = a
        dice[k, 1] = b
        m, out = generate(s, a, b, table, out)
        s[:] = out[np.random.randint(0, m)]
        if s[L.THEM + L.OFF] == 15:
            s[:] = start


def _rows(a):
    return sorted(map(bytes, np.ascontiguousarray(a)))


def _compare(states, dice, table):
    scratch = new_scratch()
    out1 = np.empty((8, L.STATE_LEN), np.int16)
    out2 = np.empty((8, L.STATE_LEN), np.int16)
    for s, (a, b) in zip(states, dice):
        n1, out1 = generate(s, a, b, table, out1)
        n2, out2 = generate_hit(s, a, b, scratch, out2)
        assert _rows(out1[:n1]) == _rows(out2[:n2]), (Position.from_array(s, "backgammon"),
                                                      a, b)


def test_same_successors_as_generate_in_random_play():
    table = get_rules("backgammon").table()
    n = 6000
    states = np.empty((n, L.STATE_LEN), np.int16)
    dice = np.empty((n, 2), np.int64)
    _walk(Position.start().to_array(), table, n, 11, states, dice)
    _compare(states, dice, table)


def test_same_successors_on_all_rolls_of_tricky_positions():
    table = get_rules("backgammon").table()
    lits = [
        Position("backgammon", (2, 2, 2, 2, 2, 2) + (0,) * 18, (0,) * 18 + (3, 3, 3, 3, 3, 0),
                 off=(3, 0)),                                   # bear-off with contact
        Position("backgammon", (1, 0, 3, 0, 0, 1) + (0,) * 18, (0,) * 23 + (5,),
                 off=(10, 10)),                                 # bear-off, high dice
        Position("backgammon", (0, 2, 2, 2, 2, 2) + (0,) * 17 + (3,), (2,) * 6 + (0,) * 18,
                 bar=(2, 0), off=(0, 3)),                       # closed board, on the bar
        Position("backgammon", (0,) * 5 + (5,) + (0,) * 6 + (5,) + (0,) * 9 + (3, 0),
                 (1, 0, 1, 0, 1) + (0,) * 19, bar=(2, 0), off=(0, 12)),   # blots to hit
    ]
    states = np.array([p.to_array() for p in lits for _ in range(36)])
    dice = np.array([(a, b) for _ in lits for a in range(1, 7) for b in range(1, 7)])
    _compare(states, dice, table)
