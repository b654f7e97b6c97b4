"""n-ply search: the best play of a roll, and the value of a position before its roll.

Plies are counted as GNU Backgammon counts them:

* **0-ply**: a position is rated statically (:mod:`engine.eval.evaluator`: the network, the
  exact result of a finished game, the bear-off tables of a home race, or the race
  network of any other race where the game has one);
* **n-ply** value of a position before its side to move rolls: the average over the 21
  rolls (doubles 1/36, others 2/36) of the mover's best play for that roll, each play
  valued at (n - 1)-ply;
* a **play** (a successor) valued at n-ply is its successor position's n-ply value, seen
  from the mover (successors are flipped: the mover's outputs are
  :func:`engine.rules.scoring.flip_probs` of the successor's, his equity the negative).

Move filters, in the manner of GNU Backgammon, keep the work bounded. At the root
(:attr:`SearchSettings.filters`) every play is rated at 0-ply, then level by level the
survivors are filtered (:class:`MoveFilter`: at most ``keep`` plays within ``within``
equity of the best) and rated one ply deeper; a level without a filter is skipped. Inside
the search (:attr:`SearchSettings.reply`) each roll's plays are rated at 0-ply and the
best ``keep`` within ``within`` are searched at the remaining depth (at the last level,
where that depth is 0, the one play the ranking picks); the default keeps one, which is
GNU Backgammon's own choice (the reply picked at 0-ply, then valued deeper). Where the
evaluator has a pruning network (the released models of backgammon and portes), that ranking is pruned by
default (:attr:`SearchSettings.prune`): the pruning network ranks each roll's plays and
the network rates only its best few (:attr:`SearchSettings.prune_keep`); the root's plays
are always rated by the network.

Gul bara's pending dice are a decision of their own: a position holding pending dice is
valued, at n >= 1 ply, as the best of its pending-segment plays valued at n-ply (the
segment is no roll, so it costs no ply); at 0-ply the network rates it as it stands.

The search runs breadth first, a level at a time (:class:`_Tree`): one numba kernel,
:func:`expand`, plays the 21 rolls (or the pending segment) of every state of a level,
rates each roll's plays in one batch (each hidden layer computed from the node's by the
few inputs that changed) and keeps the filter's best; small kernels take the per-roll
bests and the roll averages back up. Of the search's kernels only :func:`expand` holds
the move generator (a 0-ply decision calls the same walk from Python, the same compiled
version), so a search of any depth costs one compile of it, and a large level is
split over threads (the kernel runs without the GIL) with the serial result, bit for
bit. Results are deterministic for a given model: ties go to the first play the move
generator lists.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Sequence

import numba
import numpy as np

from engine._jit import FAST, announce_compile, copy_items, copy_rows, njit
from engine.errors import NardyError, quote
from engine.eval.bearoff import race_bounds
from engine.eval.evaluator import (
    BY_TABLES,
    S_STATIC,
    Evaluator,
    counted_race,
    exact_probs,
    may_be_exact,
    races,
    static_probs,
)
from engine.eval.network import (
    delta_work,
    hidden_deltas,
    hidden_ref,
    kids_ref,
    outputs_batch,
    sane,
)
from engine.eval.pubeval import _is_race
from engine.movegen._core import PLAY_BEAM, turn
from engine.movegen.generate import cascade_threads, successor_arrays
from engine.rules import _layout as L
from engine.rules.dice import check_dice
from engine.rules.position import Position
from engine.rules.scoring import (
    N_OUTPUTS,
    OUTPUTS,
    check_game_on,
    equities,
    equity,
    flip_probs,
    result_k,
    score_table,
)
from engine.rules.states import check_states, position_state

MAX_PLY = 3
"""Deepest search offered (:func:`check_ply`)."""
MAX_THREADS = 256
"""Most threads a search may be given: each holds work spaces of its own, and 100,000
of them ran out of memory."""
MAX_KEEP = 10**9
"""The most plays a :class:`MoveFilter` may keep: above every turn's count (a gul bara
cascade's is bounded by :data:`engine.movegen.generate.MAX_PLAYS`), and within the
kernels' 64-bit filter arrays."""


class SearchError(NardyError):
    """Search settings out of range (a ply outside 0..3, a filter keeping nothing)."""

    code = "invalid_ply"


def check_ply(ply: object) -> int:
    """``ply`` as the depth of a search, an integer 0..:data:`MAX_PLY`, or
    :class:`SearchError` (code ``invalid_ply``) quoting it: the one check of a ply, for
    the search's settings, the protocol and the command lines."""
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or not 0 <= ply <= MAX_PLY:
        raise SearchError(f"ply = {quote(ply)}: expected an integer 0..{MAX_PLY}")
    return int(ply)


# --------------------------------------------------------------------- settings
@dataclass(frozen=True)
class MoveFilter:
    """Keep at most ``keep`` plays, each within ``within`` equity of the best."""

    keep: int
    """Most plays kept (the best always is); at least 1."""
    within: float
    """Largest equity gap to the best play that a kept play may have."""

    def __post_init__(self):
        if (isinstance(self.keep, bool) or not isinstance(self.keep, (int, np.integer))
                or not 1 <= self.keep <= MAX_KEEP):
            raise SearchError(f"MoveFilter keep = {quote(self.keep)}: expected an int "
                              f"1..{MAX_KEEP:,}")
        if (isinstance(self.within, bool)
                or not isinstance(self.within, (int, float, np.integer, np.floating))
                or not 0 <= self.within < math.inf):
            raise SearchError(f"MoveFilter within = {quote(self.within)}: expected a number >= 0")
        object.__setattr__(self, "keep", int(self.keep))
        object.__setattr__(self, "within", float(self.within))


DEFAULT_FILTERS = {
    0: (),
    1: (MoveFilter(8, 0.16),),
    2: (MoveFilter(8, 0.16), MoveFilter(4, 0.12)),
    3: (MoveFilter(8, 0.16), None, MoveFilter(2, 0.04)),
}
"""Root filters by search depth. After 0-ply keep up to 8 plays within 0.16, GNU
Backgammon's "normal" move filter; for 3-ply its 2-ply survivors are cut to 2 within
0.04, as that filter does. For 2-ply the normal filter skips 1-ply; here the 8 are rated
at 1-ply and the best 4 within 0.12 searched at 2-ply: a quarter less time a decision
for about 0.06 thousandths of a point of choice (benchmarks/README.md, "The root
filters"). ``SearchSettings(filters=(MoveFilter(8, 0.16), None))`` is GNU Backgammon's."""


def parse_filters(text: str, ply: int) -> tuple:
    """The root filters of a ``ply``-deep search written out: one level for each of 0 ..
    ``ply - 1``, comma separated, each ``K/W`` (:class:`MoveFilter`: keep at most ``K``
    plays within ``W`` equity of the best, then rate them one ply deeper) or ``-`` (the
    level skipped). ``8/0.16,-`` is GNU Backgammon's normal filter at 2-ply, ``8/0.16,4/0.12``
    the default (:data:`DEFAULT_FILTERS`); a 0-ply search has none (``""``). Raises
    :class:`SearchError` naming the level that is wrong."""
    ply = check_ply(ply)
    if not isinstance(text, str):
        raise SearchError(f"filters {quote(text)}: expected text such as 8/0.16,4/0.12")
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    levels: list[MoveFilter | None] = []
    for part in parts:
        if part == "-":
            levels.append(None)
            continue
        keep, slash, within = part.partition("/")
        try:
            if not slash:
                raise ValueError
            levels.append(MoveFilter(int(keep), float(within)))
        except (ValueError, SearchError) as exc:
            why = f" ({exc})" if isinstance(exc, SearchError) else ""
            raise SearchError(f"filters {quote(text)}: level {len(levels)} {quote(part)}: "
                              f"expected K/W (K plays kept, an integer 1..{MAX_KEEP:,}; W "
                              f"the most equity behind the best, a number >= 0) or - (the "
                              f"level skipped){why}") from None
    if len(levels) != ply:
        raise SearchError(f"filters {quote(text)}: {len(levels)} level(s) for a {ply}-ply "
                          f"search: expected {ply}, one for each level 0 .. {ply - 1}"
                          if ply else f"filters {quote(text)}: a 0-ply search has no "
                          f"filters (it rates every play)")
    return tuple(levels)


def format_filters(filters: Sequence[MoveFilter | None]) -> str:
    """Root filters written as :func:`parse_filters` reads them (``8/0.16,4/0.12``;
    ``-`` a level skipped; ``""`` none, a 0-ply search's), so that a report can say which
    filters its search used and the text gives the same search again."""
    return ",".join("-" if f is None else f"{f.keep}/{f.within!r}" for f in filters)


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
    (one: pick at 0-ply, then value at the remaining depth). At the search's last level
    (the replies valued at 0-ply) it keeps one whatever it says: the play its ranking
    picks (the pruning network's, with :attr:`prune`), valued by the full evaluation;
    so at 1-ply it has no effect."""
    bearoff: bool = True
    """Value home races with the bear-off tables (where the evaluator has them)."""
    prune: bool = True
    """Inside the search, rank each roll's plays with the evaluator's pruning network
    (where it has one: backgammon's released model) and rate only the play picked, or
    its best :attr:`prune_keep`, with the full network, as GNU Backgammon's pruning nets
    do; the root's plays are always rated by the network. On by default: with the
    released 219-256 network and its 198-32 pruning network (four plays kept), a 2-ply
    contact decision takes about two thirds of the time of rating every play, and
    chooses about as well (benchmarks/README.md, "Pruning inside the search")."""
    prune_keep: int = 4
    """With :attr:`prune`: how many of each roll's plays, the pruning network's best,
    the network then rates; the best of them by that rating is the pick (1: the
    pruning network's own pick, unrated by the network until it is valued). A few let
    a cheap pruning network stand in for the network on most plays and still give
    the network's own pick nearly always: the released network's best 0-ply play is
    among its pruning network's first four in 97% of contact decisions."""
    prune_within: float = math.inf
    """With :attr:`prune`: of those :attr:`prune_keep` plays, the network rates only
    the ones within this much equity of the pruning network's best (by its ranking),
    as GNU Backgammon's move filters keep a few plays within a margin: where the
    pruning network sees one play far ahead, the network need not rate the others.
    Infinite: all of them."""

    def __post_init__(self):
        check_ply(self.ply)
        if isinstance(self.filters, list):       # hashable, as packed()'s cache needs
            object.__setattr__(self, "filters", tuple(self.filters))
        if self.filters is not None:
            if not isinstance(self.filters, tuple):
                raise SearchError(f"filters = {quote(self.filters)}: expected a sequence of "
                                  f"{self.ply} MoveFilter(s) or None, one per level")
            if len(self.filters) != self.ply:
                raise SearchError(f"filters = {quote(self.filters)}: expected {self.ply} "
                                  f"level(s) for ply {self.ply}")
            for f in self.filters:
                if f is not None and not isinstance(f, MoveFilter):
                    raise SearchError(f"filter {quote(f)}: expected a MoveFilter or None")
        if not isinstance(self.reply, MoveFilter):
            raise SearchError(f"reply = {quote(self.reply)}: expected a MoveFilter")
        for name in ("bearoff", "prune"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise SearchError(f"{name} = {quote(getattr(self, name))}: expected true or "
                                  f"false")
            object.__setattr__(self, name, bool(getattr(self, name)))
        pk = self.prune_keep
        if isinstance(pk, bool) or not isinstance(pk, (int, np.integer)) \
                or not 1 <= pk <= MAX_KEEP:
            raise SearchError(f"prune_keep = {quote(self.prune_keep)}: expected an int "
                              f"1..{MAX_KEEP:,}")
        object.__setattr__(self, "prune_keep", int(self.prune_keep))
        pw = self.prune_within
        if isinstance(pw, bool) or not isinstance(pw, (int, float, np.integer, np.floating)) \
                or not pw >= 0:
            raise SearchError(f"prune_within = {quote(self.prune_within)}: expected a number "
                              f">= 0 (inf: no margin)")
        object.__setattr__(self, "prune_within", float(self.prune_within))

    @property
    def root_filters(self) -> tuple:
        """The root filters in force (the defaults unless given)."""
        return self.filters if self.filters is not None else DEFAULT_FILTERS[self.ply]

    def packed(self):
        """``(root_keep, root_within, reply_keep, reply_within)`` arrays for the
        kernels (keep -1: no filter / level skipped). Built once for settings of these
        values (6 us a time, twice in a 0-ply decision of about 80): the arrays are
        shared, to be read only."""
        return _packed(self)


@functools.lru_cache(maxsize=64)
def _packed(settings: SearchSettings) -> tuple:
    fkeep = np.full(MAX_PLY + 1, -1, np.int64)
    fwithin = np.zeros(MAX_PLY + 1)
    for j, f in enumerate(settings.root_filters):
        if f is not None:
            fkeep[j], fwithin[j] = f.keep, f.within
    rkeep = np.full(MAX_PLY + 1, settings.reply.keep, np.int64)
    rwithin = np.full(MAX_PLY + 1, float(settings.reply.within))
    return fkeep, fwithin, rkeep, rwithin


_KEPT_SPACE = 4096
"""The most plays whose rating work space :meth:`_Tree.root` keeps between calls (about
2 MB with 128 hidden units); a larger roll's is the call's own."""

# --------------------------------------------------------------------- kernels
_ROLLS = np.array([(a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(1, a + 1)],
                  dtype=np.int64)


@njit(cache=True, inline="always")
def _add_flipped(acc, v, wgt):
    acc[0] += wgt * (1.0 - v[0])
    acc[1] += wgt * v[3]
    acc[2] += wgt * v[4]
    acc[3] += wgt * v[1]
    acc[4] += wgt * v[2]


@njit(**FAST)
def _node_ref(parent, segment, net, ref, h_ref, work):
    """The parent's checker slots seen from its kids' side to move into ``ref`` (as
    they are after a pending segment, flipped after a roll), their hidden
    pre-activations into ``h_ref`` and their features into ``work``: the base every
    kid's hidden layer is computed from (:func:`engine.eval.network.hidden_delta`)."""
    w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = net
    kids_ref(parent, segment, ref)
    hidden_ref(ref, w1t, b1, uidx, uval, cidx, cval, fidx, h_ref, work)


@njit(cache=True)
def rate_space(n, nh):
    """Work space of :func:`_rate_children` for ``n`` kids and ``nh`` hidden units:
    ``(hidden layers, rated, tabled, outputs)``. A kernel keeps one per network and
    grows it (:func:`_room`): allocated per roll it cost a few percent of a play's
    rating."""
    return (np.empty((n, nh), np.float32), np.empty(n, np.int64), np.empty(n, np.int64),
            np.empty((n, N_OUTPUTS), np.float32))


@njit(cache=True)
def _room(n, space):
    """``space`` (:func:`rate_space`), or a larger one when it holds fewer than ``n``."""
    if space[1].shape[0] >= n:
        return space
    return rate_space(max(n, 2 * space[1].shape[0]), space[0].shape[1])


# no reference counts: with the walk's, a fifth of a rollout's time (engine/_jit.py)
@njit(_nrt=False, **FAST)
def _rate_children(ref, h_ref, work, segment, kids, n, net, ctx, probs, eq, space):
    """0-ply outputs of ``kids[:n]`` (for each kid's side to move) into ``probs``, and
    the mover's equity of each into ``eq``. ``segment``: the kids are the results of a
    pending segment (same side to move), else of a roll (flipped). Each hidden layer is
    ``h_ref`` (:func:`_node_ref`, with ``work``) plus the few inputs that changed; the
    kids the network rates go through its outputs in one batch.

    One scale for one choice: a finished game keeps its exact result, and home races
    get the bear-off tables' value only when the network rates none of the other
    plays; when the plays mix both, the network rates the home races too. Its ratings
    of bear-ins are off the tables' by up to 0.1 (benchmarks/README.md, "Rollouts"),
    so mixing the two scales made the player keep a checker out of home to stay on the
    network's. ``space``: :func:`rate_space` of ``net``'s hidden size for ``n`` kids or
    more."""
    w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = net
    hs, rated, tabled, o32 = space
    m = 0
    nt = 0
    scores = ctx.scores
    tables = ctx.bearoff
    for i in range(n):
        how = 0
        if may_be_exact(kids[i], scores, tables):
            how = exact_probs(kids[i], ctx, probs[i])
        if how == 0:
            rated[m] = i
            m += 1
        elif how == BY_TABLES:
            tabled[nt] = i
            nt += 1
    if m > 0:
        for t in range(nt):
            rated[m] = tabled[t]
            m += 1
    hidden_deltas(ref, h_ref, kids, rated, m, w1t, uidx, uval, fidx, hs, work)
    outputs_batch(hs, m, w2, b2, o32)
    for j in range(m):
        sane(o32[j], scores, kids[rated[j]])
        if tables and counted_race(kids[rated[j]], scores):
            race_bounds(kids[rated[j]], ctx.off, o32[j])
        for k in range(N_OUTPUTS):
            probs[rated[j], k] = o32[j, k]
    for i in range(n):
        e = equity(probs[i])
        eq[i] = e if segment else -e
    ctx.stats[S_STATIC] += n


@njit(cache=True)
def _argmax(eq, n):
    best = 0
    for i in range(1, n):
        if eq[i] > eq[best]:
            best = i
    return best


@njit(cache=True)
def _sort_best_first(eq, idx, m):
    """Sort ``idx[:m]`` by ``eq[idx]``, highest first, ties in their order: a bottom-up
    merge sort (numba's ``argsort(kind="mergesort")`` is about 1.4 s of a cold start)."""
    tmp = np.empty(m, np.int64)
    width = 1
    in_tmp = False                 # where the sorted runs of this pass are
    while width < m:
        src = tmp if in_tmp else idx
        dst = idx if in_tmp else tmp
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            a, b, k = lo, mid, lo
            while a < mid and b < hi:
                if eq[src[b]] > eq[src[a]]:
                    dst[k] = src[b]
                    b += 1
                else:
                    dst[k] = src[a]
                    a += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for i in range(m):
            idx[i] = tmp[i]


@njit(cache=True)
def _best_first(eq, idx, n, m):
    """Put the ``m`` best of ``idx[:n]`` by ``eq[idx]`` first, highest first, ties in
    their order: the first ``m`` that :func:`_sort_best_first` would give (the rest
    in no promised order). ``m`` passes over the plays, no work space: a roll's best
    few for the pruning network's second rating, where the full sort and its
    allocation took 0.9-2.1 us of a roll's 11-16 us (contact positions of a rollout,
    one thread, timed ad hoc 2026-12-06; benchmarks/README.md, "What a roll costs
    inside the search")."""
    for j in range(m):
        b = j
        for q in range(j + 1, n):
            if eq[idx[q]] > eq[idx[b]]:
                b = q
        if b != j:
            t = idx[b]
            for q in range(b, j, -1):
                idx[q] = idx[q - 1]
            idx[j] = t


@njit(cache=True)
def _filter(eq, idx, m, keep, within):
    """Reorder ``idx[:m]`` best first (stable on ties) and return how many of them pass
    the filter: at most ``keep``, each within ``within`` of the best."""
    _sort_best_first(eq, idx, m)
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


# ----- the one kernel that plays rolls
@njit(nogil=True, **FAST)
def expand(states, rolls, paired, exact_walk, keep, within, net, value, average, rerate,
           rerate_within, ctx):
    """The plays of every roll of ``rolls`` (rows ``d1, d2, weight``; one row ``0, 0``:
    the pending segment) from every state of ``states`` (game on; no pending dice
    unless the row is the segment), rated at 0-ply by ``net`` and filtered per (state,
    roll) pair: at most ``keep`` plays within ``within`` of the pair's best, best first
    (``keep < 0``: every play, in the generator's order).

    ``exact_walk``: every legal play, else the player's sample of a very long gul bara
    walk (:func:`engine.movegen._core.generate_turn`). Returns ``(k, kids, probs, eq,
    pair)``: ``kids[:k]`` the plays kept, ``probs`` their 0-ply outputs for their own
    side to move, ``eq`` the mover's equity of each, ``pair`` the pair each belongs to
    (``state * len(rolls) + roll``, ascending). ``paired``: ``rolls`` has one row per
    state, state ``i`` plays only row ``i`` (its pair is ``i``): a rollout's trials,
    each on its own dice.

    ``average``: each state's 1-ply value instead, in ``probs[:len(states)]`` (``k`` the
    number of states, no kids): over the rolls, the best play by ``net``, rated by
    ``value`` when ``ctx`` flags a pruning network (else ``net``'s own rating stands),
    seen from the player who rolled and weighted by the roll's chance. This is the last
    level of every search, where most of the work is, so it is done in one pass.

    ``rerate`` > 1 (``net`` a pruning network, ``keep`` >= 1): of each roll's plays,
    ranked by ``net``, the best ``rerate`` are rated again by ``value`` (their hidden
    layers from the node's, as ``net``'s), and only they can be kept or picked, by that
    rating (:attr:`SearchSettings.prune_keep`); of them, only those within
    ``rerate_within`` of the best by ``net``'s ranking (:attr:`SearchSettings.prune_within`;
    negative: all of them, the kernels' fast math having no infinity).

    A state that is a race (:func:`engine.eval.evaluator.races`: no contact, a race
    network on) has its plays ranked and rated by ``ctx.race`` instead of ``net``
    (every play of a race is a race); a play that breaks contact is ranked among its
    roll's others by ``net``, and valued one ply up by the race network.

    Runs without the GIL: :class:`Search` gives each thread its own ``ctx`` statistics
    and move-generator work space."""
    ns = states.shape[0]
    nr = 1 if paired else rolls.shape[0]
    pruning = ctx.pruning
    nh = net.b1.shape[0]
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(nh, np.float32)
    h_race = np.empty(ctx.race.b1.shape[0], np.float32)
    space_net = rate_space(64, nh)
    space_race = rate_space(64, ctx.race.b1.shape[0])
    work = delta_work()
    gen = np.empty((64, L.STATE_LEN), np.int16)
    probs = np.empty((64, N_OUTPUTS))
    eq = np.empty(64)
    idx = np.empty(64, np.int64)
    v = np.empty((1, N_OUTPUTS))
    nh_value = value.b1.shape[0]
    h_value = np.empty(nh_value, np.float32)
    work_value = delta_work()
    space_value = rate_space(8, nh_value)
    sel = np.empty((8, L.STATE_LEN), np.int16)
    sprobs = np.empty((8, N_OUTPUTS))
    seq = np.empty(8)
    if average:
        keep = 1
        cap = max(1, ns)
    else:
        cap = max(16, ns * nr * (keep if keep > 0 else 16))
    kids = np.empty((0 if average else cap, L.STATE_LEN), np.int16)
    kprobs = np.zeros((cap, N_OUTPUTS))
    keq = np.empty(cap)
    kpair = np.empty(cap, np.int64)
    beam = 0 if exact_walk else PLAY_BEAM
    k = 0
    for i in range(ns):
        s = states[i]
        first = i if paired else 0
        segment = rolls[first, 0] == 0
        raced = races(s, ctx)            # a race: every play is one, the race network's
        here = ctx.race if raced else net
        h_here = h_race if raced else h_ref
        _node_ref(s, segment, here, ref, h_here, work)
        pruned = rerate > 1 and keep >= 1 and not raced
        if pruned:
            _node_ref(s, segment, value, ref, h_value, work_value)
        for r in range(first, first + nr):
            n, gen = turn(ctx.walk, s, rolls[r, 0], rolls[r, 1], ctx.table, ctx.scratch, gen,
                          beam)
            probs, eq, idx = _grow(n, probs, eq, idx)
            if raced:
                space_race = _room(n, space_race)
                space = space_race
            else:
                space_net = _room(n, space_net)
                space = space_net
            every = pruned and n <= rerate and rerate_within < 0
            if every:
                # every play would be rated again: ``value`` rates them alone (the same
                # ratings, each from the node's hidden layer, and so the same pick)
                space_value = _room(n, space_value)
                _rate_children(ref, h_value, work_value, segment, gen, n, value, ctx, probs,
                               eq, space_value)
            else:
                _rate_children(ref, h_here, work, segment, gen, n, here, ctx, probs, eq,
                               space)
            if pruned and not every:
                # the pruning network's best few, rated by the network: the only choices
                for j in range(n):
                    idx[j] = j
                m = min(rerate, n)
                _best_first(eq, idx, n, m)
                if rerate_within >= 0:
                    while m > 1 and eq[idx[m - 1]] < eq[idx[0]] - rerate_within:
                        m -= 1
                if m > sel.shape[0]:
                    sel = np.empty((m, L.STATE_LEN), np.int16)
                    sprobs = np.empty((m, N_OUTPUTS))
                    seq = np.empty(m)
                space_value = _room(m, space_value)
                for j in range(m):
                    copy_rows(sel, j, gen, idx[j], 1)
                _rate_children(ref, h_value, work_value, segment, sel, m, value, ctx, sprobs,
                               seq, space_value)
                for j in range(m, n):
                    eq[idx[j]] = -np.inf
                for j in range(m):
                    copy_rows(probs, idx[j], sprobs, j, 1)
                    eq[idx[j]] = seq[j]
            if average:
                b = _argmax(eq, n)
                if not raced and ((pruning and not pruned) or races(gen[b], ctx)):
                    # the pruning network's pick, or a play that makes a race: valued
                    # statically (the tables, the race network or ``value``)
                    static_probs(gen[b:b + 1], 1, value, ctx, v)
                    _add_flipped(kprobs[i], v[0], rolls[r, 2] / 36.0)
                elif (may_be_exact(gen[b], ctx.scores, ctx.bearoff)
                      and exact_probs(gen[b], ctx, v[0]) == BY_TABLES):
                    # a home race ranked among others: valued by the tables
                    _add_flipped(kprobs[i], v[0], rolls[r, 2] / 36.0)
                else:
                    _add_flipped(kprobs[i], probs[b], rolls[r, 2] / 36.0)
                continue
            if keep < 0:
                m = n
                for j in range(n):
                    idx[j] = j
            elif keep == 1:
                m = 1 if n > 0 else 0
                idx[0] = _argmax(eq, n)
            else:
                for j in range(n):
                    idx[j] = j
                m = _filter(eq, idx, n, keep, within)
            if k + m > cap:
                cap = max(2 * cap, k + m)
                kids2 = np.empty((cap, L.STATE_LEN), np.int16)
                kprobs2 = np.empty((cap, N_OUTPUTS))
                keq2 = np.empty(cap)
                kpair2 = np.empty(cap, np.int64)
                copy_rows(kids2, 0, kids, 0, k)
                copy_rows(kprobs2, 0, kprobs, 0, k)
                copy_items(keq2, keq, k)
                copy_items(kpair2, kpair, k)
                kids, kprobs, keq, kpair = kids2, kprobs2, keq2, kpair2
            for j in range(m):
                copy_rows(kids, k, gen, idx[j], 1)
                copy_rows(kprobs, k, probs, idx[j], 1)
                keq[k] = eq[idx[j]]
                kpair[k] = i if paired else i * nr + r
                k += 1
    if average:
        k = ns
    return k, kids, kprobs, keq, kpair


@njit(nogil=True, cache=True)
def exact_batch(states, ctx, probs):
    """Which states need no network (a finished game, a home race the bear-off tables
    value), their outputs into ``probs``."""
    n = states.shape[0]
    out = np.zeros(n, np.bool_)
    for i in range(n):
        out[i] = exact_probs(states[i], ctx, probs[i]) != 0
    return out


@njit(cache=True)
def best_of_pairs(eq, pair, npairs):
    """For each pair ``0 .. npairs - 1``, the index of its highest ``eq`` (the first of
    equals; ``pair`` ascending), -1 for a pair with none."""
    best = np.full(npairs, -1, np.int64)
    for i in range(eq.shape[0]):
        q = pair[i]
        if best[q] < 0 or eq[i] > eq[best[q]]:
            best[q] = i
    return best


@njit(cache=True)
def roll_average(vals, best, nstates, rolls):
    """Each state's value before its roll: over its pairs (``state * len(rolls) + roll``)
    the outputs ``vals[best[pair]]`` of the play chosen, seen from the player who
    rolled, weighted by the roll's chance (``rolls[:, 2] / 36``), summed in roll order."""
    nr = rolls.shape[0]
    out = np.zeros((nstates, N_OUTPUTS))
    for i in range(nstates):
        for r in range(nr):
            _add_flipped(out[i], vals[best[i * nr + r]], rolls[r, 2] / 36.0)
    return out


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
    """The mover's five outputs (:data:`engine.rules.scoring.OUTPUTS`) after the play."""
    ply: int
    """Depth the play was rated at (plays cut by a filter keep a shallower rating)."""
    cubeful_equity: float | None = None
    """The mover's cubeful equity after the play, on the normalised scale of his cube
    (money play: in units of the cube; a match: converted from match winning chances,
    as the cube analysis reports equities), where the plays were ranked by it (set by
    :func:`engine.cli._decide.rank_cubefully`; the search itself knows no cube), else
    None."""
    mwc: float | None = None
    """The mover's match winning chance after the play, beside :attr:`cubeful_equity`
    in a match; None in money play."""

    def to_json(self) -> dict:
        out = {"position": self.position.to_json(), "move": self.move,
               "equity": round(self.equity, 6), "ply": self.ply,
               "probabilities": probs_json(self.probabilities)}
        if self.cubeful_equity is not None:
            out["cubeful_equity"] = round(self.cubeful_equity, 6)
        if self.mwc is not None:
            out["mwc"] = round(self.mwc, 6)
        return out


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
    """The five outputs, :data:`engine.rules.scoring.OUTPUTS`."""
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


def expand_types(net, ctx) -> tuple:
    """The numba types of the arguments :meth:`_Tree.expand` gives :func:`expand` in a
    search on ``net`` with context ``ctx`` (pruned or not: the pruning network has the
    network's type), which the compile notice asks numba's cache for: a list that
    misses an argument announced a compile, and started the helper, on every warm run."""
    return tuple(numba.typeof(a) for a in (
        np.zeros((1, L.STATE_LEN), np.int16), _ROLLS, False, False, 1, 0.0, net, net,
        False, 1, -1.0, ctx))


def _announce(variant: str, encoder: str, net, ctx, kind: str) -> None:
    """Say on standard error that the search kernels are about to be compiled, when
    they are not in numba's cache (benchmarks/compile.py measures it), and then call
    :data:`on_cold_start` (the process that compiles half of them beside this one,
    :mod:`engine.search.precompile`). ``kind``: ``"deeper"``, the search calls
    :func:`expand`; ``"root"``, only the kernels of :meth:`_Tree.root`; ``"static"``,
    only the static evaluation (a 0-ply value of positions: no second process)."""
    # ``expand`` holds nearly all of a deeper search; the root's kernels are the
    # parent's hidden layer, the walk and the rating, ``_node_ref`` the first. The
    # small kernels a search calls beside them compile in a second or two each
    # (asking for them too announced a compile on every warm 0-ply run that none
    # followed). Asked for the types of this search's calls (states, rolls, flags,
    # filter, networks): a kernel cached for one game's networks compiles again for
    # another's
    if kind == "deeper":
        kernel = (expand, expand_types(net, ctx))
    elif kind == "root":
        row = numba.typeof(np.zeros(L.STATE_LEN, np.int16))
        kernel = (_node_ref, (row, numba.types.boolean, numba.typeof(net), row,
                              numba.typeof(np.zeros(1, np.float32)), None))
    else:
        kernel = (static_probs, (None, None, numba.typeof(net), numba.typeof(ctx), None))
    how_long = {"deeper": "20 seconds", "root": "10 seconds"}.get(kind, "5 seconds")
    if (announce_compile("the search kernels", [kernel], how_long)
            and on_cold_start is not None and kind != "static"):
        on_cold_start(variant, encoder)


on_cold_start: Callable[[str, str], object] | None = None
"""Called with the variant and the network's encoder name when a search is about to
compile its kernels: :func:`engine.search.precompile.allow` sets it to start the
helper process in the command-line programs."""


_SEGMENT = np.array([[0, 0, 1]], np.int64)
"""The pending segment as the one "roll" of :func:`expand`."""
PARALLEL_PAIRS = 128
"""(state, roll) pairs from which :func:`expand` runs on several threads."""
SLICES = 4
"""Slices per thread of a large :func:`expand` (the pool takes them as threads free up)."""
CHUNK = 4096
"""Most states a level of the search expands at once (bounds its memory)."""

_pool = None
_pool_size = 0
_pool_lock = threading.Lock()


def _executor(threads: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < threads:
            _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="search")
            _pool_size = threads
        return _pool


class _Tree:
    """One search's kernels and numbers: the networks, the context, the work spaces of
    its threads (each with its own statistics and move-generator scratch).

    The search goes level by level, breadth first: every state of a level is expanded
    by :func:`expand` (21 rolls each, filtered), the kept plays form the next level, and
    the values come back up as per-pair bests (:func:`best_of_pairs`) and roll averages
    (:func:`roll_average`). Only :func:`expand` holds the move generator (:meth:`root`
    calls the same walk from Python), so a search of any depth compiles it once."""

    def __init__(self, net, ctx, ctxs: list, spaces: dict, prune_keep: int = 1,
                 prune_within: float = math.inf):
        self.net = net
        self.ctx = ctx
        self.spaces = spaces
        """:meth:`root`'s work spaces, by network (race or not), kept by the
        :class:`Search` with the context's."""
        self.rank = ctx.rank
        self.pruning = ctx.pruning
        self.rkeep = ctx.reply_keep
        self.rwithin = ctx.reply_within
        self.ctxs = ctxs
        """``ctx`` and, for each further thread, a copy with statistics and move-generator
        scratch of its own (:meth:`Search._tree` keeps them between calls)."""
        self.threads = len(ctxs)
        self.prune_keep = prune_keep if ctx.pruning else 1
        """How many of each roll's plays ranked by the pruning network the network
        rates again (:attr:`SearchSettings.prune_keep`; 1 without pruning)."""
        self.prune_within = float(prune_within) if prune_within < math.inf else -1.0
        """:attr:`SearchSettings.prune_within` as :func:`expand` takes it (-1: none)."""

    def close(self) -> None:
        """Add the threads' statistics to the context's."""
        for c in self.ctxs[1:]:
            self.ctx.stats[:] += c.stats
            c.stats[:] = 0

    def _on_threads(self, kernel, n: int, pieces: int, call):
        """Run ``call(kernel, lo, hi, ctx)`` over ``pieces`` slices of ``range(n)`` on the
        threads, each slice with a context no other running slice holds; the results in
        slice order. More slices than threads balance the load (states differ in work)."""
        cuts = np.linspace(0, n, pieces + 1).astype(np.int64)
        free: queue.SimpleQueue = queue.SimpleQueue()
        for c in self.ctxs:
            free.put(c)

        def run(lo, hi):
            c = free.get()
            try:
                return call(kernel, lo, hi, c)
            finally:
                free.put(c)

        pool = _executor(self.threads)
        futs = [pool.submit(run, int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
        return cuts, [f.result() for f in futs]

    def expand(self, states, rolls, exact_walk, keep, within, net, average=False,
               paired=False):
        """:func:`expand`, split by states over the threads when it is large: ``(kids,
        probs, eq, pair)``, or with ``average`` the states' 1-ply outputs."""
        ns = states.shape[0]
        nr = 1 if paired else rolls.shape[0]
        rerate = self.prune_keep if net is self.rank and self.rank is not self.net else 1
        if self.threads == 1 or ns < 2 or ns * nr < PARALLEL_PAIRS:
            k, kids, probs, eq, pair = expand(states, rolls, paired, exact_walk, keep, within,
                                              net, self.net, average, rerate,
                                              self.prune_within, self.ctx)
            return probs[:k] if average else (kids[:k], probs[:k], eq[:k], pair[:k])
        pieces = min(ns, SLICES * self.threads)
        order, src = None, states
        if average and not paired:
            # every slice takes every pieces-th state: neighbours (the replies to one
            # candidate) cost alike, and slices of neighbours did not (the threads'
            # busy share of a 2-ply search's last level: 0.89 so, 0.92 dealt)
            order = np.argsort(np.arange(ns) % pieces, kind="stable")
            src = states[order]
        cuts, parts = self._on_threads(
            expand, ns, pieces,
            lambda f, lo, hi, c: f(src[lo:hi], rolls[lo:hi] if paired else rolls, paired,
                                   exact_walk, keep, within, net, self.net, average, rerate,
                                   self.prune_within,
                                   c))
        if average:
            values = np.concatenate([p[2][:p[0]] for p in parts])
            if order is not None:
                values[order] = values.copy()
            return values
        kids = np.concatenate([p[1][:p[0]] for p in parts])
        probs = np.concatenate([p[2][:p[0]] for p in parts])
        eq = np.concatenate([p[3][:p[0]] for p in parts])
        pair = np.concatenate([p[4][:p[0]] + cuts[j] * nr for j, p in enumerate(parts)])
        return kids, probs, eq, pair

    def static(self, states):
        """0-ply outputs of ``states`` by the network, each for its side to move."""
        probs = np.zeros((states.shape[0], N_OUTPUTS))
        static_probs(states, states.shape[0], self.net, self.ctx, probs)
        return probs

    def values(self, states, depth: int):
        """The ``depth``-ply outputs of ``states``, each for its side to move."""
        n = states.shape[0]
        if depth <= 0 or n == 0:
            return self.static(states)
        if n > CHUNK:
            return np.concatenate([self.values(states[i:i + CHUNK], depth)
                                   for i in range(0, n, CHUNK)])
        out = np.zeros((n, N_OUTPUTS))
        exact = exact_batch(states, self.ctx, out)
        self.ctx.stats[S_STATIC] += int(exact.sum())
        pending = ~exact & (states[:, L.NPEND] != 0)
        rolled = ~exact & ~pending
        if rolled.any():
            out[rolled] = self.roll_average(states[rolled], depth)
        if pending.any():
            # a pending segment costs no ply: its best play, valued at this depth
            sub = states[pending]
            kids, _, _, pair = self.expand(sub, _SEGMENT, False, int(self.rkeep[depth]),
                                           float(self.rwithin[depth]), self.rank)
            vals = self.values(kids, depth)
            best = best_of_pairs(equities(vals), pair, sub.shape[0])
            out[pending] = vals[best]
        return out

    def roll_average(self, states, depth: int):
        """The ``depth``-ply (>= 1) outputs of ``states`` (game on, no pending dice):
        over the 21 rolls, the mover's best play valued at ``depth - 1``. Clipped to
        0..1: the weighted sum of 21 certainties can come out at 1 + 2e-16 (and its
        complement below zero), which a reader of probabilities refuses."""
        if depth == 1:
            return np.clip(self.expand(states, _ROLLS, False, 1, 0.0, self.rank,
                                       average=True), 0.0, 1.0)
        kids, _, _, pair = self.expand(states, _ROLLS, False, int(self.rkeep[depth - 1]),
                                       float(self.rwithin[depth - 1]), self.rank)
        vals = self.values(kids, depth - 1)
        best = best_of_pairs(-equities(vals), pair, states.shape[0] * _ROLLS.shape[0])
        if len(best) != states.shape[0] * _ROLLS.shape[0] or (best < 0).any():
            raise RuntimeError("a roll without a play: the move generator broke its "
                               "promise of at least one successor")
        return np.clip(roll_average(vals, best, states.shape[0], _ROLLS), 0.0, 1.0)

    def root(self, state, d1: int, d2: int, given=None):
        """Every legal play of the roll ``d1, d2`` (``0, 0``: the pending segment) from
        ``state``, rated at 0-ply: ``(kids, probs, eq)`` as :func:`expand` gives them
        for one state and one roll, in the generator's order (``given``: those plays,
        already listed by :func:`engine.movegen.generate.successor_arrays`, which
        refuses a gul bara cascade too large to list).

        The same kernels :func:`expand` calls, called from here one after the other,
        with the same types (the same digits; ``tests/test_precompile.py``): a 0-ply
        decision then compiles the move generator's walk, the parent's hidden layer
        and the rating of the plays, each a kernel of its own (the rating can come
        from the helper process's cache, :mod:`engine.search.precompile`), and not
        ``expand``, which links and optimises all of them again (4-6 s of a cold 0-ply
        analysis; benchmarks/README.md, "Cold start"). A deeper decision compiles
        ``expand`` anyway and rates its root there: one call, and none of these
        kernels needs its Python wrapper."""
        ctx = self.ctx
        segment = d1 == 0
        raced = ctx.racing and _is_race(state)   # races(): typing ctx costs 5 us a call
        here = ctx.race if raced else self.net
        ws = self.spaces.get(raced)
        if ws is None:       # kept between calls: allocated per call, 5 us of about 80
            nh = here.b1.shape[0]
            ws = self.spaces[raced] = [np.empty(L.STATE_LEN, np.int16),
                                       np.empty(nh, np.float32), delta_work(),
                                       rate_space(64, nh)]
        ref, h_ref, work, space = ws
        _node_ref(state, segment, here, ref, h_ref, work)
        if given is None:
            n, kids = turn(ctx.walk, state, d1, d2, ctx.table, ctx.scratch,
                           np.empty((64, L.STATE_LEN), np.int16), 0)
        else:
            n, kids = len(given), np.ascontiguousarray(given, np.int16)
        if space[1].shape[0] < n:
            space = rate_space(max(n, 2 * space[1].shape[0]), h_ref.shape[0])
            if n <= _KEPT_SPACE:         # not a cascade's hundreds of MB for good
                ws[3] = space
        probs = np.empty((max(n, 1), N_OUTPUTS))
        eq = np.empty(max(n, 1))
        _rate_children(ref, h_ref, work, segment, kids, n, here, ctx, probs, eq, space)
        return kids[:n], probs[:n], eq[:n]

    def decide(self, state, d1: int, d2: int, ply: int, fkeep, fwithin, given=None,
               rank=None):
        """Every play of the roll from ``state`` rated at up to ``ply``:
        ``(kids, probs, eq, plies)`` for the mover, in the generator's order
        (``given``: the plays, listed already; :meth:`root`). ``rank(kids, probs)``,
        when given, values the plays a root filter sorts and cuts, in place of their
        cubeless equity (:meth:`Search.analyse`'s ``rank``)."""
        segment = d1 == 0
        if ply == 0:
            kids, probs, eq = self.root(state, d1, d2, given)
        else:
            # ``expand`` compiles anyway: one Python call, no wrappers for its callees
            roll = _SEGMENT if segment else np.array([[d1, d2, 1]], np.int64)
            kids, probs, eq, _ = self.expand(state[None, :], roll, True, -1, 0.0, self.net)
        if not segment:
            probs = flip_probs(probs)
        n = len(kids)
        plies = np.zeros(n, np.int64)
        alive = np.arange(n)
        for depth in range(ply + 1):
            if depth > 0:
                if depth < ply and fkeep[depth] < 0:
                    continue                     # a level skipped, its filter too
                v = self.values(kids[alive], depth)
                probs[alive] = v if segment else flip_probs(v)
                eq[alive] = equities(probs[alive])
                plies[alive] = depth
            if depth < ply and fkeep[depth] >= 0 and len(alive) > 0:
                key = eq
                if rank is not None:            # the caller's values, e.g. match equity
                    key = eq.copy()
                    key[alive] = rank(kids[alive], probs[alive])
                    # ties in them (every play at a pass's -1) go to the better cubeless
                    # equity, as Search.analyse orders its plays (the filter is stable)
                    alive = alive[np.argsort(-eq[alive], kind="stable")]
                m = _filter(key, alive, len(alive), int(fkeep[depth]),
                            float(fwithin[depth]))
                alive = alive[:m].copy()
        return kids, probs, eq, plies


class Search:
    """n-ply analysis of one game with one :class:`~engine.eval.evaluator.Evaluator`."""

    def __init__(self, evaluator: Evaluator, settings: SearchSettings = SearchSettings(),
                 threads: int | None = None):
        if not isinstance(evaluator, Evaluator):
            raise SearchError(f"evaluator {quote(evaluator)}: expected an Evaluator "
                              f"(Search.load(variant) makes one from a model file)")
        if not isinstance(settings, SearchSettings):
            raise SearchError(f"settings {quote(settings)}: expected a SearchSettings")
        self.evaluator = evaluator
        """Static evaluation (network, exact results, bear-off tables)."""
        self.settings = settings
        """Default settings; each call may override the ply."""
        if threads is not None and (isinstance(threads, bool) or not isinstance(
                threads, (int, np.integer)) or not 1 <= threads <= MAX_THREADS):
            raise SearchError(f"threads = {quote(threads)}: expected an integer 1 .. "
                              f"{MAX_THREADS} (each holds work spaces of its own)")
        self.threads = cascade_threads() if threads is None else int(threads)
        """Threads a large level of the search is split over (results do not depend
        on it); default: the cores this process may use, at most four
        (``NARDY_THREADS`` overrides)."""
        self._ctxs: dict = {}             # the threads' contexts, by evaluator context
        self._spaces: dict = {}           # the root's work spaces, likewise
        self._told: set = set()           # (context, kind) compiles looked for

    @classmethod
    def load(cls, variant: str = "backgammon", path=None, threads: int | None = None,
             **settings) -> "Search":
        """The search of ``variant`` with its released model ``models/<variant>.npz``
        (or ``path``); raises :class:`engine.eval.evaluator.NoModelError` when there is none."""
        return cls(Evaluator.load(variant, path), SearchSettings(**settings), threads)

    @property
    def variant(self) -> str:
        return self.evaluator.variant

    def _settings(self, ply, settings) -> SearchSettings:
        if settings is not None and not isinstance(settings, SearchSettings):
            raise SearchError(f"settings {quote(settings)}: expected a SearchSettings or "
                              f"None")
        s = settings or self.settings
        if ply is not None and check_ply(ply) != s.ply:
            filters = s.filters if (s.filters is not None and len(s.filters) == ply) else None
            s = dataclasses.replace(s, ply=ply, filters=filters)
        return s

    def _check(self, position: Position) -> np.ndarray:
        """The state array of ``position``, which must be one of this search's game and
        a legal one (:func:`engine.rules.states.position_state`): the kernels trust it."""
        if not isinstance(position, Position):
            raise SearchError(f"position {quote(position)}: expected a Position")
        if position.variant != self.variant:
            raise SearchError(f"position of {position.variant} given to the {self.variant} "
                              f"search")
        return position_state(position, self.evaluator.rules)

    def _tree(self, settings: SearchSettings, root: bool = False,
              static: bool = False) -> _Tree:
        """The kernels' arguments for a search with ``settings``; ``root``: it rates a
        roll's plays (:meth:`_Tree.decide`); ``static``: it values positions (at 0-ply
        only by the static evaluation); else it plays rollouts. Announces a compile the
        first time a context needs one."""
        _, _, rkeep, rwithin = settings.packed()
        net, ctx = self.evaluator.kernel_args(rkeep, rwithin, settings.bearoff,
                                              settings.prune)
        ctxs = self._ctxs.get(id(ctx))
        if ctxs is None or ctxs[0] is not ctx:
            ctxs = [ctx] + [ctx.for_thread() for _ in range(self.threads - 1)]
            self._ctxs[id(ctx)] = ctxs
            self._spaces[id(ctx)] = {}
            self._told = {t for t in self._told if t[0] != id(ctx)}
        if settings.ply > 0 or not (root or static):
            kind = "deeper"
        else:
            kind = "root" if root else "static"
        told = (id(ctx), kind)
        if told not in self._told:
            # once a context and kind of search: typing its arrays costs about 0.4 ms
            self._told.add(told)
            _announce(self.variant, self.evaluator.network.encoder.name, net, ctx, kind)
        return _Tree(net, ctx, ctxs, self._spaces[id(ctx)], settings.prune_keep,
                     settings.prune_within)

    def rate(self, state: np.ndarray, dice, settings: SearchSettings):
        """Kernel-level :meth:`analyse`: ``(kids, probs, eq, plies, evaluated)`` for a
        state array, unsorted (benchmarks use it to skip building objects). The state
        and the dice are checked as :meth:`analyse` checks a position's."""
        settings = self._settings(None, settings)
        rows = check_states(np.asarray(state)[None, ...] if np.ndim(state) == 1 else state,
                            self.evaluator.rules, "rate: state")
        if rows.shape[0] != 1:
            raise SearchError(f"rate: state of shape {np.shape(state)}: expected one state "
                              f"row of {L.STATE_LEN}")
        row = rows[0]
        rules = self.evaluator.rules
        if result_k(row, score_table(rules))[0] >= 0:     # the kernel twin of check_game_on
            check_game_on(Position.from_array(row, self.variant), rules)
        d = check_dice(dice, tuple(row[L.PEND:L.PEND + row[L.NPEND]].tolist()))
        position = Position.from_array(row, self.variant) if rules.cascade else None
        return self._rate(row, d, settings, position)

    def _dice(self, position: Position, dice):
        """``dice`` checked for ``position``, a game still on."""
        check_game_on(position, self.evaluator.rules)
        return check_dice(dice, position.pending)

    def _rate(self, state: np.ndarray, d, settings: SearchSettings,
              position: Position | None, rank=None):
        """:meth:`rate` of a checked state and dice. The plays of a cascade game's
        double or pending segment are listed by
        :func:`engine.movegen.generate.successor_arrays`, which refuses a cascade too
        large to list (:class:`~engine.errors.TooManyPlaysError`); the search's own walk
        has no such bound."""
        fkeep, fwithin, _, _ = settings.packed()
        given = None
        if self.evaluator.rules.cascade and (d is None or d[0] == d[1]):
            assert position is not None                 # the callers make it for these
            given = successor_arrays(position, d, self.evaluator.rules)
        tree = self._tree(settings, root=True)
        d1, d2 = d if d is not None else (0, 0)
        kids, probs, eq, plies = tree.decide(np.ascontiguousarray(state, np.int16),
                                             int(d1), int(d2), settings.ply, fkeep, fwithin,
                                             given, rank)
        tree.close()
        return kids, probs, eq, plies, int(tree.ctx.stats[S_STATIC])

    def analyse(self, position: Position, dice, ply: int | None = None,
                settings: SearchSettings | None = None, top: int | None = None,
                rank: Callable[[Position, tuple], float] | None = None,
                also: Position | None = None,
                rank_rows: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                ) -> Analysis:
        """Every legal play of ``position`` for ``dice`` (a pair, :class:`Dice`, or None
        for a pending segment), rated and ranked best first. ``top`` limits how many
        candidates get move text and objects (all are still rated). ``rank``: a
        function of the position after a play and the mover's chances after it, whose
        value ranks the plays in place of their cubeless equity, in the root's move
        filters and among the plays rated at the full depth (ties by that equity), e.g.
        an equity at a match score, which the search does not know
        (:func:`engine.cli._decide.rank_cubefully`). ``rank_rows``: the same for many
        plays at once, a function of their state rows (n x
        :data:`engine.rules._layout.STATE_LEN`) and the mover's chances (n x 5) giving
        their n values (not both). ``also``: a play (the position
        after it) listed after the first ``top`` when it is not among them, as GNU
        Backgammon's analysis lists the play made; a position that is no play of the
        roll is not listed."""
        from engine.notation.movetext import format_move
        state = self._check(position)
        settings = self._settings(ply, settings)
        d = self._dice(position, dice)
        if rank is not None and not callable(rank):
            raise SearchError(f"rank = {quote(rank)}: expected a function (position after "
                              f"the play, its probabilities) -> value, or None")
        if rank_rows is not None and not callable(rank_rows):
            raise SearchError(f"rank_rows = {quote(rank_rows)}: expected a function (state "
                              f"rows, probabilities) -> values, or None")
        if rank is not None and rank_rows is not None:
            raise SearchError("rank and rank_rows both given: expected one ranking")

        def one_by_one(rows, chances) -> np.ndarray:    # rank of each play given as arrays
            assert rank is not None
            return np.array([float(rank(Position.from_array(r, position.variant),
                                        tuple(float(x) for x in p)))
                             for r, p in zip(rows, chances)])
        values = (rank_rows if rank_rows is not None
                  else one_by_one if rank is not None else None)
        kids, probs, eq, plies, evaluated = self._rate(state, d, settings, position, values)
        n = len(kids)
        key = eq[:n]
        if values is not None:
            key = eq[:n].copy()
            full = np.flatnonzero(plies[:n] == settings.ply)
            key[full] = np.asarray(values(kids[full], probs[full]), np.float64)
        # more plies first, then the higher value, equity, generation order
        order = np.lexsort((np.arange(n), -eq[:n], -key, -plies[:n]))
        if top is not None:
            if isinstance(top, bool) or not isinstance(top, int) or top < 1:
                raise SearchError(f"top = {quote(top)}: expected an integer 1 or more, or "
                                  f"None for every play")
            rest, order = order[top:], order[:top]
            if also is not None and len(rest):
                row = self._check(also)
                hit = rest[(kids[rest] == row).all(axis=1)]
                order = np.concatenate([order, hit[:1]])
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
        (0-ply: the static evaluation; n-ply: the 21 rolls' best plays at n - 1). The
        starting position of the games whose first player rolls both dice (long nardy,
        gul bara, plakoto, fevga) is valued by its rolls at 0-ply too: the released
        networks have not met it (:meth:`_values`)."""
        state = self._check(position)
        settings = self._settings(ply, settings)
        tree = self._tree(settings, static=True)
        out, evaluated = self._values(tree, state[None, :], settings)
        tree.close()
        p = tuple(float(x) for x in out[0])
        return Evaluation(p, float(equities(out[0])), settings.ply, evaluated)

    def values_of(self, states: np.ndarray, ply: int | None = None,
                  settings: SearchSettings | None = None) -> np.ndarray:
        """:meth:`evaluate` of many positions at once: the ``ply``-ply outputs (n x 5)
        of the ``int16`` state rows ``states``, each for its side to move before it
        rolls, the rows of one level searched together (training's labels). A row
        that is not a legal position raises :class:`~engine.errors.PositionError`
        naming it (:func:`engine.rules.states.check_states`)."""
        settings = self._settings(ply, settings)
        states = check_states(states, self.evaluator.rules, "values_of: states")
        tree = self._tree(settings, static=True)
        out, _ = self._values(tree, states, settings)
        tree.close()
        return out

    @functools.cached_property
    def _opening(self) -> np.ndarray | None:
        """The key of the game's starting position, first player to move before his
        roll, where that is a state of the game (``Rules.opening_rolls_both``); else
        None (backgammon, portes: the opening roll is played as thrown)."""
        if not self.evaluator.rules.opening_rolls_both:
            return None
        start = position_state(Position.start(self.variant), self.evaluator.rules)
        return start[:L.KEY_LEN].copy()

    def _values(self, tree: _Tree, states: np.ndarray, settings: SearchSettings) -> tuple:
        """``(tree.values(states, settings.ply), positions rated statically)``, the
        starting position of a game whose first player rolls both dice valued by its
        21 rolls at 0-ply: the released networks learnt from positions after a play
        (their self-play, and their supervised rounds' candidate sets), and no play
        leads back to both full starting points, so they have not met it (long
        nardy's was rated -0.35 against +0.27 by its rolls)."""
        out = tree.values(states, settings.ply)
        evaluated = int(tree.ctx.stats[S_STATIC])    # before _rate's trees reset it
        if settings.ply == 0 and self._opening is not None:
            first = (states[:, :L.KEY_LEN] == self._opening).all(axis=1)
            if first.any():
                out[first], rated = self._by_rolls(settings)
                evaluated += rated
        return out, evaluated

    def _by_rolls(self, settings: SearchSettings) -> tuple:
        """``(outputs, positions rated)`` of the game's start for its first player
        before his roll: over the 21 rolls, the chances after the best play of each,
        as a 0-ply decision rates and picks it (the decision's own kernels: a cold
        start compiles no more than a 0-ply analysis does, where the 1-ply search's
        kernel took 45 s more)."""
        start = Position.start(self.variant)
        state = self._check(start)
        acc, rated = np.zeros(N_OUTPUTS), 0
        for d1, d2, weight in _ROLLS.tolist():
            _, probs, eq, _, n = self._rate(state, (d1, d2), settings, start)
            acc += weight * probs[int(np.argmax(eq))]
            rated += n
        return np.clip(acc / 36.0, 0.0, 1.0), rated

    def __repr__(self) -> str:
        return f"Search({self.evaluator!r}, {self.settings!r})"


class SearchPlayer:
    """A :class:`engine.play.players.Player` that plays the best play of an n-ply search."""

    def __init__(self, search: Search, ply: int = 0):
        if not isinstance(search, Search):
            raise SearchError(f"search {quote(search)}: expected a Search")
        self.search = search
        """The search (model, tables, filters)."""
        self.settings = search._settings(ply, None)
        """Settings of every decision."""

    def choose(self, position: Position, dice, successors: Sequence[Position]) -> int:
        """The offered successor the search ranks highest. The offer may be a subset of
        the legal plays (a gul bara cascade's sample, :func:`engine.movegen.generate.
        successor_arrays` with ``play=True``): the search still rates every play, and
        the best one among those offered is taken."""
        state = self.search._check(position)           # a position of the search's game
        d = self.search._dice(position, dice)
        kids, probs, eq, plies, _ = self.search._rate(state, d, self.settings, position)
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
