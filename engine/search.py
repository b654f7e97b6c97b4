"""n-ply search: the best play of a roll, and the value of a position before its roll.

Plies are counted as GNU Backgammon counts them:

* **0-ply**: a position is rated statically (:mod:`engine.evaluator`: the network, the
  exact result of a finished game, or the bear-off tables of a home race);
* **n-ply** value of a position before its side to move rolls: the average over the 21
  rolls (doubles 1/36, others 2/36) of the mover's best play for that roll, each play
  valued at (n - 1)-ply;
* a **play** (a successor) valued at n-ply is its successor position's n-ply value, seen
  from the mover (successors are flipped: the mover's outputs are
  :func:`engine.network.flip_probs` of the successor's, his equity the negative).

Move filters, in the manner of GNU Backgammon, keep the work bounded. At the root
(:attr:`SearchSettings.filters`) every play is rated at 0-ply, then level by level the
survivors are filtered (:class:`MoveFilter`: at most ``keep`` plays within ``within``
equity of the best) and rated one ply deeper; a level without a filter is skipped. Inside
the search (:attr:`SearchSettings.reply`) each roll's plays are rated at 0-ply and the
best ``keep`` within ``within`` are searched at the remaining depth; the default keeps one,
which is GNU Backgammon's own choice (the reply picked at 0-ply, then valued deeper).

Gul bara's pending dice are a decision of their own: a position holding pending dice is
valued, at n >= 1 ply, as the best of its pending-segment plays valued at n-ply (the
segment is no roll, so it costs no ply); at 0-ply the network rates it as it stands.

The work is in numba, one function per depth (``_value1``, ``_value2``, ``_value3``:
recursion and numba's cache do not mix); every node's successors are rated in one
batch, each hidden layer computed from the node's by the few inputs that changed.
Results are deterministic for a given model: ties go to the first play the move
generator lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit, prange

from . import _layout as L
from ._jit import FAST, announce_compile
from ._movegen import SCRATCH_LEN, generate_into, generate_play
from .dice import Dice
from .errors import NardyError, quote
from .evaluator import F_PRUNE, S_STATIC, Evaluator, exact_probs
from .movegen import check_dice
from .network import (N_OUTPUTS, OUTPUTS, equity, flip_probs_into, hidden_delta, hidden_full,
                      kids_ref, outputs, outputs_batch)
from .position import Position

MAX_PLY = 3
"""Deepest search offered."""


class SearchError(NardyError):
    """Search settings out of range (a ply outside 0..3, a filter keeping nothing)."""

    code = "invalid_ply"


# --------------------------------------------------------------------- settings
@dataclass(frozen=True)
class MoveFilter:
    """Keep at most ``keep`` plays, each within ``within`` equity of the best."""

    keep: int
    """Most plays kept (the best always is); at least 1."""
    within: float
    """Largest equity gap to the best play that a kept play may have."""

    def __post_init__(self):
        if isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1:
            raise SearchError(f"MoveFilter keep = {quote(self.keep)}: expected an int >= 1")
        if not isinstance(self.within, (int, float)) or not self.within >= 0:
            raise SearchError(f"MoveFilter within = {quote(self.within)}: expected a number >= 0")


DEFAULT_FILTERS = {
    0: (),
    1: (MoveFilter(8, 0.16),),
    2: (MoveFilter(8, 0.16), None),
    3: (MoveFilter(8, 0.16), None, MoveFilter(2, 0.04)),
}
"""Root filters by search depth, GNU Backgammon's "normal" move filters: after 0-ply keep
up to 8 plays within 0.16; 1-ply is skipped; for 3-ply the 2-ply survivors are cut to 2
within 0.04."""


@dataclass(frozen=True)
class SearchSettings:
    """How deep and how wide a search goes."""

    ply: int = 0
    """Depth, 0..3 (:data:`MAX_PLY`)."""
    filters: tuple | None = None
    """Root filters, one per level 0 .. ply-1 (a :class:`MoveFilter`, or None to skip
    the level: at level 0, None keeps every play); None: :data:`DEFAULT_FILTERS`."""
    reply: MoveFilter = MoveFilter(1, 0.0)
    """Filter of the plays searched deeper inside the search, after their 0-ply rating
    (one: pick at 0-ply, then value at the remaining depth)."""
    bearoff: bool = True
    """Value home races with the bear-off tables (where the evaluator has them)."""
    prune: bool = True
    """Inside the search, rank each roll's plays with the evaluator's pruning network
    (where it has one) and rate only the play picked with the full network, as GNU
    Backgammon's pruning nets do; the root's plays are always rated by the network."""

    def __post_init__(self):
        if isinstance(self.ply, bool) or not isinstance(self.ply, int) \
                or not 0 <= self.ply <= MAX_PLY:
            raise SearchError(f"ply = {quote(self.ply)}: expected an integer 0..{MAX_PLY}")
        if self.filters is not None:
            if len(self.filters) != self.ply:
                raise SearchError(f"filters = {quote(self.filters)}: expected {self.ply} "
                                  f"level(s) for ply {self.ply}")
            for f in self.filters:
                if f is not None and not isinstance(f, MoveFilter):
                    raise SearchError(f"filter {quote(f)}: expected a MoveFilter or None")
        if not isinstance(self.reply, MoveFilter):
            raise SearchError(f"reply = {quote(self.reply)}: expected a MoveFilter")

    @property
    def root_filters(self) -> tuple:
        """The root filters in force (the defaults unless given)."""
        return self.filters if self.filters is not None else DEFAULT_FILTERS[self.ply]

    def packed(self):
        """``(root_keep, root_within, reply_keep, reply_within)`` arrays for the
        kernels (keep -1: no filter / level skipped)."""
        fkeep = np.full(MAX_PLY + 1, -1, np.int64)
        fwithin = np.zeros(MAX_PLY + 1)
        for j, f in enumerate(self.root_filters):
            if f is not None:
                fkeep[j], fwithin[j] = f.keep, f.within
        rkeep = np.full(MAX_PLY + 1, self.reply.keep, np.int64)
        rwithin = np.full(MAX_PLY + 1, float(self.reply.within))
        return fkeep, fwithin, rkeep, rwithin


# --------------------------------------------------------------------- kernels
_ROLLS = np.array([(a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(1, a + 1)],
                  dtype=np.int64)


@njit(cache=True, inline="always")
def _rank(ctx):
    """The network that ranks plays inside a search: ``ctx[10:19]``, the evaluator's
    pruning network or the network itself (:meth:`engine.evaluator.Evaluator.kernel_args`;
    flat in ``ctx`` because numba's parallel loops take no nested tuples)."""
    return ctx[10:19]


@njit(cache=True, inline="always")
def _add_flipped(acc, v, wgt):
    acc[0] += wgt * (1.0 - v[0])
    acc[1] += wgt * v[3]
    acc[2] += wgt * v[4]
    acc[3] += wgt * v[1]
    acc[4] += wgt * v[2]


@njit(**FAST)
def _node_ref(parent, segment, net, ref, h_ref):
    """The parent's checker slots seen from its kids' side to move into ``ref`` (as
    they are after a pending segment, flipped after a roll) and their hidden
    pre-activations, less the hand-crafted features, into ``h_ref``: the base every
    kid's hidden layer is computed from (:func:`engine.network.hidden_delta`)."""
    w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = net
    kids_ref(parent, segment, ref)
    hidden_full(ref, w1t, b1, uidx, uval, cidx, cval, fidx[:0], h_ref)


@njit(**FAST)
def _rate_children(ref, h_ref, segment, kids, n, net, ctx, probs, eq):
    """0-ply outputs of ``kids[:n]`` (for each kid's side to move) into ``probs``, and
    the mover's equity of each into ``eq``. ``segment``: the kids are the results of a
    pending segment (same side to move), else of a roll (flipped). Each hidden layer is
    ``h_ref`` (:func:`_node_ref`) plus the few inputs that changed; the kids the
    network rates go through its outputs in one batch."""
    w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = net
    hs = np.empty((n, h_ref.shape[0]), np.float32)
    rated = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        if not exact_probs(kids[i], ctx, probs[i]):
            hidden_delta(ref, h_ref, kids[i], w1t, uidx, uval, fidx, hs[m])
            rated[m] = i
            m += 1
    o32 = np.empty((m, N_OUTPUTS), np.float32)
    outputs_batch(hs, m, w2, b2, o32)
    for j in range(m):
        for k in range(N_OUTPUTS):
            probs[rated[j], k] = o32[j, k]
    for i in range(n):
        e = equity(probs[i])
        eq[i] = e if segment else -e
    ctx[6][S_STATIC] += n


@njit(**FAST)
def _rate_all(parent, segment, kids, n, net, ctx, probs, eq):
    """:func:`_rate_children` with its own base and work space."""
    nh = net[1].shape[0]
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(nh, np.float32)
    _node_ref(parent, segment, net, ref, h_ref)
    _rate_children(ref, h_ref, segment, kids, n, net, ctx, probs, eq)


@njit(cache=True)
def _argmax(eq, n):
    best = 0
    for i in range(1, n):
        if eq[i] > eq[best]:
            best = i
    return best


@njit(cache=True)
def _filter(eq, idx, m, keep, within):
    """Reorder ``idx[:m]`` best first (stable on ties) and return how many of them pass
    the filter: at most ``keep``, each within ``within`` of the best."""
    vals = np.empty(m)
    for i in range(m):
        vals[i] = -eq[idx[i]]
    order = np.argsort(vals, kind="mergesort")
    tmp = idx[:m].copy()
    for i in range(m):
        idx[i] = tmp[order[i]]
    top = eq[idx[0]]
    k = 0
    while k < m and k < keep and eq[idx[k]] >= top - within:
        k += 1
    return k


@njit(cache=True)
def _grow(n, probs, eq, idx):
    if probs.shape[0] < n:
        size = max(n, 2 * probs.shape[0])
        probs = np.empty((size, N_OUTPUTS))
        eq = np.empty(size)
        idx = np.empty(size, np.int64)
    return probs, eq, idx


@njit(**FAST)
def _static(s, net, ctx, o):
    """0-ply outputs of one state for its side to move."""
    if exact_probs(s, ctx, o):
        ctx[6][S_STATIC] += 1
        return
    w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = net
    nh = b1.shape[0]
    h = np.empty(nh, np.float32)
    act = np.empty(nh, np.float32)
    o32 = np.empty(N_OUTPUTS, np.float32)
    hidden_full(s, w1t, b1, uidx, uval, cidx, cval, fidx, h)
    outputs(h, w2, b2, act, o32)
    for k in range(N_OUTPUTS):
        o[k] = o32[k]
    ctx[6][S_STATIC] += 1


# ----- depth 1
@njit(**FAST)
def _rollavg1(s, net, ctx, o):
    """1-ply value of ``s`` (no pending dice, game on): over the 21 rolls, the mover's
    best play at 0-ply. The plays are ranked by ``ctx[10:19]``; when that is a pruning
    network, the play it picks is then rated by ``net``."""
    table = ctx[0]
    scratch = ctx[7]
    rank = _rank(ctx)
    pruning = ctx[5][F_PRUNE] != 0
    kids = np.empty((64, L.STATE_LEN), np.int16)
    probs = np.empty((64, N_OUTPUTS))
    eq = np.empty(64)
    idx = np.empty(64, np.int64)
    acc = np.zeros(N_OUTPUTS)
    v = np.empty(N_OUTPUTS)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(rank[1].shape[0], np.float32)
    _node_ref(s, False, rank, ref, h_ref)
    for r in range(_ROLLS.shape[0]):
        n, kids = generate_play(s, _ROLLS[r, 0], _ROLLS[r, 1], table, scratch, kids)
        probs, eq, idx = _grow(n, probs, eq, idx)
        _rate_children(ref, h_ref, False, kids, n, rank, ctx, probs, eq)
        b = _argmax(eq, n)
        if pruning:
            _static(kids[b], net, ctx, v)
            _add_flipped(acc, v, _ROLLS[r, 2] / 36.0)
        else:
            _add_flipped(acc, probs[b], _ROLLS[r, 2] / 36.0)
    for k in range(N_OUTPUTS):
        o[k] = acc[k]


@njit(**FAST)
def _value1(s, net, ctx, o):
    """1-ply value of any state for its side to move."""
    if exact_probs(s, ctx, o):
        return
    if s[L.NPEND] == 0:
        _rollavg1(s, net, ctx, o)
        return
    kids = np.empty((64, L.STATE_LEN), np.int16)
    n, kids = generate_play(s, 0, 0, ctx[0], ctx[7], kids)
    probs = np.empty((n, N_OUTPUTS))
    eq = np.empty(n)
    idx = np.arange(n)
    _rate_all(s, True, kids, n, _rank(ctx), ctx, probs, eq)
    m = _filter(eq, idx, n, ctx[8][1], ctx[9][1])
    v = np.empty(N_OUTPUTS)
    best = -1e9
    for j in range(m):
        c = kids[idx[j]]
        if not exact_probs(c, ctx, v):
            _rollavg1(c, net, ctx, v)
        e = equity(v)
        if e > best:
            best = e
            o[:] = v


@njit(**FAST)
def _roll_plays(s, r, level, ref, h_ref, ctx):
    """The plays of roll ``r`` of :data:`_ROLLS` in ``s`` (no pending dice, game on;
    ``ref``, ``h_ref`` from :func:`_node_ref` with the ranking network ``ctx[10:19]``)
    rated at 0-ply by that network and filtered by the ``reply`` filter of ``level``:
    ``(kids, idx, m)``, the best ``m`` being ``kids[idx[:m]]``, best first."""
    kids = np.empty((64, L.STATE_LEN), np.int16)
    probs = np.empty((64, N_OUTPUTS))
    eq = np.empty(64)
    idx = np.empty(64, np.int64)
    n, kids = generate_play(s, _ROLLS[r, 0], _ROLLS[r, 1], ctx[0], ctx[7], kids)
    probs, eq, idx = _grow(n, probs, eq, idx)
    _rate_children(ref, h_ref, False, kids, n, _rank(ctx), ctx, probs, eq)
    for i in range(n):
        idx[i] = i
    return kids, idx, _filter(eq, idx, n, ctx[8][level], ctx[9][level])


# ----- depth 2
@njit(**FAST)
def _roll2(s, r, ref, h_ref, net, ctx, w):
    """Roll ``r`` of :data:`_ROLLS` in ``s`` (no pending dice, game on; ``ref``,
    ``h_ref`` from :func:`_node_ref`): the mover's plays rated at 0-ply, the best
    ``reply`` ones valued at 1-ply; ``w`` gets the outputs of the best (for the side to
    move after it)."""
    v = np.empty(N_OUTPUTS)
    kids, idx, m = _roll_plays(s, r, 1, ref, h_ref, ctx)
    best = -1e9
    for j in range(m):
        _value1(kids[idx[j]], net, ctx, v)
        e = -equity(v)
        if e > best:
            best = e
            w[:] = v


@njit(**FAST)
def _rollavg2(s, net, ctx, o):
    """2-ply value of ``s`` (no pending dice, game on)."""
    w = np.empty(N_OUTPUTS)
    acc = np.zeros(N_OUTPUTS)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(_rank(ctx)[1].shape[0], np.float32)
    _node_ref(s, False, _rank(ctx), ref, h_ref)
    for r in range(_ROLLS.shape[0]):
        _roll2(s, r, ref, h_ref, net, ctx, w)
        _add_flipped(acc, w, _ROLLS[r, 2] / 36.0)
    for k in range(N_OUTPUTS):
        o[k] = acc[k]


@njit(**FAST)
def _value2(s, net, ctx, o):
    """2-ply value of any state for its side to move."""
    if exact_probs(s, ctx, o):
        return
    if s[L.NPEND] == 0:
        _rollavg2(s, net, ctx, o)
        return
    kids = np.empty((64, L.STATE_LEN), np.int16)
    n, kids = generate_play(s, 0, 0, ctx[0], ctx[7], kids)
    probs = np.empty((n, N_OUTPUTS))
    eq = np.empty(n)
    idx = np.arange(n)
    _rate_all(s, True, kids, n, _rank(ctx), ctx, probs, eq)
    m = _filter(eq, idx, n, ctx[8][2], ctx[9][2])
    v = np.empty(N_OUTPUTS)
    best = -1e9
    for j in range(m):
        c = kids[idx[j]]
        if not exact_probs(c, ctx, v):
            _rollavg2(c, net, ctx, v)
        e = equity(v)
        if e > best:
            best = e
            o[:] = v


# ----- depth 3
@njit(**FAST)
def _roll3(s, r, ref, h_ref, net, ctx, w):
    """:func:`_roll2` one ply deeper: the best ``reply`` plays valued at 2-ply."""
    v = np.empty(N_OUTPUTS)
    kids, idx, m = _roll_plays(s, r, 2, ref, h_ref, ctx)
    best = -1e9
    for j in range(m):
        _value2(kids[idx[j]], net, ctx, v)
        e = -equity(v)
        if e > best:
            best = e
            w[:] = v


@njit(**FAST)
def _rollavg3(s, net, ctx, o):
    """3-ply value of ``s`` (no pending dice, game on)."""
    w = np.empty(N_OUTPUTS)
    acc = np.zeros(N_OUTPUTS)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(_rank(ctx)[1].shape[0], np.float32)
    _node_ref(s, False, _rank(ctx), ref, h_ref)
    for r in range(_ROLLS.shape[0]):
        _roll3(s, r, ref, h_ref, net, ctx, w)
        _add_flipped(acc, w, _ROLLS[r, 2] / 36.0)
    for k in range(N_OUTPUTS):
        o[k] = acc[k]


@njit(**FAST)
def _value3(s, net, ctx, o):
    """3-ply value of any state for its side to move."""
    if exact_probs(s, ctx, o):
        return
    if s[L.NPEND] == 0:
        _rollavg3(s, net, ctx, o)
        return
    kids = np.empty((64, L.STATE_LEN), np.int16)
    n, kids = generate_play(s, 0, 0, ctx[0], ctx[7], kids)
    probs = np.empty((n, N_OUTPUTS))
    eq = np.empty(n)
    idx = np.arange(n)
    _rate_all(s, True, kids, n, _rank(ctx), ctx, probs, eq)
    m = _filter(eq, idx, n, ctx[8][3], ctx[9][3])
    v = np.empty(N_OUTPUTS)
    best = -1e9
    for j in range(m):
        c = kids[idx[j]]
        if not exact_probs(c, ctx, v):
            _rollavg3(c, net, ctx, v)
        e = equity(v)
        if e > best:
            best = e
            o[:] = v


@njit(**FAST)
def value_at(s, ply, net, ctx, o):
    """The ``ply``-ply outputs of state ``s`` for its side to move, into ``o``."""
    if ply <= 0:
        _static(s, net, ctx, o)
    elif ply == 1:
        _value1(s, net, ctx, o)
    elif ply == 2:
        _value2(s, net, ctx, o)
    else:
        _value3(s, net, ctx, o)


@njit(**FAST)
def decide0(s, d1, d2, net, ctx, kids):
    """:func:`decide` at 0-ply (compiled without the deeper search)."""
    segment = d1 == 0
    n, kids = generate_into(s, d1, d2, ctx[0], ctx[7], kids)
    probs = np.empty((n, N_OUTPUTS))
    eq = np.empty(n)
    _rate_all(s, segment, kids, n, net, ctx, probs, eq)
    if not segment:
        v = np.empty(N_OUTPUTS)
        for i in range(n):
            flip_probs_into(probs[i], v)
            probs[i] = v
    return n, kids, probs, eq


@njit(**FAST)
def _roll_task(kid, r, depth, net, ctx, stats, w):
    """One task of :func:`_values_parallel`: roll ``r`` of ``kid`` searched to
    ``depth`` (2 or 3) with a work space and statistics row of its own; the best
    reply's outputs go to ``w``."""
    c = (ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], stats,
         np.zeros(SCRATCH_LEN, np.int64), ctx[8], ctx[9]) + _rank(ctx)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(_rank(ctx)[1].shape[0], np.float32)
    _node_ref(kid, False, _rank(ctx), ref, h_ref)
    if depth == 2:
        _roll2(kid, r, ref, h_ref, net, c, w)
    else:
        _roll3(kid, r, ref, h_ref, net, c, w)


@njit(parallel=True, **FAST)
def _run_tasks(tasks, nt, kids, alive, depth, net, ctx, stats, best):
    """The tasks of :func:`_values_parallel` on every core. The prange body only
    calls :func:`_roll_task`, which allocates its own work space: numba hoists an
    allocation made in a prange body out of the loop (sharing it between threads), and
    names assigned in the body must not be used after the loop."""
    nr = _ROLLS.shape[0]
    for t in prange(nt):
        code = tasks[t]
        _roll_task(kids[alive[code // nr]], code % nr, depth, net, ctx, stats[t], best[code])


@njit(**FAST)
def _values_parallel(kids, alive, m, depth, segment, net, ctx, probs):
    """The ``depth``-ply (2 or 3) outputs of the plays ``kids[alive[:m]]`` for the
    mover, into ``probs``, on every core: each (play, roll) pair of the plays whose
    value is an average over the 21 rolls is a task of numba's ``prange``
    (``NUMBA_NUM_THREADS`` threads). Each task has its own move-generator work space
    and statistics row, and the rolls are summed in the serial order afterwards, so the
    result is the serial search's, bit for bit."""
    nr = _ROLLS.shape[0]
    # plays valued otherwise (exact, or a pending segment first) go the serial way
    avg = np.zeros(m, np.bool_)
    v = np.empty(N_OUTPUTS)
    for j in range(m):
        c = kids[alive[j]]
        if c[L.NPEND] == 0 and not exact_probs(c, ctx, v):
            avg[j] = True
    tasks = np.empty(m * nr, np.int64)
    nt = 0
    for j in range(m):
        if avg[j]:
            for r in range(nr):
                tasks[nt] = j * nr + r
                nt += 1
    stats = np.zeros((nt, ctx[6].shape[0]), np.int64)
    best = np.empty((m * nr, N_OUTPUTS))
    _run_tasks(tasks, nt, kids, alive, depth, net, ctx, stats, best)
    for q in range(nt):
        for k in range(stats.shape[1]):
            ctx[6][k] += stats[q, k]
    acc = np.empty(N_OUTPUTS)
    for j in range(m):
        i = alive[j]
        if avg[j]:
            acc[:] = 0.0
            for r in range(nr):
                _add_flipped(acc, best[j * nr + r], _ROLLS[r, 2] / 36.0)
            v[:] = acc
        else:
            value_at(kids[i], depth, net, ctx, v)
        if segment:
            probs[i] = v
        else:
            flip_probs_into(v, probs[i])


@njit(**FAST)
def decide(s, d1, d2, ply, fkeep, fwithin, net, ctx, kids):
    """Rate every play of roll ``d1, d2`` (0, 0: the pending segment) from ``s``.

    Returns ``(n, kids, probs, eq, plies)``: the successors, the mover's outputs and
    equity of each and the depth each was rated at (survivors of the root filters reach
    ``ply``)."""
    segment = d1 == 0
    n, kids = generate_into(s, d1, d2, ctx[0], ctx[7], kids)
    probs = np.empty((n, N_OUTPUTS))
    eq = np.empty(n)
    plies = np.zeros(n, np.int64)
    _rate_all(s, segment, kids, n, net, ctx, probs, eq)
    if not segment:
        v = np.empty(N_OUTPUTS)
        for i in range(n):
            flip_probs_into(probs[i], v)
            probs[i] = v
    alive = np.arange(n)
    m = n
    v = np.empty(N_OUTPUTS)
    for depth in range(ply + 1):
        if depth > 0:
            if depth < ply and fkeep[depth] < 0:
                continue
            if depth >= 2 and m > 1:
                _values_parallel(kids, alive, m, depth, segment, net, ctx, probs)
            for j in range(m):
                i = alive[j]
                if depth < 2 or m == 1:
                    value_at(kids[i], depth, net, ctx, v)
                    if segment:
                        probs[i] = v
                    else:
                        flip_probs_into(v, probs[i])
                eq[i] = equity(probs[i])
                plies[i] = depth
        if depth < ply and fkeep[depth] >= 0 and m > 0:
            m = _filter(eq, alive, m, fkeep[depth], fwithin[depth])
    return n, kids, probs, eq, plies


# --------------------------------------------------------------------- Python API
@dataclass(frozen=True)
class Candidate:
    """One play, rated for the mover."""

    position: Position
    """The position after the play, seen from the next side to move."""
    move: str
    """The play in move text (``24/18 13/11``)."""
    equity: float
    """The mover's cubeless money equity after the play."""
    probabilities: tuple
    """The mover's five outputs (:data:`engine.network.OUTPUTS`) after the play."""
    ply: int
    """Depth the play was rated at (plays cut by a filter keep a shallower rating)."""

    def to_json(self) -> dict:
        return {"position": self.position.to_json(), "move": self.move,
                "equity": round(self.equity, 6), "ply": self.ply,
                "probabilities": probs_json(self.probabilities)}


@dataclass(frozen=True)
class Analysis:
    """The rated plays of one roll, best first."""

    position: Position
    """The position before the play."""
    dice: tuple | None
    """The roll, or None for a gul bara pending segment."""
    settings: SearchSettings
    """How the plays were searched."""
    candidates: tuple
    """Every legal play, best first: those rated at the full depth by equity, then
    those a filter cut, by their shallower rating."""
    evaluated: int = 0
    """Positions rated statically during the search."""
    plays: int = 0
    """Legal plays rated (``candidates`` holds only the first ``top`` when asked)."""

    @property
    def best(self) -> Candidate:
        """The play to make."""
        return self.candidates[0]


@dataclass(frozen=True)
class Evaluation:
    """The value of a position for its side to move, before it rolls."""

    probabilities: tuple
    """The five outputs, :data:`engine.network.OUTPUTS`."""
    equity: float
    """Cubeless money equity."""
    ply: int
    """Depth of the search."""
    evaluated: int = 0
    """Positions rated statically."""

    def to_json(self) -> dict:
        return {"probabilities": probs_json(self.probabilities),
                "equity": round(self.equity, 6), "ply": self.ply}


def probs_json(p) -> dict:
    """The five outputs as a JSON object keyed by :data:`OUTPUTS`."""
    return {k: round(float(v), 6) for k, v in zip(OUTPUTS, p)}


def _announce(ply: int, evaluate: bool = False) -> None:
    """Say on standard error that the kernels of a search at ``ply`` are about to be
    compiled, when they are not in numba's cache (benchmarks/compile.py measures it)."""
    if ply == 0:
        announce_compile("the 0-ply evaluation", [_static] if evaluate else [decide0],
                         "a minute")
    else:
        announce_compile("the n-ply search", [value_at] if evaluate else [decide],
                         "7 minutes")


class Search:
    """n-ply analysis of one game with one :class:`~engine.evaluator.Evaluator`."""

    def __init__(self, evaluator: Evaluator, settings: SearchSettings = SearchSettings()):
        self.evaluator = evaluator
        """Static evaluation (network, exact results, bear-off tables)."""
        self.settings = settings
        """Default settings; each call may override the ply."""

    @classmethod
    def load(cls, variant: str = "backgammon", path=None, **settings) -> "Search":
        """The search of ``variant`` with its released model ``models/<variant>.npz``
        (or ``path``); raises :class:`engine.evaluator.NoModelError` when there is none."""
        return cls(Evaluator.load(variant, path), SearchSettings(**settings))

    @property
    def variant(self) -> str:
        return self.evaluator.variant

    def _settings(self, ply, settings) -> SearchSettings:
        s = settings or self.settings
        if ply is not None and ply != s.ply:
            filters = s.filters if (s.filters is not None and len(s.filters) == ply) else None
            s = SearchSettings(ply, filters, s.reply, s.bearoff, s.prune)
        return s

    def _check(self, position: Position) -> None:
        if position.variant != self.variant:
            raise SearchError(f"position of {position.variant} given to the {self.variant} "
                              f"search")

    def rate(self, state: np.ndarray, dice, settings: SearchSettings):
        """Kernel-level :meth:`analyse`: ``(kids, probs, eq, plies, evaluated)`` for a
        state array, unsorted (benchmarks use it to skip building objects)."""
        fkeep, fwithin, rkeep, rwithin = settings.packed()
        net, ctx = self.evaluator.kernel_args(rkeep, rwithin, settings.bearoff,
                                              settings.prune)
        d1, d2 = dice if dice is not None else (0, 0)
        kids = np.empty((64, L.STATE_LEN), np.int16)
        _announce(settings.ply)
        if settings.ply == 0:
            n, kids, probs, eq = decide0(state, d1, d2, net, ctx, kids)
            plies = np.zeros(n, np.int64)
        else:
            n, kids, probs, eq, plies = decide(state, d1, d2, settings.ply, fkeep, fwithin,
                                               net, ctx, kids)
        return kids[:n], probs, eq, plies, int(ctx[6][S_STATIC])

    def analyse(self, position: Position, dice, ply: int | None = None,
                settings: SearchSettings | None = None, top: int | None = None) -> Analysis:
        """Every legal play of ``position`` for ``dice`` (a pair, :class:`Dice`, or None
        for a pending segment), rated and ranked best first. ``top`` limits how many
        candidates get move text and objects (all are still rated)."""
        from .movetext import format_move
        self._check(position)
        settings = self._settings(ply, settings)
        if isinstance(dice, Dice):
            dice = tuple(dice)
        d = check_dice(dice, position)
        kids, probs, eq, plies, evaluated = self.rate(position.to_array(), d, settings)
        n = len(kids)
        # more plies first, then higher equity, then generation order
        order = np.lexsort((np.arange(n), -eq[:n], -plies[:n]))
        if top is not None:
            order = order[:max(top, 1)]
        cands = []
        for i in order.tolist():
            after = Position.from_array(kids[i], position.variant)
            cands.append(Candidate(after, format_move(position, after, d), float(eq[i]),
                                   tuple(float(x) for x in probs[i]), int(plies[i])))
        return Analysis(position, d, settings, tuple(cands), evaluated, len(kids))

    def best(self, position: Position, dice, ply: int | None = None) -> Candidate:
        """The best play (see :meth:`analyse`)."""
        return self.analyse(position, dice, ply, top=1).best

    def evaluate(self, position: Position, ply: int | None = None,
                 settings: SearchSettings | None = None) -> Evaluation:
        """The ``ply``-ply value of ``position`` for its side to move, before it rolls
        (0-ply: the static evaluation; n-ply: the 21 rolls' best plays at n - 1)."""
        self._check(position)
        settings = self._settings(ply, settings)
        _, _, rkeep, rwithin = settings.packed()
        net, ctx = self.evaluator.kernel_args(rkeep, rwithin, settings.bearoff,
                                              settings.prune)
        o = np.zeros(N_OUTPUTS)
        _announce(settings.ply, evaluate=True)
        if settings.ply == 0:
            _static(position.to_array(), net, ctx, o)
        else:
            value_at(position.to_array(), settings.ply, net, ctx, o)
        p = tuple(float(x) for x in o)
        return Evaluation(p, float(equity(o)), settings.ply, int(ctx[6][S_STATIC]))

    def __repr__(self) -> str:
        return f"Search({self.evaluator!r}, {self.settings!r})"


class SearchPlayer:
    """A :class:`engine.players.Player` that plays the best play of an n-ply search."""

    def __init__(self, search: Search, ply: int = 0):
        self.search = search
        """The search (model, tables, filters)."""
        self.settings = search._settings(ply, None)
        """Settings of every decision."""

    def choose(self, position: Position, dice, successors: Sequence[Position]) -> int:
        """The offered successor the search ranks highest. The offer may be a subset of
        the legal plays (a gul bara cascade's sample, :func:`engine.movegen.
        successor_arrays` with ``play=True``): the search still rates every play, and
        the best one among those offered is taken."""
        d = None if dice is None else (int(tuple(dice)[0]), int(tuple(dice)[1]))
        kids, probs, eq, plies, _ = self.search.rate(position.to_array(), d, self.settings)
        offered = {succ.to_array()[:L.KEY_LEN].tobytes(): i
                   for i, succ in enumerate(successors)}
        # best first, as :meth:`Search.analyse` ranks: more plies, higher equity, earlier
        for k in np.lexsort((np.arange(len(kids)), -eq[:len(kids)], -plies[:len(kids)])):
            i = offered.get(kids[k, :L.KEY_LEN].tobytes())
            if i is not None:
                return i
        raise RuntimeError(f"none of the {len(successors)} successors offered for "
                           f"{position!r} with {dice} is a legal play")

    def __repr__(self) -> str:
        return f"SearchPlayer({self.settings.ply}-ply)"
