"""The numba core of move generation, shared by all six games.

Works on the flat ``int16`` states of :mod:`engine._layout` and the packed rules table
of :meth:`engine.variants.Rules.table`; it never branches on a game's name. A turn is
built one single-die step at a time, layer by layer: layer *k* holds every distinct state
after *k* steps (with the scratch fields that still matter: checkers taken from the head,
the die a one-die play used). Deduplicating each layer keeps doubles and gul bara
cascades polynomial. The forced-play rules are then applied to the candidates:

* the most dice possible (a play that ends the game counts as all dice);
* of a non-double of which only one die can be played, the larger if it can be;
* end-of-turn rules (the six-block) decide which candidates are legal *before* the
  maximum is taken, so a play that could only end in an illegal block does not count.

:func:`generate` returns the successors already seen from the next side to move.
"""

import numpy as np
from numba import njit

from ._layout import (BAR, HEADS, KEY_LEN, ME, NPEND, OFF, OVER, PEND, PIN_ME, PIN_THEM,
                      SINGLE, STATE_LEN, THEM, TURNS_ME, TURNS_THEM, USED)
from .variants import (BLOCK_EACH, BLOCK_END, BLOCK_NONE, BLOCK_QUARTER, CASCADE_GAME,
                       CASCADE_NONE, HEAD_FIRST_ANY_DOUBLE, HEAD_FIRST_CLASSIC, HIT, HOLD,
                       MOTHER_DEFERRED, MOTHER_IMMEDIATE, PIN, T_BLOCK, T_CASCADE, T_HEAD,
                       T_HEAD_FIRST, T_MEET, T_MOTHER, T_OPP, T_START)

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


# ---------------------------------------------------------------- small helpers
@njit(cache=True, inline="always")
def _hash(s):
    h = _FNV_OFFSET
    for i in range(PIN_THEM + 26):
        h = (h ^ np.uint64(s[i] & 0xFFFF)) * _FNV_PRIME
    h = (h ^ np.uint64(s[HEADS] + 16 * s[SINGLE])) * _FNV_PRIME
    return h


@njit(cache=True, inline="always")
def _equal(a, b):
    for i in range(STATE_LEN):
        if a[i] != b[i]:
            return False
    return True


@njit(cache=True)
def _new_set(capacity):
    """An empty open-addressing set of states: (states, hashes, table, count)."""
    cap = 16
    while cap < 2 * capacity:
        cap *= 2
    return (np.empty((capacity, STATE_LEN), np.int16), np.empty(capacity, np.uint64),
            np.full(cap, -1, np.int64))


@njit(cache=True)
def _set_add(states, hashes, table, n, s):
    """Add state ``s`` unless present; returns the (maybe grown) arrays and the count."""
    h = _hash(s)
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while True:
        j = table[i]
        if j < 0:
            break
        if hashes[j] == h and _equal(states[j], s):
            return states, hashes, table, n
        i = (i + 1) & mask
    if n == states.shape[0]:
        bigger = np.empty((2 * n, STATE_LEN), np.int16)
        bigger[:n] = states
        states = bigger
        bh = np.empty(2 * n, np.uint64)
        bh[:n] = hashes
        hashes = bh
    states[n] = s
    hashes[n] = h
    table[i] = n
    n += 1
    if 2 * n > table.shape[0]:
        table = np.full(2 * table.shape[0], -1, np.int64)
        mask = table.shape[0] - 1
        for k in range(n):
            i = np.int64(hashes[k] & np.uint64(mask))
            while table[i] >= 0:
                i = (i + 1) & mask
            table[i] = k
    return states, hashes, table, n


# ---------------------------------------------------------------- rules of one step
@njit(cache=True)
def _all_home(s, src):
    """All my checkers are in my home (points 1..6), none on the bar, none pinned."""
    for p in range(7, 26):
        if s[ME + p] > 0:
            return False
    for p in range(1, 7):
        if s[PIN_ME + p] != 0:
            return False
    return True


@njit(cache=True)
def _start_open(s):
    """Fevga start rule: may another checker leave my start (point 24)?"""
    if s[ME + 24] + s[ME + OFF] == 15 and s[ME + OFF] == 0:
        return True           # none has left yet
    if s[ME + OFF] > 0:
        return True
    for p in range(1, 13):
        if s[ME + p] > 0:
            return True
    return False


@njit(cache=True)
def _step(s, t, src, die, head_limit, child):
    """Try to move one checker of mine from ``src`` (25 = bar) by ``die``.

    Writes the result into ``child`` and returns True when the step is legal.
    """
    if s[ME + src] == 0:
        return False
    if src != BAR and s[ME + BAR] > 0:
        return False
    meet = t[T_MEET]
    if meet == PIN and s[PIN_ME + src] != 0:
        return False
    if src == 24:
        if t[T_HEAD] != 0 and s[HEADS] >= head_limit:
            return False
        if t[T_START] != 0 and not _start_open(s):
            return False
    dest = src - die
    if dest >= 1:
        q = t[T_OPP + dest]
        theirs = s[THEM + q]
        pin_them = False
        hit = False
        if theirs > 0:
            if meet == HIT:
                if theirs >= 2:
                    return False
                hit = True
            elif meet == HOLD:
                return False
            else:  # PIN
                if s[PIN_THEM + q] != 0:
                    pass                      # I pin there: open to me
                elif theirs == 1 and s[ME + dest] == 0:
                    pin_them = True
                else:
                    return False
        child[:] = s
        if hit:
            child[THEM + q] -= 1
            child[THEM + BAR] += 1
        if pin_them:
            child[PIN_THEM + q] = 1
            if q == 24:
                mother = t[T_MOTHER]
                if mother == MOTHER_IMMEDIATE:
                    child[OVER] = 1
        child[ME + dest] += 1
    else:
        if not _all_home(s, src):
            return False
        if dest < 0:
            for p in range(src + 1, 7):
                if s[ME + p] > 0:
                    return False
        child[:] = s
        child[ME + OFF] += 1
        if child[ME + OFF] == 15:
            child[OVER] = 1
    child[ME + src] -= 1
    if meet == PIN and child[ME + src] == 0 and src <= 24:
        qs = t[T_OPP + src]
        child[PIN_THEM + qs] = 0
    if src == 24:
        child[HEADS] += 1
    if meet == PIN and t[T_MOTHER] == MOTHER_DEFERRED and child[OVER] == 0:
        # option: a pinned mother wins once the pinner has left his own start;
        # both mothers pinned ends the game too (a draw, scored by the game layer)
        if child[PIN_THEM + 24] != 0 and (child[ME + 24] == 0 or child[PIN_ME + 24] != 0):
            child[OVER] = 1
    return True


@njit(cache=True)
def _block_ok(s, t):
    """The six-block rule on the position ``s`` (mover's checkers just played)."""
    rule = t[T_BLOCK]
    if rule == BLOCK_NONE:
        return True
    if rule == BLOCK_QUARTER:
        for p in range(19, 25):
            if s[ME + p] == 0:
                return True
        return False
    # lowest point (opponent's numbering) where an opponent checker stands
    low = 25
    for q in range(1, 25):
        if s[THEM + q] > 0:
            low = q
            break
    # held[q]: I hold the opponent's point q
    run = 0
    for q in range(1, 25):
        held = False
        for p in range(1, 25):
            if t[T_OPP + p] == q:
                held = s[ME + p] > 0
                break
        if held:
            run += 1
            if run >= 6:
                start = q - run + 1
                if low >= start:
                    return False
        else:
            run = 0
    return True


# ---------------------------------------------------------------- one turn
@njit(cache=True)
def _dice_sequence(s, d1, d2, t):
    """The single-die steps of the turn in order, their number, whether the roll is a
    non-double and whether it is a gul bara cascade (whose unplayed rest passes on).

    ``d1 == d2 == 0`` means the pending segment of gul bara.
    """
    seq = np.zeros(24, np.int64)
    if d1 == 0:
        n = s[NPEND]
        for i in range(n):
            seq[i] = s[PEND + i]
        return seq, n, False, False
    if d1 != d2:
        seq[0] = max(d1, d2)
        seq[1] = min(d1, d2)
        return seq, 2, True, False
    casc = t[T_CASCADE]
    cascade = False
    if casc != CASCADE_NONE:
        if casc == CASCADE_GAME:
            cascade = s[TURNS_ME] + s[TURNS_THEM] >= 3
        else:
            cascade = s[TURNS_ME] >= 3
    n = 0
    top = 6 if cascade else d1
    for d in range(d1, top + 1):
        for _ in range(4):
            seq[n] = d
            n += 1
    return seq, n, False, cascade


@njit(cache=True)
def _head_limit(s, d1, d2, t):
    if t[T_HEAD] == 0:
        return 99
    if d1 != 0 and d1 == d2 and s[TURNS_ME] == 0:
        mode = t[T_HEAD_FIRST]
        if mode == HEAD_FIRST_ANY_DOUBLE:
            return 2
        if mode == HEAD_FIRST_CLASSIC and (d1 == 6 or d1 == 4 or d1 == 3):
            return 2
    return 1


@njit(cache=True)
def generate(state, d1, d2, table, out):
    """Every distinct legal successor of ``state`` for the roll ``d1, d2``.

    ``d1 = d2 = 0`` plays gul bara's pending segment instead of a roll. Successors are
    written to the rows of ``out`` (grown and returned if too small) from the next side
    to move's point of view, turns advanced; a pending segment keeps the side to move.
    Returns ``(count, out)``.
    """
    t = table
    seq, total, nondouble, cascade = _dice_sequence(state, d1, d2, t)
    head_limit = _head_limit(state, d1, d2, t)
    each = t[T_BLOCK] == BLOCK_EACH

    start = state.copy()
    start[HEADS] = 0
    start[USED] = 0
    start[SINGLE] = 0
    start[OVER] = 0

    cur, cur_h, cur_t = _new_set(64)
    cur, cur_h, cur_t, ncur = _set_add(cur, cur_h, cur_t, 0, start)
    over, over_h, over_t = _new_set(16)
    nover = 0
    best = start.reshape(1, STATE_LEN).copy()   # legal states of the deepest layer
    nbest = 1 if _block_ok(start, t) else 0
    best_layer = 0
    child = np.empty(STATE_LEN, np.int16)

    for k in range(total):
        nxt, nxt_h, nxt_t = _new_set(max(64, 2 * ncur))
        nnxt = 0
        for i in range(ncur):
            s = cur[i]
            for which in range(2 if (nondouble and k == 0) else 1):
                if nondouble:
                    if k == 0:
                        die = seq[which]
                    else:
                        die = seq[1] if s[SINGLE] == seq[0] else seq[0]
                else:
                    die = seq[k]
                for src in range(25, 0, -1):
                    if not _step(s, t, src, die, head_limit, child):
                        continue
                    if each and not _block_ok(child, t):
                        continue
                    child[USED] = k + 1
                    if nondouble:
                        child[SINGLE] = die if k == 0 else 0
                    if child[OVER] != 0:
                        child[USED] = total
                        child[SINGLE] = 0
                        over, over_h, over_t, nover = _set_add(over, over_h, over_t,
                                                               nover, child)
                    else:
                        nxt, nxt_h, nxt_t, nnxt = _set_add(nxt, nxt_h, nxt_t, nnxt, child)
        if nnxt == 0:
            break
        # keep the legal ones as the deepest candidates so far
        nlegal = 0
        legal = np.empty((nnxt, STATE_LEN), np.int16)
        for i in range(nnxt):
            if each or _block_ok(nxt[i], t):
                legal[nlegal] = nxt[i]
                nlegal += 1
        if nlegal > 0:
            best = legal
            nbest = nlegal
            best_layer = k + 1
        cur, cur_h, cur_t, ncur = nxt, nxt_h, nxt_t, nnxt

    # forced-play selection
    if nover > 0 and best_layer < total:
        nbest = 0                     # ending the game counts as all dice
    if nondouble and best_layer == 1 and nover == 0:
        larger = seq[0]
        has_larger = False
        for i in range(nbest):
            if best[i, SINGLE] == larger:
                has_larger = True
                break
        if has_larger:
            m = 0
            for i in range(nbest):
                if best[i, SINGLE] == larger:
                    best[m] = best[i]
                    m += 1
            nbest = m
    used = total if nover > 0 else best_layer

    # finish: clear scratch, set pending, flip; dedupe on the position alone
    res, res_h, res_t = _new_set(max(16, nbest + nover))
    nres = 0
    segment = d1 == 0
    flipped = np.empty(STATE_LEN, np.int16)
    for src_set in range(2):
        n = nbest if src_set == 0 else nover
        for i in range(n):
            s = best[i] if src_set == 0 else over[i]
            s[HEADS] = 0
            s[USED] = 0
            s[SINGLE] = 0
            game_over = s[OVER] != 0
            s[OVER] = 0
            if segment:
                s[NPEND] = 0
                for j in range(24):
                    s[PEND + j] = 0
                res, res_h, res_t, nres = _set_add(res, res_h, res_t, nres, s)
                continue
            _flip_into(s, flipped)
            flipped[TURNS_ME] = s[TURNS_THEM]
            flipped[TURNS_THEM] = s[TURNS_ME] + 1
            for j in range(24):
                flipped[PEND + j] = 0
            rest = 0
            if cascade and not game_over:
                for j in range(used, total):
                    flipped[PEND + rest] = seq[j]
                    rest += 1
            flipped[NPEND] = rest
            res, res_h, res_t, nres = _set_add(res, res_h, res_t, nres, flipped)
    if out.shape[0] < nres:
        out = np.empty((nres, STATE_LEN), np.int16)
    out[:nres] = res[:nres]
    return nres, out


@njit(cache=True, inline="always")
def _flip_into(s, f):
    for i in range(26):
        f[ME + i] = s[THEM + i]
        f[THEM + i] = s[ME + i]
        f[PIN_ME + i] = s[PIN_THEM + i]
        f[PIN_THEM + i] = s[PIN_ME + i]
    for i in range(TURNS_ME, STATE_LEN):
        f[i] = s[i]
