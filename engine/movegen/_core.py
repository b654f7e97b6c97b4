"""The numba core of move generation, shared by all six games.

Works on the flat ``int16`` states of :mod:`engine.rules._layout` and the packed rules table
of :meth:`engine.rules.variants.Rules.table`; it never branches on a game's name. Three
strategies serve one set of rules: a *direct* depth-first walk for the common turn of
at most four steps whose order does not matter (see "direct strategy" below), a
*cascade* walk on 40-bit boards for gul bara's long turns (see "cascade strategy"), and
the general *layered* walk for everything else. In the layered walk a turn is
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

from typing import NamedTuple

import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import overload

from engine._jit import njit
from engine.movegen._bits import FAST_BMI2, pdep, pext
from engine.rules._layout import (
    BAR,
    ME,
    NPEND,
    OFF,
    PEND,
    PIN_ME,
    PIN_THEM,
    STATE_LEN,
    THEM,
    TURNS_ME,
    TURNS_THEM,
)
from engine.rules.variants import (
    BLOCK_EACH,
    BLOCK_NONE,
    BLOCK_QUARTER,
    CASCADE_GAME,
    CASCADE_NONE,
    HEAD_FIRST_ANY_DOUBLE,
    HEAD_FIRST_CLASSIC,
    HIT,
    HOLD,
    MOTHER_DEFERRED,
    MOTHER_IMMEDIATE,
    PIN,
    T_BLOCK,
    T_CASCADE,
    T_HEAD,
    T_HEAD_FIRST,
    T_MEET,
    T_MOTHER,
    T_OPP,
    T_START,
)

# The kernel works on compact int8 copies of the states: the first 104 slots of the
# layout (both sides' checkers and pins), then its own scratch. Turns and pending dice
# do not change within a turn, so they stay in the caller's int16 state.
_W_HEADS = 104       # checkers that left the head this turn / segment
_W_USED = 105        # single moves played
_W_SINGLE = 106      # die of a one-die play (the "larger die" rule)
_W_OVER = 107        # 1 once the game has ended during the turn
_W_LAST = 108        # source of the last step within a run of equal dice (0: none)
_W_LEN = 112

# Zobrist keys: a state's hash is the XOR of _ZOB[i, s[i]] over the slots that vary
# within one turn (both sides' checkers, pins, and the scratch that matters), so a
# single step updates it in O(1). A fixed seed keeps generation deterministic.
_ZOB = np.random.default_rng(20261129).integers(
    0, np.iinfo(np.int64).max, size=(STATE_LEN, 16), dtype=np.int64).astype(np.uint64)
_HASHED_END = PIN_THEM + 26


# ---------------------------------------------------------------- small helpers
@njit(cache=True)
def _hash(s):
    """Full Zobrist hash of a state (the slots a turn can change)."""
    h = np.uint64(0)
    for i in range(_HASHED_END):
        h ^= _ZOB[i, s[i] & 31]
    h ^= _ZOB[_W_HEADS, s[_W_HEADS] & 31]
    h ^= _ZOB[_W_SINGLE, s[_W_SINGLE] & 31]
    return h


@njit(cache=True, inline="always")
def _put(c, i, v, h):
    """Set slot ``i`` of state ``c`` to ``v``, returning the updated hash."""
    h ^= _ZOB[i, c[i] & 31] ^ _ZOB[i, v & 31]
    c[i] = v
    return h


@njit(cache=True, inline="always")
def _equal(a, b, skip_last=False):
    """Whether two working states are equal, with ``skip_last`` but for their
    ``_W_LAST`` byte. Loops of constant length, which LLVM makes a few vector
    compares: viewing the rows as 64-bit words made numba build an array a call, a
    twelfth of fevga's move generation (``perf``, 2026-12-03)."""
    diff = 0
    for i in range(_W_LAST):
        diff |= a[i] ^ b[i]
    for i in range(_W_LAST + 1, _W_LEN):
        diff |= a[i] ^ b[i]
    if not skip_last:
        diff |= a[_W_LAST] ^ b[_W_LAST]
    return diff == 0


@njit(cache=True, inline="always")
def _copy(dst, src):
    """``dst[:] = src`` for working states, in a loop of constant length (numba's slice
    copy is several times slower for arrays this small, and a view as 64-bit words
    builds an array a call: :func:`_equal`)."""
    for i in range(_W_LEN):
        dst[i] = src[i]


@njit(cache=True)
def _new_set(capacity):
    """An empty open-addressing set of states: (states, hashes, table)."""
    cap = 16
    while cap < 2 * capacity:
        cap *= 2
    return (np.empty((capacity, _W_LEN), np.int8), np.empty(capacity, np.uint64),
            np.full(cap, -1, np.int64))


@njit(cache=True)
def _clear_table(table, expected):
    """An empty index table for a set that will hold about ``expected`` states."""
    if table.shape[0] < 2 * expected:
        cap = table.shape[0]
        while cap < 2 * expected:
            cap *= 2
        return np.full(cap, -1, np.int64)
    table[:] = -1
    return table


@njit(cache=True, _nrt=False)
def _set_put(states, hashes, table, n, s, h, merge_last):
    """Add state ``s`` (whose hash is ``h``) to the set of ``n`` states unless present;
    returns the new count. The caller has made room (:func:`_set_room`): the set is
    never grown here, so this runs without numba's reference counts (engine/_jit.py).

    With ``merge_last`` states that differ only in ``_W_LAST`` (the ordered walk's
    bound on the next source, not part of ``h``) are one state, which keeps the looser
    bound: 0 (none) or else the higher source; every play either bound allows stays
    reachable."""
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while True:
        j = table[i]
        if j < 0:
            break
        if hashes[j] == h and _equal(states[j], s, merge_last):
            if merge_last:
                old = states[j, _W_LAST]
                new = s[_W_LAST]
                if old != 0 and (new == 0 or new > old):
                    states[j, _W_LAST] = new
            return n
        i = (i + 1) & mask
    _copy(states[n], s)
    hashes[n] = h
    table[i] = n
    return n + 1


@njit(cache=True)
def _set_room(states, hashes, table, n, more):
    """The set of ``n`` states with room for ``more``: its rows grown, and its index
    table kept at most half full (made larger and filled again in insertion order)."""
    need = n + more
    if need > states.shape[0]:
        size = max(need, 2 * states.shape[0])
        bigger = np.empty((size, _W_LEN), np.int8)
        for k in range(n):
            _copy(bigger[k], states[k])
        states = bigger
        bh = np.empty(size, np.uint64)
        for k in range(n):
            bh[k] = hashes[k]
        hashes = bh
    if 2 * need > table.shape[0]:
        table = _clear_table(table, need)
        mask = table.shape[0] - 1
        for k in range(n):
            i = np.int64(hashes[k] & np.uint64(mask))
            while table[i] >= 0:
                i = (i + 1) & mask
            table[i] = k
    return states, hashes, table


# ---------------------------------------------------------------- rules of one step
@njit(cache=True)
def _sources(s, srcs):
    """Write my points that hold a checker free to move into ``srcs``, highest first
    (only the bar while a checker is on it). Returns their number and the highest
    point I occupy (25 = bar), which decides whether I may bear off."""
    n = 0
    top = 0
    if s[ME + BAR] > 0:
        srcs[0] = BAR
        return 1, BAR
    for p in range(24, 0, -1):
        if s[ME + p] > 0:
            if top == 0:
                top = p
            if s[PIN_ME + p] == 0:
                srcs[n] = p
                n += 1
            else:
                top = 99          # a pinned checker of mine: no bearing off
    return n, top


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


@njit(cache=True, inline="always")
def _step(s, h, t, src, die, head_limit, top, child):
    """Try to move one checker of mine from ``src`` (25 = bar) by ``die``.

    ``src`` comes from :func:`_sources` (it holds a free checker, and it is the bar
    while a checker is on the bar); ``top`` is the highest point I occupy (99 when a
    checker of mine is pinned). ``h`` is the hash of ``s``. Writes the result into
    ``child`` and returns its hash, or 0 when the step is illegal.
    """
    meet = t[T_MEET]
    if src == 24:
        if t[T_HEAD] != 0 and s[_W_HEADS] >= head_limit:
            return np.uint64(0)
        if t[T_START] != 0 and not _start_open(s):
            return np.uint64(0)
    dest = src - die
    if dest >= 1:
        q = t[T_OPP + dest]
        theirs = s[THEM + q]
        pin_them = False
        hit = False
        if theirs > 0:
            if meet == HIT:
                if theirs >= 2:
                    return np.uint64(0)
                hit = True
            elif meet == HOLD:
                return np.uint64(0)
            else:  # PIN
                if s[PIN_THEM + q] != 0:
                    pass                      # I pin there: open to me
                elif theirs == 1 and s[ME + dest] == 0:
                    pin_them = True
                else:
                    return np.uint64(0)
        _copy(child, s)
        if hit:
            h = _put(child, THEM + q, 0, h)
            h = _put(child, THEM + BAR, child[THEM + BAR] + 1, h)
        if pin_them:
            h = _put(child, PIN_THEM + q, 1, h)
            if q == 24 and t[T_MOTHER] == MOTHER_IMMEDIATE:
                child[_W_OVER] = 1
        h = _put(child, ME + dest, child[ME + dest] + 1, h)
    else:
        if top > 6:
            return np.uint64(0)       # not all home (or a checker pinned)
        if dest < 0 and src != top:
            return np.uint64(0)       # a higher checker must move first
        _copy(child, s)
        h = _put(child, ME + OFF, child[ME + OFF] + 1, h)
        if child[ME + OFF] == 15:
            child[_W_OVER] = 1
    h = _put(child, ME + src, child[ME + src] - 1, h)
    if meet == PIN and child[ME + src] == 0 and src <= 24:
        qs = t[T_OPP + src]
        h = _put(child, PIN_THEM + qs, 0, h)
    if src == 24:
        h = _put(child, _W_HEADS, child[_W_HEADS] + 1, h)
    if meet == PIN and t[T_MOTHER] == MOTHER_DEFERRED and child[_W_OVER] == 0:
        # option: a pinned mother wins once the pinner has left his own start;
        # both mothers pinned ends the game too (a draw, scored by the game layer)
        if child[PIN_THEM + 24] != 0 and (child[ME + 24] == 0 or child[PIN_ME + 24] != 0):
            child[_W_OVER] = 1
    if h == 0:
        h = np.uint64(1)      # 0 means "illegal"; a real hash of 0 is as good as 1
    return h


@njit(cache=True)
def _block_ok(s, t):
    """The six-block rule on the position ``s`` (mover's checkers just played)."""
    return _block_legal(s, s, t)


@njit(cache=True)
def _block_legal(mine, s, t):
    """The six-block rule for my checkers ``mine[p]`` (my point p) against the
    opponent's checkers in ``s[THEM + q]``."""
    rule = t[T_BLOCK]
    if rule == BLOCK_NONE:
        return True
    if rule == BLOCK_QUARTER:
        for p in range(19, 25):
            if mine[ME + p] == 0:
                return True
        return False
    # lowest point (opponent's numbering) where an opponent checker stands
    low = 25
    for q in range(1, 25):
        if s[THEM + q] > 0:
            low = q
            break
    # I hold the opponent's point q when I have checkers on my point T_OPP[q]
    # (the map between the two numberings is its own inverse)
    run = 0
    for q in range(1, 25):
        if mine[ME + t[T_OPP + q]] > 0:
            run += 1
            if run >= 6:
                start = q - run + 1
                if low >= start:
                    return False
        else:
            run = 0
    return True


# ---------------------------------------------------------------- direct strategy
# Most turns (every roll of backgammon and portes, plain rolls of long nardy and gul
# bara) need no layers: a depth-first walk applies and undoes steps in place on small
# count arrays, visits a double's steps in non-increasing source order, and
# deduplicates only the end positions, on an exact 128-bit key. The walk is one loop
# over an explicit stack of up to four steps (`_STACK` in the work space), not a nested
# loop per step: numba inlines the step helpers at every call site, so each nested copy
# cost compile time (the walk compiled in 6.2 s as nested loops, in 3 s as one).
# The layered walk remains for what this cannot do: pins, fevga's start rule, the block
# checked after every step, cascades and pending segments.

_TABLE = 4096           # end-position table slots of the direct strategy
_KEYS = 4               # scratch: [best rank, count, stamp, -], keys, stamps
_STAMPS = _KEYS + 2 * _TABLE
_BOARDS = _STAMPS + _TABLE   # then my 26 counts and the opponent's 26, my numbering
_STACK = _BOARDS + 52        # then the doubles walk's stack: a row of 5 per field
# the stack's fields: row k of field F is at F + k
_S_MASK, _S_SRC, _S_HIT, _S_OCC, _S_KA, _S_KB, _S_HEADS, _S_OUT, _S_MOVED = range(0, 45, 5)
SCRATCH_LEN = _STACK + 9 * 5


def new_scratch():
    """Work space of the direct strategy; pass one to :func:`generate_turn` and reuse
    it (one per thread of play)."""
    return np.zeros(SCRATCH_LEN, np.int64)


@njit(cache=True, inline="always")
def _can(me, opp, src, die, outside, heads, head_limit, t):
    """Whether my checker on ``src`` may move ``die`` points (direct strategy)."""
    if me[src] == 0:
        return False
    if me[BAR] > 0 and src != BAR:
        return False
    if src == 24 and t[T_HEAD] != 0 and heads >= head_limit:
        return False
    dest = src - die
    if dest >= 1:
        if t[T_MEET] == HIT:
            return opp[dest] < 2
        return opp[dest] == 0
    if outside > 0:
        return False
    if dest < 0:
        for p in range(src + 1, 7):
            if me[p] > 0:
                return False
    return True


@njit(cache=True, inline="always")
def _do(me, opp, src, die):
    """Play a step in place; returns 1 if it hit a blot."""
    dest = src - die
    me[src] -= 1
    if dest >= 1:
        me[dest] += 1
        if opp[dest] == 1:          # only reachable in a hitting game
            opp[dest] = 0
            opp[0] += 1             # opp[0]: blots hit this turn
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
    """Change of my checkers outside home (points 7..25) when ``src`` moves ``die``."""
    return -1 if src >= 7 and src - die <= 6 else 0


@njit(cache=True, inline="always")
def _highest(mask):
    """The highest set bit of a nonzero mask."""
    return np.int64(63 - leading_zeros(mask))


@njit(cache=True, inline="always")
def _occ_after(occ, me, src, die):
    """The occupied-points mask after :func:`_do` moved a checker from ``src``."""
    if me[src] == 0:
        occ &= ~(np.int64(1) << src)
    dest = src - die
    if dest >= 1:
        occ |= np.int64(1) << dest
    return occ


@njit(cache=True, inline="always")
def _key_of(p):
    """``(word, bit)`` of slot ``p`` of my board in the packed end-position key: a
    nibble per count (points 1..16 in the first word; 17..25 and the checkers off in
    the second), and in the second word's low 24 bits a flag per point where a blot
    was hit."""
    if p == OFF:
        return 1, 24
    if p <= 16:
        return 0, 4 * (16 - p)
    return 1, 4 * (25 - p) + 28


@njit(cache=True, inline="always")
def _key_step(k0, k1, src, die, hit):
    """The key ``k0, k1`` after the step :func:`_do` just played."""
    a = np.int64(1)
    w, b = _key_of(src)
    if w == 0:
        k0 -= a << b
    else:
        k1 -= a << b
    dest = src - die
    w, b = _key_of(dest if dest >= 1 else OFF)
    if w == 0:
        k0 += a << b
    else:
        k1 += a << b
    if hit:
        k1 += a << (24 - dest)
    return k0, k1


@njit(cache=True)
def _key(me):
    """The packed key of board ``me`` before any step (no blot hit yet)."""
    k0 = k1 = np.int64(0)             # two scalars: an array here was allocated per turn
    for p in range(26):
        w, b = _key_of(p)
        if w == 0:
            k0 += np.int64(me[p]) << b
        else:
            k1 += np.int64(me[p]) << b
    return k0, k1


@njit(cache=True, _nrt=False)
def _record(me, opp, s, rank, st, out, t, k1, k2):
    """Add the current board as an end position of rank ``rank`` (dice used; ranks
    below the best so far are dropped, a better one forgets the rest); ``st`` holds
    [best rank, count, stamp] and the dedupe table; ``k1, k2`` is the board's exact
    key, kept up to date step by step (:func:`_key_step`). Returns false when the
    board is to be kept and ``out`` has no row left for it (the walk must be made
    again with a larger ``out``: :func:`_walk_direct`)."""
    if t[T_BLOCK] != BLOCK_NONE and not _block_legal(me, s, t):
        return True
    best = st[0]
    if rank < best:
        return True
    if rank > best:
        st[0] = rank
        st[1] = 0
        st[2] += 1
    h = k1 * 1000003 ^ k2
    i = (h ^ (h >> 29) ^ (h >> 13)) & (_TABLE - 1)
    stamp = st[2]
    while st[_STAMPS + i] == stamp:
        if st[_KEYS + 2 * i] == k1 and st[_KEYS + 2 * i + 1] == k2:
            return True
        i = (i + 1) & (_TABLE - 1)
    n = st[1]
    if n == out.shape[0]:
        return False
    st[_STAMPS + i] = stamp
    st[_KEYS + 2 * i] = k1
    st[_KEYS + 2 * i + 1] = k2
    row = out[n]
    row[:] = 0
    for q in range(26):
        row[ME + q] = s[THEM + q]
    if opp[0] > 0:
        for p in range(1, 25):
            if opp[p] == 0 and s[THEM + t[T_OPP + p]] == 1:
                row[ME + t[T_OPP + p]] = 0
    row[ME + BAR] = s[THEM + BAR] + opp[0]
    for q in range(26):
        row[THEM + q] = me[q]
    row[TURNS_ME] = s[TURNS_THEM]
    row[TURNS_THEM] = s[TURNS_ME] + 1
    st[1] = n + 1
    return True


@njit(cache=True)
def _walk_direct(s, d1, d2, head_limit, t, st, out):
    """The direct strategy (see above); returns ``(count, out)``, ``out`` grown (and
    the walk made again) when it had too few rows."""
    n = _direct(s, d1, d2, head_limit, t, st, out)
    while n < 0:
        out = np.empty((max(16, 2 * out.shape[0]), STATE_LEN), np.int16)
        n = _direct(s, d1, d2, head_limit, t, st, out)
    return n, out


@njit(cache=True, _nrt=False)
def _direct(s, d1, d2, head_limit, t, st, out):
    """The walk of :func:`_walk_direct`: the number of plays written to ``out``, or -1
    when ``out`` ran out of rows. Allocates nothing and returns no array, so it is
    compiled without numba's reference counting (``_nrt=False``): with the counts it
    kept on the arrays it passes around, move generation ran at half its speed
    (benchmarks/README.md, "Reference counts")."""
    me = st[_BOARDS:_BOARDS + 26]
    opp = st[_BOARDS + 26:_BOARDS + 52]
    for i in range(26):
        me[i] = s[ME + i]
    opp[0] = 0
    opp[25] = 0
    for p in range(1, 25):
        opp[p] = s[THEM + t[T_OPP + p]]
    outside = 0
    for p in range(7, 26):
        outside += me[p]
    every = t[T_BLOCK] != BLOCK_NONE   # record every prefix: a longer play may be illegal
    k0a, k0b = _key(me)
    st[0] = -1
    st[1] = 0
    st[2] += 1
    room = True
    if every:
        room = _record(me, opp, s, 0, st, out, t, k0a, k0b)
    occ = np.int64(0)                  # bit p: my point p (25: the bar) holds a checker
    for p in range(1, 26):
        if me[p] > 0:
            occ |= np.int64(1) << p
    # the turn's steps walked with an explicit stack (row k of each field: the step
    # at depth k; depth 0 the board before the turn), one loop for every roll rather
    # than a nested copy per step. A non-double is walked twice, the larger die first
    # (a play of both dice ranks 3, of the larger alone 2, of the smaller alone 1); a
    # double once, each source no higher than the one before (the same checkers in
    # another order make the same play), a play of k steps ranking k
    double = d1 == d2
    deepest = 4 if double else 2
    full = 4 if double else 3
    stk = st[_STACK:_STACK + 45]
    for order in range(1 if double else 2):
        a = max(d1, d2) if order == 0 else min(d1, d2)
        b = min(d1, d2) if order == 0 else max(d1, d2)
        rank1 = 1 if double else (2 if order == 0 else 1)
        stk[_S_OCC] = occ
        stk[_S_KA] = k0a
        stk[_S_KB] = k0b
        stk[_S_HEADS] = 0
        stk[_S_OUT] = outside
        stk[_S_MASK + 1] = occ
        k = 1
        while True:
            if stk[_S_MASK + k] == 0:            # depth k exhausted: back to k - 1
                if k == 1:
                    break
                k -= 1
                if every or stk[_S_MOVED + k] == 0:
                    room &= _record(me, opp, s, k if double else rank1, st, out, t,
                                    stk[_S_KA + k], stk[_S_KB + k])
                _undo(me, opp, stk[_S_SRC + k], a if k == 1 else b, stk[_S_HIT + k])
                continue
            src = _highest(stk[_S_MASK + k])
            stk[_S_MASK + k] ^= np.int64(1) << src
            die = a if k == 1 else b
            if not _can(me, opp, src, die, stk[_S_OUT + k - 1], stk[_S_HEADS + k - 1],
                        head_limit, t):
                continue
            stk[_S_MOVED + k - 1] = 1
            if not double and order == 1 and k == 2 and src != BAR and src - b >= 1:
                # the smaller die first: a play of two checkers that both stay on the
                # board, neither from the bar, was already made larger die first (each
                # step was legal before the other), so skip it here
                s1 = stk[_S_SRC + 1]
                if s1 != BAR and s1 - a >= 1 and src != s1 - a:
                    continue
            x = _do(me, opp, src, die)
            ka, kb = _key_step(stk[_S_KA + k - 1], stk[_S_KB + k - 1], src, die, x)
            if k == deepest or me[OFF] == 15:
                room &= _record(me, opp, s, full, st, out, t, ka, kb)
                _undo(me, opp, src, die, x)
                continue
            stk[_S_SRC + k] = src
            stk[_S_HIT + k] = x
            stk[_S_KA + k] = ka
            stk[_S_KB + k] = kb
            stk[_S_OCC + k] = _occ_after(stk[_S_OCC + k - 1], me, src, die)
            stk[_S_HEADS + k] = stk[_S_HEADS + k - 1] + (1 if src == 24 else 0)
            stk[_S_OUT + k] = stk[_S_OUT + k - 1] + _outside_delta(src, die)
            stk[_S_MOVED + k] = 0
            nxt = stk[_S_OCC + k]
            if double:
                nxt &= (np.int64(2) << src) - 1
            stk[_S_MASK + k + 1] = nxt
            k += 1
    if st[1] == 0:                      # nothing playable: the turn is lost
        st[0] = -1
        room &= _record(me, opp, s, 0, st, out, t, k0a, k0b)
    return st[1] if room else -1


# ---------------------------------------------------------------- one turn
@njit(cache=True)
def _cascade_turn(s, t):
    """Whether a double rolled now is a gul bara cascade (from the 4th turn on)."""
    casc = t[T_CASCADE]
    if casc == CASCADE_GAME:
        return s[TURNS_ME] + s[TURNS_THEM] >= 3
    if casc != CASCADE_NONE:
        return s[TURNS_ME] >= 3
    return False


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
    cascade = _cascade_turn(s, t)
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


def generate(state, d1, d2, table, out):
    """Every distinct legal successor of ``state`` for the roll ``d1, d2``.

    ``d1 = d2 = 0`` plays gul bara's pending segment instead of a roll. Successors are
    written to the rows of ``out`` (grown and returned if too small) from the next side
    to move's point of view, turns advanced; a pending segment keeps the side to move.
    Returns ``(count, out)``. Allocates its work space; a caller that generates many
    turns passes one from :func:`new_scratch` to :func:`generate_turn` instead.

    A Python function, not a kernel: kernels call :func:`generate_turn` (or
    :func:`turn`), and a second kernel around the generator would compile all of it
    again (about 5 s on a cold cache).
    """
    return generate_turn(state, d1, d2, table, new_scratch(), out, 0)


PLAY_BEAM = 128
"""Layer size the player's walk keeps in a long turn (``generate_turn``'s ``beam``)."""


@njit(cache=True)
def generate_turn(state, d1, d2, table, scratch, out, beam):
    """The successors of one turn (:func:`generate`) into ``out`` with a reusable work
    space ``scratch`` (:func:`new_scratch`); ``(count, out)``. The one kernel every
    caller compiles in: a kernel that embeds the generator re-optimises all of it, so
    the move generator has a single entry.

    ``beam = 0``: every legal play (move lists, analysis at the root). ``beam > 0``
    (:data:`PLAY_BEAM`): the plays a *player* chooses from, exactly those except in a
    turn of more than four steps (a gul bara cascade or pending segment), where the
    distinct plays can number 10^5-10^6 and the exact walk takes seconds. There each
    layer of the walk keeps at most ``beam`` of its states, those with the smallest
    Zobrist hashes: a deterministic pseudo-random sample that favours no player. The
    result is a subset of the legal successors, each a full legal play: when the
    sampled walk falls short of the longest play (so that its plays might not be
    legal), the exact walk runs instead. Self-play, duels, playouts and the search
    inside its tree use the sample.

    A set-up position can already hold a six-block that every play of the roll keeps;
    then the rule forbids nothing this turn (docs/rules.md), and the turn is generated
    again without it: a roll never has zero successors."""
    t = table
    n = 0
    for attempt in range(2):
        if attempt == 1:
            if n > 0 or table[T_BLOCK] == BLOCK_NONE:
                break
            t = table.copy()
            t[T_BLOCK] = BLOCK_NONE
        head_limit = _head_limit(state, d1, d2, t)
        if (d1 != 0 and not (d1 == d2 and _cascade_turn(state, t)) and t[T_MEET] != PIN
                and t[T_START] == 0 and t[T_BLOCK] != BLOCK_EACH):
            n, out = _walk_direct(state, d1, d2, head_limit, t, scratch, out)
            continue
        seq, total, nondouble, cascade = _dice_sequence(state, d1, d2, t)
        done = False
        if beam > 0 and total > 4:         # the sample; none: it fell short, walk again
            n, out = _layered(state, d1, d2, t, seq, total, nondouble, cascade, head_limit,
                              out, beam)
            done = n > 0
        if not done and _cascade_route(state, d1, t, cascade):
            n, out = _cascade(state, d1, t, seq, total, cascade, head_limit, out)
            done = n >= 0                  # -1: the cascade walk declined this turn
        if not done:
            n, out = _layered(state, d1, d2, t, seq, total, nondouble, cascade, head_limit,
                              out, 0)
    return n, out


class AnyWalk(NamedTuple):
    """Marker for :func:`turn`: the whole move generator (every strategy)."""


class DirectWalk(NamedTuple):
    """Marker for :func:`turn`: the direct walk alone, all a game needs whose every
    turn is short and free of pins, the start rule, the six-block rule and cascades
    (backgammon, portes): a kernel built for such a game compiles a fifth of the
    generator."""


def walk_for(table: np.ndarray) -> AnyWalk | DirectWalk:
    """The walk marker of a game's rules table (:func:`turn`)."""
    direct = (table[T_MEET] != PIN and table[T_START] == 0 and table[T_BLOCK] == BLOCK_NONE
              and table[T_CASCADE] == CASCADE_NONE)
    return DirectWalk() if direct else AnyWalk()


def turn(walk, state, d1, d2, table, scratch, out, beam):
    """:func:`generate_turn` as a kernel calls it: ``walk`` (:func:`walk_for` of
    ``table``) is a *type* numba specialises the calling kernel on, so a kernel built
    for a :class:`DirectWalk` game compiles only the direct walk. The same successors
    either way (the direct walk is what :func:`generate_turn` takes for such a game).

    Called from Python it chooses the same way, and calls the kernels the compiled
    choice calls (the same signatures, so numba's cache serves both): a first
    backgammon analysis compiles the direct walk alone, not the whole generator."""
    if isinstance(walk, DirectWalk):
        return _walk_direct(state, d1, d2, _head_limit(state, d1, d2, table), table,
                            scratch, out)
    return generate_turn(state, d1, d2, table, scratch, out, beam)


@overload(turn)
def _turn(walk, state, d1, d2, table, scratch, out, beam):
    if getattr(walk, "instance_class", None) is DirectWalk:
        def direct(walk, state, d1, d2, table, scratch, out, beam):
            return _walk_direct(state, d1, d2, _head_limit(state, d1, d2, table), table,
                                scratch, out)
        return direct

    def any_walk(walk, state, d1, d2, table, scratch, out, beam):
        return generate_turn(state, d1, d2, table, scratch, out, beam)
    return any_walk


@njit(cache=True)
def _keep_smallest(states, hashes, n, beam):
    """Compact ``states[:n]`` to the ``beam`` with the smallest hashes (in place)."""
    order = np.argsort(hashes[:n])[:beam]
    order.sort()
    for j in range(beam):
        i = order[j]
        if i != j:
            _copy(states[j], states[i])
            hashes[j] = hashes[i]
    return beam


_ROOM = 50
"""Room a parent of the layered walk may need in each set: two children a source."""


@njit(cache=True, _nrt=False)
def _layer_from(cur, cur_h, ncur, i, k, seq, total, nondouble, ordered, each, head_limit,
                t, srcs, child, nxt, nxt_h, nxt_t, nnxt, over, over_h, over_t, nover):
    """Step ``k`` of the layered walk (:func:`_layered`) from the parents
    ``cur[i:ncur]``: their children into the sets ``nxt`` and, those that ended the game,
    ``over``, until a parent might not fit (:data:`_ROOM` free in both). Returns ``(the
    next parent, nnxt, nover)``; the walk grows the sets (:func:`_set_room`) and calls
    again. Allocates nothing, so it runs without numba's reference counts
    (engine/_jit.py): the sets reassigned for every child were counted for every one."""
    run_ends = k + 1 == total or seq[k + 1] != seq[k]
    while i < ncur:
        if (nnxt + _ROOM > nxt.shape[0] or 2 * (nnxt + _ROOM) > nxt_t.shape[0]
                or nover + _ROOM > over.shape[0] or 2 * (nover + _ROOM) > over_t.shape[0]):
            break
        s = cur[i]
        nsrc, top = _sources(s, srcs)
        last = s[_W_LAST] if ordered else 0
        for which in range(2 if (nondouble and k == 0) else 1):
            if nondouble:
                if k == 0:
                    die = seq[which]
                else:
                    die = seq[1] if s[_W_SINGLE] == seq[0] else seq[0]
            else:
                die = seq[k]
            for si in range(nsrc):
                src = srcs[si]
                if last != 0 and src > last:
                    continue
                h = _step(s, cur_h[i], t, src, die, head_limit, top, child)
                if h == 0:
                    continue
                if ordered and not nondouble:
                    child[_W_LAST] = 0 if run_ends else src
                if each and not _block_ok(child, t):
                    continue
                child[_W_USED] = k + 1
                if nondouble:
                    h = _put(child, _W_SINGLE, die if k == 0 else 0, h)
                if child[_W_OVER] != 0:
                    h = _put(child, _W_SINGLE, 0, h)
                    nover = _set_put(over, over_h, over_t, nover, child, h, False)
                else:
                    nnxt = _set_put(nxt, nxt_h, nxt_t, nnxt, child, h, ordered)
        i += 1
    return i, nnxt, nover


@njit(cache=True)
def _layered(state, d1, d2, t, seq, total, nondouble, cascade, head_limit, out, beam):
    """The layered strategy (module docstring): any turn of any game. With ``beam > 0``
    each layer keeps at most ``beam`` states (:func:`generate_turn`); the walk then
    returns 0 successors unless it reached the last step, so that the caller knows to
    walk again exactly."""
    each = t[T_BLOCK] == BLOCK_EACH
    checked = t[T_BLOCK] != BLOCK_NONE
    # Within a run of equal dice the steps of a legal play can be reordered so that
    # their sources never rise (a higher checker was already there, and its landing
    # point is unaffected), unless the order itself matters: pins, fevga's start rule,
    # or the block checked after every step. Then each state only tries sources at or
    # below the last one of its run, which generates far fewer duplicates. The bound
    # is not part of a state's identity: states equal but for it merge, keeping the
    # looser bound (:func:`_set_put`), so the layers stay as small as unordered ones.
    ordered = t[T_MEET] != PIN and t[T_START] == 0 and not each

    start = np.zeros(_W_LEN, np.int8)
    for i in range(_W_HEADS):
        start[i] = state[i]

    # two layer buffers used in turn, so deep turns (cascades) allocate little
    cur, cur_h, cur_t = _new_set(2 * _ROOM)
    nxt, nxt_h, nxt_t = _new_set(2 * _ROOM)
    ncur = _set_put(cur, cur_h, cur_t, 0, start, _hash(start), False)
    over, over_h, over_t = _new_set(_ROOM)
    nover = 0
    # legal end states of the deepest layer that has any: the layer itself when every
    # end position is legal, else a copy of its legal states
    # (a buffer of their own: the start kept as ``cur``'s row was overwritten once
    # the layer buffers turned, and a cascade whose every play ends in an illegal block
    # reported a later layer's board as the unplayed turn)
    legal = np.empty((32, _W_LEN), np.int8)
    best = legal
    nbest = 0
    if _block_ok(start, t):
        _copy(legal[0], start)
        nbest = 1
    best_layer = 0
    child = np.empty(_W_LEN, np.int8)
    srcs = np.empty(25, np.int64)

    for k in range(total):
        nxt_t = _clear_table(nxt_t, 2 * ncur)
        nnxt = 0
        i = 0
        while True:
            i, nnxt, nover = _layer_from(cur, cur_h, ncur, i, k, seq, total, nondouble,
                                         ordered, each, head_limit, t, srcs, child, nxt,
                                         nxt_h, nxt_t, nnxt, over, over_h, over_t, nover)
            if i == ncur:
                break
            nxt, nxt_h, nxt_t = _set_room(nxt, nxt_h, nxt_t, nnxt, max(_ROOM, nnxt))
            over, over_h, over_t = _set_room(over, over_h, over_t, nover, _ROOM)
        if nnxt == 0:
            break
        if beam > 0 and nnxt > beam and k + 1 < total:
            nnxt = _keep_smallest(nxt, nxt_h, nnxt, beam)
        if checked and not each:
            if legal.shape[0] < nnxt:
                legal = np.empty((nnxt, _W_LEN), np.int8)
            nlegal = 0
            for i in range(nnxt):
                if _block_ok(nxt[i], t):
                    _copy(legal[nlegal], nxt[i])
                    nlegal += 1
            if nlegal > 0:
                best, nbest, best_layer = legal, nlegal, k + 1
        else:
            best, nbest, best_layer = nxt, nnxt, k + 1
        cur, cur_h, cur_t, ncur, nxt, nxt_h, nxt_t = nxt, nxt_h, nxt_t, nnxt, cur, cur_h, cur_t

    # forced-play selection
    if beam > 0 and best_layer < total and nover == 0:
        return 0, out                 # the sample may have missed the longest plays
    if nover > 0 and best_layer < total:
        nbest = 0                     # ending the game counts as all dice
    if nondouble and best_layer == 1 and nover == 0:
        larger = seq[0]
        m = 0
        for i in range(nbest):
            if best[i, _W_SINGLE] == larger:
                m += 1
        if m > 0:
            m = 0
            for i in range(nbest):
                if best[i, _W_SINGLE] == larger:
                    _copy(best[m], best[i])
                    m += 1
            nbest = m
    used = total if nover > 0 else best_layer
    return _finish(state, d1, seq, total, used, cascade, best, nbest, over, nover, out)


# ---------------------------------------------------------------- cascade strategy
# A gul bara cascade (or pending segment) is runs of four equal dice: 1-1 rolled from
# the 4th turn is four 1s, four 2s, ... four 6s. Its exact plays can number 10^5-10^6,
# and its layers 10^6 states in all, so here the state itself is made small: in a game
# where landing never changes the opponent (no hits, no pins) and no checker is on the
# bar, a turn changes only my 15 checkers on 25 slots (off, points 1..24), which a
# 40-bit "stars and bars" word holds (slot j's count as that many 1s, then a 0). A step
# moves a 1 down the word: a one-bit rotation of the stretch between the two slots. The
# walk goes one step at a time like the layered walk, in the same non-increasing source
# order within a run (bits 40..44 of a word: the bound on the next source), but a layer
# is a plain sorted array of words, made without hashing or sorting: the words' order
# is the lexicographic order of the counts (point 24 first), which adding one vector to
# every word keeps, so the children that move a checker from one point, made from the
# sorted parents, come out sorted (:func:`_expand`); merging the 24 sorted streams,
# repeated boards squeezed out, each keeping the looser bound (as in :func:`_set_put`),
# makes the next layer (:func:`cascade_layer`). Sequential passes instead of a hash
# table's random probes into tens of megabytes made a first version of this walk (a
# radix sort) 4-7 times faster than the layered one on the cascades of benchmarks/data;
# the merge of sorted streams took a further fifth off, and decoding the boards with
# BMI2's pext/pdep where the CPU has them fast (:mod:`engine.movegen._bits`) another. A parent's
# legal sources are one bit mask (free landing points, the head, bearing off). Inside
# numba the walk runs on one thread (a numba ``prange`` here made cached kernels that
# call the generator crash when loaded from numba's cache); the exact generator called
# from Python (:func:`engine.movegen.generate.successor_arrays`) drives the same layer steps
# itself and splits large layers over threads.
# When no end position of the deepest layer passes the six-block rule it returns -1,
# and the layered walk looks for the longest legal shorter play.

_CB_BOARD = (1 << 40) - 1
_CB_LAST = 40


@njit(cache=True, inline="always")
def _cb_encode(me):
    x = np.int64(0)
    pos = 0
    for j in range(25):
        x |= ((np.int64(1) << me[j]) - 1) << pos
        pos += me[j] + 1
    return x


@njit(cache=True, inline="always")
def _cb_slots(board, start, me):
    """Where each occupied slot of the word ``board`` begins (``start[j]``) and how
    many checkers it holds (``me[j]``); returns the mask of the occupied slots (other
    slots' entries are left as they were). Walks the runs of 1s, one per occupied slot:
    the run that begins at bit ``p`` after ``below`` 1s belongs to slot ``p - below``."""
    runs = board & ~(board << 1)                # the lowest bit of each run of 1s
    occupied = np.int64(0)
    below = np.int64(0)
    while runs != 0:
        p = np.int64(trailing_zeros(runs))
        runs &= runs - 1
        slot = p - below
        n = np.int64(trailing_zeros(~(board >> p)))
        start[slot] = p
        me[slot] = n
        occupied |= np.int64(1) << slot
        below += n
    return occupied


@njit(cache=True, inline="always")
def _cb_start(occupied, start, slot):
    """Where ``slot`` begins in a word decoded by :func:`_cb_slots`, occupied or not
    (but with an occupied slot at or above it): where the next occupied slot above it
    begins, less the empty slots between (each one bit, its end)."""
    above = slot + np.int64(trailing_zeros(occupied >> slot))
    return start[above] - (above - slot)


@njit(cache=True, inline="always")
def _cb_occupied_bmi2(board, start, me):
    """:func:`_cb_slots` with BMI2 (:mod:`engine.movegen._bits`): the mask only, ``start`` and
    ``me`` untouched. Slot ``j`` begins right after the board's ``j``-th 0 (slot 0 at
    bit 0), and holds a checker when that bit is 1: ``pext`` gathers those bits."""
    zeros = ~board & _CB_BOARD
    return pext(board, ((zeros << 1) | 1) & _CB_BOARD)


@njit(cache=True, inline="always")
def _cb_start_bmi2(board, occupied, start, slot):
    """:func:`_cb_start` with BMI2: right after the board's ``slot``-th 0, which
    ``pdep`` finds."""
    if slot == 0:
        return np.int64(0)
    zeros = ~board & _CB_BOARD
    return np.int64(trailing_zeros(pdep(np.int64(1) << (slot - 1), zeros))) + 1


@njit(cache=True, inline="always")
def _cb_start_loop(board, occupied, start, slot):
    """:func:`_cb_start` with the signature of :func:`_cb_start_bmi2`."""
    return _cb_start(occupied, start, slot)


# The decode of the cascade walk's hot loops (:func:`_expand`, :func:`cascade_keep`):
# ``occupied = _cb_occupied(board, start, me)``, then ``_cb_begin(board, occupied,
# start, slot)`` for where any slot begins; with BMI2 where the CPU has it fast.
if FAST_BMI2:
    _cb_occupied = _cb_occupied_bmi2
    _cb_begin = _cb_start_bmi2
else:
    _cb_occupied = _cb_slots
    _cb_begin = _cb_start_loop


@njit(cache=True, inline="always")
def _looser(x, y):
    """Of two words of one board, the one with the looser bound: 0 (none), else the
    higher source."""
    bx = x >> _CB_LAST
    by = y >> _CB_LAST
    return x if bx == 0 or (by != 0 and bx >= by) else y


@njit(cache=True, inline="always")
def _squeeze(words, m, x):
    """Append ``x`` to the sorted, squeezed ``words[:m]``, a repeated board keeping
    the looser bound (:func:`_looser`). Returns the new count."""
    if m > 0 and (words[m - 1] ^ x) & _CB_BOARD == 0:
        words[m - 1] = _looser(words[m - 1], x)
        return m
    words[m] = x
    return m + 1


# The work of one layer step, packed for :func:`_expand`.
_X_DIE = 0           # the die of the step
_X_BOUNDED = 1       # 1 inside a run of equal dice: children carry their source as bound
_X_LAND = 2          # sources whose landing point (on the board) is free
_X_HEAD0 = 3         # checkers on the head at the start of the turn (99: no head rule)
_X_HEAD_LIMIT = 4    # checkers that may leave the head this turn
_X_COUNT = 5         # my checkers (off included)
_X_CHUNK = 6         # parents expanded together (:data:`_CHUNK`; tests set fewer)
_X_LEN = 7


_CHUNK = 65536
"""Parents expanded together: each source's children go to a stream of its own
(:func:`_expand`), and the streams of a chunk (a few megabytes) are merged while they
are still in the cache."""


@njit(cache=True)
def _expand(cur, lo, hi, step, work, cap, cnt, over, o):
    """The children of the sorted boards ``cur[lo:hi]`` (at most ``cap``) for one step
    (``step``, see ``_X_*``): those that move a checker from point ``src`` appended to
    the stream ``work[(src - 1) * cap:]`` (``cnt[src]`` of them), those that bear off my
    last checker to ``over[o:]``, which must have room for one per parent. Returns the
    new ``o``.

    Moving one checker from ``src`` to ``dest`` adds the same vector to every parent's
    counts, and the words' order is the lexicographic order of the counts from point 24
    down, which adding a vector keeps: each stream comes out sorted, and no board twice.
    The parents are decoded by :func:`_cb_occupied` and :func:`_cb_begin`."""
    start = np.zeros(25, np.int64)
    me = np.zeros(25, np.int64)
    die = step[_X_DIE]
    bounded = step[_X_BOUNDED] != 0
    land = step[_X_LAND]
    head0 = step[_X_HEAD0]
    head_limit = step[_X_HEAD_LIMIT]
    count = step[_X_COUNT]
    for src in range(25):
        cnt[src] = 0
    for i in range(lo, hi):
        x = cur[i]
        board = x & _CB_BOARD
        occupied = _cb_occupied(board, start, me)
        last = x >> _CB_LAST
        top = last if last != 0 else 24
        sources = occupied & ((np.int64(2) << top) - 2)     # points 1..top
        on_head = 0
        if (occupied >> 24) != 0:          # the last slot ends at bit count + 24
            on_head = count + 24 - _cb_begin(board, occupied, start, 24)
        if head0 - on_head >= head_limit:
            sources &= ~(np.int64(1) << 24)
        legal = sources & land
        high = _highest(occupied)
        if high <= 6:
            # all home: bear off from the die's point, or from the highest point
            # when it is below the die
            legal |= sources & (np.int64(1) << die)
            if 0 < high < die:
                legal |= sources & (np.int64(1) << high)
        while legal != 0:
            src = np.int64(trailing_zeros(legal))
            legal &= legal - 1
            dest = src - die
            if dest < 0:
                dest = 0
            sb = _cb_begin(board, occupied, start, dest)
            mask = (np.int64(1) << (_cb_begin(board, occupied, start, src) - sb + 1)) - 1
            seg = (board >> sb) & mask
            child = (board & ~(mask << sb)) | ((((seg << 1) & mask) | 1) << sb)
            if dest == 0 and np.int64(trailing_zeros(~board)) == count - 1:
                over[o] = child
                o += 1
                continue
            bound = src if bounded else 0
            work[(src - 1) * cap + cnt[src]] = child | (np.int64(bound) << _CB_LAST)
            cnt[src] += 1
    return o


@njit(cache=True, inline="always")
def _merge(a, i, ni, j, nj, out, m):
    """Merge the sorted, squeezed ``a[i:i + ni]`` and ``a[j:j + nj]`` into ``out[m:]``
    as :func:`_squeeze` would; returns the new ``m``."""
    ei = i + ni
    ej = j + nj
    while i < ei and j < ej:
        x = a[i]
        y = a[j]
        bx = x & _CB_BOARD
        by = y & _CB_BOARD
        if bx < by:
            out[m] = x
            i += 1
        elif by < bx:
            out[m] = y
            j += 1
        else:
            out[m] = _looser(x, y)
            i += 1
            j += 1
        m += 1
    while i < ei:
        out[m] = a[i]
        i += 1
        m += 1
    while j < ej:
        out[m] = a[j]
        j += 1
        m += 1
    return m


@njit(cache=True)
def _merge_runs(x, y, starts, lens, r):
    """Merge the sorted, squeezed runs ``x[starts[q]:starts[q] + lens[q]]`` (``q <
    r``, ``r >= 2``) two by two, round after round between ``x`` and ``y``, into one
    from index 0. Returns ``(in_y, count)``: which of the two holds it."""
    in_y = False
    while r > 1:
        m = 0
        q = 0
        nr = 0
        while q < r:
            s0 = m
            if q + 1 < r:
                m = _merge(x, starts[q], lens[q], starts[q + 1], lens[q + 1], y, m)
                q += 2
            else:
                for i in range(lens[q]):
                    y[m + i] = x[starts[q] + i]
                m += lens[q]
                q += 1
            starts[nr] = s0
            lens[nr] = m - s0
            nr += 1
        r = nr
        x, y = y, x
        in_y = not in_y
    return in_y, lens[0]


@njit(cache=True)
def _rounds(r):
    """Rounds of :func:`_merge_runs` for ``r`` runs."""
    n = 0
    while r > 1:
        r = (r + 1) >> 1
        n += 1
    return n


@njit(cache=True)
def _grown(a, need, keep):
    """``a``, or a larger array holding its first ``keep`` words, with room for
    ``need``."""
    if a.shape[0] >= need:
        return a
    b = np.empty(need + (need >> 1), np.int64)
    b[:keep] = a[:keep]
    return b


@njit(cache=True, nogil=True)
def cascade_rows(words, n, out, r, state, segment, pending, seq, used, total):
    """The successor rows of the boards ``words[:n]`` into ``out[r:]``: my checkers
    from the board, the opponent's from ``state``, seen from the next side to move
    (unless a pending segment), turns and pending dice by :func:`_turn_tail`."""
    me = np.zeros(26, np.int64)
    start = np.zeros(25, np.int64)
    mine = ME if segment else THEM
    theirs = THEM if segment else ME
    for i in range(n):
        for j in range(25):
            me[j] = 0
        _cb_slots(words[i] & _CB_BOARD, start, me)
        row = out[r]
        for j in range(STATE_LEN):
            row[j] = 0
        for j in range(25):
            row[mine + j] = me[j]
            row[theirs + j] = state[THEM + j]
        row[theirs + BAR] = state[THEM + BAR]
        _turn_tail(row, state, segment, pending, seq, used, total)
        r += 1


@njit(cache=True)
def _cascade_route(state, d1, t, cascade):
    """Whether the turn goes to the cascade walk: a gul bara cascade or pending segment
    in a game where landing never changes the opponent, with no checker on my bar."""
    return ((cascade or d1 == 0) and t[T_MEET] == HOLD and t[T_START] == 0
            and t[T_BLOCK] != BLOCK_EACH and state[ME + BAR] == 0)


@njit(cache=True)
def cascade_plan(state, d1, d2, table):
    """``(route, seq, total, nondouble, cascade, head_limit)``: whether the exact
    generator would take the cascade walk for this turn, and the turn's dice as
    :func:`_dice_sequence` gives them. For callers that drive the walk's layers
    themselves (:func:`engine.movegen.generate.successor_arrays` on several threads)."""
    seq, total, nondouble, cascade = _dice_sequence(state, d1, d2, table)
    return (_cascade_route(state, d1, table, cascade), seq, total, nondouble, cascade,
            _head_limit(state, d1, d2, table))


@njit(cache=True)
def cascade_start(state, t, head_limit):
    """The walk's first layer (the board as one word), its step record with the turn's
    constants filled in (see ``_X_*``) and the points I may land on (the opponent
    never moves during the turn)."""
    me = np.zeros(26, np.int64)
    for i in range(25):
        me[i] = state[ME + i]
    count = 0
    for i in range(25):
        count += me[i]
    free = np.int64(0)
    for p in range(1, 25):
        if state[THEM + t[T_OPP + p]] == 0:
            free |= np.int64(1) << p
    cur = np.zeros(1, np.int64)
    cur[0] = _cb_encode(me)
    step = np.zeros(_X_LEN, np.int64)
    step[_X_HEAD0] = me[24] if t[T_HEAD] != 0 else 99      # 99: no head rule
    step[_X_HEAD_LIMIT] = head_limit
    step[_X_COUNT] = count
    step[_X_CHUNK] = _CHUNK
    return cur, step, free


@njit(cache=True)
def cascade_step(step, seq, total, k, free):
    """Fill in ``step`` for the walk's step ``k`` (die ``seq[k]``)."""
    die = seq[k]
    step[_X_DIE] = die
    step[_X_BOUNDED] = 0 if k + 1 == total or seq[k + 1] != die else 1
    # sources die+1..24 whose landing point is free (:func:`_can` for all at once)
    step[_X_LAND] = (free << die) & ((np.int64(2) << 24) - (np.int64(2) << die))


@njit(cache=True, nogil=True)
def cascade_layer(cur, lo, hi, step, kids, over, o, tmp):
    """One step of the walk from the sorted boards ``cur[lo:hi]``: their children
    sorted and squeezed into ``kids``, those that bore off my last checker appended to
    ``over[:o]``; ``tmp`` is work space. Each of the three is grown when too small,
    and the caller keeps them for the next layer (fresh arrays of tens of megabytes
    every layer cost more in page faults than the work). Returns ``(kids, count, over,
    o, tmp)``. Runs without the GIL, so that parts of a large layer can run on threads
    of their own.

    The parents go in chunks (:data:`_CHUNK`): a chunk's sorted streams
    (:func:`_expand`) are merged into one run, and the chunks' runs into the layer.
    ``tmp`` holds the streams, the chunk's merge space after them, and the runs (in
    ``kids`` instead when the layer's merge rounds are even in number, so that the
    last round writes ``kids``)."""
    n = hi - lo
    cap = min(n, step[_X_CHUNK])
    if cap == 0:
        return kids, 0, over, o, tmp
    chunks = (n + cap - 1) // cap
    space = 48 * cap                     # the streams, then the chunk's merge space
    tmp = _grown(tmp, space + 16, 0)
    in_kids = _rounds(chunks) % 2 == 0   # where the runs go
    cnt = np.zeros(25, np.int64)
    starts = np.zeros(24, np.int64)
    lens = np.zeros(24, np.int64)
    run_at = np.zeros(chunks, np.int64)
    run_len = np.zeros(chunks, np.int64)
    nruns = 0
    t = 0                                # words of runs so far
    for c in range(chunks):
        a = lo + c * cap
        b = min(hi, a + cap)
        over = _grown(over, o + cap, o)
        o = _expand(cur, a, b, step, tmp, cap, cnt, over, o)
        r = 0
        for src in range(1, 25):
            if cnt[src] > 0:
                starts[r] = (src - 1) * cap
                lens[r] = cnt[src]
                r += 1
        if r == 0:
            continue
        at = 0                          # where the chunk's run lies in tmp
        m = lens[0]
        if r == 1:
            at = starts[0]
        else:
            in_y, m = _merge_runs(tmp[:space >> 1], tmp[space >> 1:space], starts, lens, r)
            at = space >> 1 if in_y else 0
        if in_kids:
            kids = _grown(kids, t + m, t)
            kids[t:t + m] = tmp[at:at + m]
        else:
            tmp = _grown(tmp, space + t + m, space + t)
            tmp[space + t:space + t + m] = tmp[at:at + m]
        run_at[nruns] = t
        run_len[nruns] = m
        nruns += 1
        t += m
    kids = _grown(kids, t, t if in_kids else 0)
    tmp = _grown(tmp, space + t, space + t if not in_kids else 0)
    if nruns == 0:
        return kids, 0, over, o, tmp
    runs = tmp[space:]
    if nruns == 1:
        if not in_kids:
            kids[:t] = runs[:t]
        return kids, t, over, o, tmp
    if in_kids:
        in_runs, m = _merge_runs(kids, runs, run_at, run_len, nruns)
    else:
        in_kids, m = _merge_runs(runs, kids, run_at, run_len, nruns)
        in_runs = not in_kids
    if in_runs:                         # chunks without children changed the number
        kids[:m] = runs[:m]             # of rounds: the last one wrote ``runs``
    return kids, m, over, o, tmp


@njit(cache=True, nogil=True)
def cascade_merge(a, na, b, nb, out):
    """Two sorted, squeezed layers ``a[:na]`` and ``b[:nb]`` (from
    :func:`cascade_layer`) as one in ``out`` (grown if too small), a board met in both
    keeping the looser bound. ``b`` may be empty. Returns ``(out, count)``."""
    if out.shape[0] < na + nb:
        out = np.empty(na + nb + ((na + nb) >> 1), np.int64)
    i = 0
    j = 0
    m = 0
    while i < na or j < nb:
        if j >= nb or (i < na and (a[i] & _CB_BOARD) <= (b[j] & _CB_BOARD)):
            x = a[i]
            i += 1
        else:
            x = b[j]
            j += 1
        m = _squeeze(out, m, x)
    return out, m


@njit(cache=True)
def _cascade(state, d1, t, seq, total, cascade, head_limit, out):
    """The cascade strategy (see above) on one thread; returns ``(count, out)``, or
    ``(-1, out)`` to leave the turn to the layered walk."""
    cur, step, free = cascade_start(state, t, head_limit)
    ncur = 1
    over = np.zeros(16, np.int64)
    nover = 0
    kids = np.zeros(1024, np.int64)
    tmp = np.zeros(1024, np.int64)
    layer = 0
    for k in range(total):
        cascade_step(step, seq, total, k, free)
        kids, nk, over, nover, tmp = cascade_layer(cur, 0, ncur, step, kids, over, nover,
                                                   tmp)
        if nk == 0:
            break
        cur, kids = kids, cur
        ncur = nk
        layer = k + 1
    return cascade_end(state, d1, t, seq, total, cascade, cur, ncur, layer, over, nover,
                       out)


@njit(cache=True)
def cascade_end(state, d1, t, seq, total, cascade, cur, ncur, layer, over, nover, out):
    """The successors of the walk's deepest layer ``cur[:ncur]`` (after ``layer``
    steps) and of the plays that ended the game ``over[:nover]``: the six-block rule
    checked (:func:`cascade_keep`), the forced-play choice made as in the layered walk
    (:func:`cascade_choice`). Returns ``(count, out)``, or ``(-1, out)`` when every
    longest play breaks the six-block rule (the layered walk then looks for the longest
    legal shorter play)."""
    nover = cascade_squeeze(over, nover)
    nkeep = cascade_keep(cur, 0, ncur, state, t)
    nkeep, used = cascade_choice(nkeep, nover, layer, total)
    if nkeep < 0:
        return -1, out
    segment = d1 == 0
    n = nkeep + nover
    if out.shape[0] < n:
        out = np.empty((n, STATE_LEN), np.int16)
    cascade_rows(cur, nkeep, out, 0, state, segment, cascade, seq, used, total)
    cascade_rows(over, nover, out, nkeep, state, segment, False, seq, used, total)
    return n, out


@njit(cache=True)
def cascade_out(n):
    """An empty ``(n, STATE_LEN)`` successor array, allocated by numba: numpy advises
    the kernel to back large arrays with huge pages, whose faults stalled for tenths of
    a second at times when threads filled a cascade's hundreds of megabytes of rows."""
    return np.empty((n, STATE_LEN), np.int16)


@njit(cache=True, nogil=True)
def cascade_squeeze(words, n):
    """Sort and squeeze the words ``words[:n]`` of plays that ended the game (boards
    without bounds); returns the count left."""
    words[:n].sort()
    m = 0
    for i in range(n):
        m = _squeeze(words, m, words[i])
    return m


@njit(cache=True)
def _block_masks(s, t):
    """The six-block rule of the position ``s`` as masks of my points: an end position
    breaks it when my occupied points cover one of them (the same rule as
    :func:`_block_legal`, for a turn in which the opponent does not move): every six
    consecutive points of the opponent's numbering that begin at or below its lowest
    checker, or with :data:`BLOCK_QUARTER` my points 19..24."""
    masks = np.zeros(19, np.int64)
    rule = t[T_BLOCK]
    if rule == BLOCK_NONE:
        return masks[:0]
    if rule == BLOCK_QUARTER:
        masks[0] = ((np.int64(1) << 25) - 1) & ~((np.int64(1) << 19) - 1)
        return masks[:1]
    low = 25
    for q in range(24, 0, -1):
        if s[THEM + q] > 0:
            low = q
    n = 0
    for w in range(1, min(low, 19) + 1):
        m = np.int64(0)
        for q in range(w, w + 6):
            m |= np.int64(1) << t[T_OPP + q]
        masks[n] = m
        n += 1
    return masks[:n]


@njit(cache=True, nogil=True)
def cascade_keep(cur, lo, hi, state, t):
    """Move the boards of ``cur[lo:hi]`` that pass the six-block rule
    (:func:`_block_masks`), bounds dropped, to the front of that range, in order;
    returns how many."""
    masks = _block_masks(state, t)
    start = np.zeros(25, np.int64)
    me = np.zeros(25, np.int64)
    m = lo
    for i in range(lo, hi):
        x = cur[i] & _CB_BOARD
        if masks.shape[0] > 0:
            occupied = _cb_occupied(x, start, me)
            broken = False
            for mask in masks:
                if occupied & mask == mask:
                    broken = True
                    break
            if broken:
                continue
        cur[m] = x
        m += 1
    return m - lo


@njit(cache=True)
def cascade_choice(nkeep, nover, layer, total):
    """The forced-play choice between the deepest layer's ``nkeep`` legal boards and
    ``nover`` plays that ended the game: ``(boards kept, dice used)``, boards kept -1
    when every longest play breaks the six-block rule."""
    if nover > 0:
        return (0 if layer < total else nkeep), total   # ending the game counts as all dice
    if nkeep == 0:
        return -1, layer
    return nkeep, layer


@njit(cache=True, nogil=True)
def cascade_lower_bound(words, n, board):
    """The first index of the sorted ``words[:n]`` whose board is not below ``board``."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if (words[mid] & _CB_BOARD) < board:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def cascade_back(layers, starts, seq, free, head0, head_limit, me, k, steps):
    """The single steps of a cascade play, found backwards from its end: ``me`` (my
    counts of off and points 1..24, changed in place) is reached after ``k`` dice of
    ``seq``; ``layers[starts[j]:starts[j + 1]]`` are the sorted boards of the walk
    after ``j`` dice (bounds dropped). For each die from the last, the first parent
    (source from point 24 down) that a legal step leads from and that the layer before
    holds; ``steps[j] = (from, to)``. Returns False when some board has no such parent
    (``me`` was not reached with these dice)."""
    for j in range(k, 0, -1):
        die = seq[j - 1]
        home = True
        for p in range(7, 25):
            if me[p] != 0:
                home = False
        found = False
        for src in range(24, 0, -1):
            dest = src - die
            if dest < 0:
                dest = 0
            if me[dest] == 0 or (dest > 0 and (free >> dest) & 1 == 0):
                continue
            if dest == 0:                 # bearing off: all home, exact or the highest
                if not home:
                    continue
                higher = False
                for p in range(src + 1, 7):
                    if me[p] != 0:
                        higher = True
                if src != die and (src > die or higher):
                    continue
            me[dest] -= 1
            me[src] += 1
            if src == 24 and head0 - me[24] >= head_limit:
                me[dest] += 1             # the head rule: no more may leave the head
                me[src] -= 1
                continue
            lo = starts[j - 1]
            n = starts[j] - lo
            x = _cb_encode(me)
            i = cascade_lower_bound(layers[lo:], n, x)
            if i < n and layers[lo + i] == x:
                steps[j - 1, 0] = src
                steps[j - 1, 1] = dest
                found = True
                break
            me[dest] += 1
            me[src] -= 1
        if not found:
            return False
    return True


@njit(cache=True)
def _finish(state, d1, seq, total, used, cascade, best, nbest, over, nover, out):
    """The successors of the chosen end states ``best[:nbest]`` and of the plays that
    ended the game ``over[:nover]`` (working states): flipped (unless a pending
    segment), turns advanced, a cascade's unplayed dice ``seq[used:total]`` pending,
    deduplicated on the position. Returns ``(count, out)``.

    A play that ended the game and an ordinary end of the same board are one successor
    (a set-up plakoto position whose mother is pinned already: bearing the pinner off
    and pinning her again ends the game, keeping the pin does not). The two rows are
    the same: when any play ended the game, every end counts all the dice (``used ==
    total``), so no row has dice pending."""
    res, res_h, res_t = _new_set(max(16, nbest + nover))
    nres = 0
    segment = d1 == 0
    w = np.zeros(_W_LEN, np.int8)
    for part in range(2):
        n = nbest if part == 0 else nover
        for i in range(n):
            s = best[i] if part == 0 else over[i]
            if segment:
                w[:_W_HEADS] = s[:_W_HEADS]
            else:
                for j in range(26):
                    w[ME + j] = s[THEM + j]
                    w[THEM + j] = s[ME + j]
                    w[PIN_ME + j] = s[PIN_THEM + j]
                    w[PIN_THEM + j] = s[PIN_ME + j]
            nres = _set_put(res, res_h, res_t, nres, w, _hash(w), False)   # sized
    if out.shape[0] < nres:
        out = np.empty((nres, STATE_LEN), np.int16)
    for i in range(nres):
        r = out[i]
        r[:] = 0
        w = res[i]
        for j in range(_W_HEADS):
            r[j] = w[j]
        _turn_tail(r, state, segment, cascade, seq, used, total)
    return nres, out


@njit(cache=True, inline="always")
def _turn_tail(row, state, segment, pending, seq, used, total):
    """A successor's turn counters (advanced unless a pending segment was played) and,
    when ``pending``, the cascade's unplayed dice ``seq[used:total]``."""
    if segment:
        row[TURNS_ME] = state[TURNS_ME]
        row[TURNS_THEM] = state[TURNS_THEM]
        return
    row[TURNS_ME] = state[TURNS_THEM]
    row[TURNS_THEM] = state[TURNS_ME] + 1
    if pending:
        for j in range(used, total):
            row[PEND + j - used] = seq[j]
        row[NPEND] = total - used
