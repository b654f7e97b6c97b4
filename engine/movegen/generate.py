"""Move generation: every distinct legal full-turn successor, for all six games.

The typed API around the numba core of :mod:`engine.movegen._core`: it checks the position
and dice, runs the kernel and turns its arrays back into :class:`Position` values.
Successors are seen from the next side to move (turns advanced); a gul bara pending
segment (``dice=None``) leaves the same side to move with ``pending`` emptied.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Iterable

import numpy as np

from engine._jit import announce_compile
from engine.errors import TooManyPlaysError
from engine.movegen import _core as core
from engine.movegen._core import PLAY_BEAM, generate, generate_turn, new_scratch
from engine.movegen.keys import key_order
from engine.rules._layout import STATE_LEN
from engine.rules.dice import check_dice
from engine.rules.position import Position
from engine.rules.states import position_state
from engine.rules.variants import Rules, get_rules

__all__ = ["successors", "successor_arrays", "generate", "CascadeLayers"]


def successor_arrays(position: Position, dice, rules: Rules | None = None, *,
                     play: bool = False) -> np.ndarray:
    """The successors as a ``(count, STATE_LEN)`` int16 array (unsorted). ``play``: the
    set players choose from in self-play and duels, which samples the plays of a gul
    bara cascade (:func:`engine.movegen._core.generate_turn` with its beam); else every
    legal play. Raises :class:`TooManyPlaysError` for a cascade too large to list
    (:data:`MAX_LAYER_BOARDS`, :data:`MAX_PLAYS`)."""
    state = position_state(position, rules)        # a legal position of ``rules``' game
    rules = rules or get_rules(position.variant)
    d = check_dice(dice, position.pending)
    d1, d2 = d if d is not None else (0, 0)
    table = rules.table()
    out = np.empty((64, STATE_LEN), np.int16)
    walk = core.walk_for(table)
    direct = isinstance(walk, core.DirectWalk)
    # backgammon and portes compile the direct walk alone (engine.movegen._core.turn)
    announce_compile("the move generator", [core._walk_direct if direct else generate_turn],
                     "5 seconds" if direct else "30 seconds")
    if not play and not direct and cascade_threads() > 1:
        route, seq, total, nondouble, cascade, head_limit = core.cascade_plan(
            state, d1, d2, table)
        if route:
            with _work_arrays(cascade_threads()) as work:
                n, out = _cascade_on_threads(state, d1, table, seq, total, cascade,
                                             head_limit, out, work)
            if n < 0:                 # every longest play breaks the six-block rule
                n, out = core._layered(state, d1, d2, table, seq, total, nondouble,
                                       cascade, head_limit, out, 0)
            if n > 0:
                return out[:n]
            # n == 0: a set-up six-block that every play keeps; the kernel below
            # plays the turn without the rule (docs/rules.md)
    n, out = core.turn(walk, state, d1, d2, table, new_scratch(), out,
                       PLAY_BEAM if play else 0)
    return out[:n]


SPLIT_LAYER = 20_000
"""Layers of at least this many boards are expanded on several threads."""

MAX_LAYER_BOARDS = 20_000_000
"""The most boards a layer of the threaded cascade walk may hold (some 50 bytes each in
its work arrays): a turn that needs more is refused (:class:`TooManyPlaysError`) rather
than left to exhaust memory. The largest cascade of the tests' data, 2,287,556 plays,
peaks at 3,046,166 boards in a layer. The limit is checked once a step is made, and the
next step's children are several times its boards, so it keeps well below what a
machine of a few GB can hold."""
MAX_PLAYS = 16_000_000
"""The most plays the threaded cascade walk lists (272 bytes a state row: 4.4 GB). A
gul bara set-up's 1-1 cascade has 10,930,740 (``moves``' count and digest in 34 s and 4.1
GB on two threads, the digest the one-thread walk's, which has no such limit)."""

_pool: ThreadPoolExecutor | None = None
_pool_size = 0


CGROUP_QUOTA_FILES = ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                      "/sys/fs/cgroup/cpu/cpu.cfs_period_us")
"""Where Linux states a CPU quota: cgroup v2's ``cpu.max`` (``"<quota> <period>"`` or
``"max <period>"``), then cgroup v1's two files (a quota of -1: none)."""


def _cgroup_quota() -> int | None:
    """The CPU quota of this process's control group in cores (rounded up, at least 1),
    or None without one. A container given 2 CPUs on a host of 64 sees 64 in its
    affinity mask; its threads beyond 2 would only wait for each other."""
    v2, v1_quota, v1_period = CGROUP_QUOTA_FILES
    try:
        with open(v2) as f:
            fields = f.read().split()
        if len(fields) == 2 and fields[0] != "max":
            quota, period = int(fields[0]), int(fields[1])
        else:
            return None
    except (OSError, ValueError):
        try:
            with open(v1_quota) as f, open(v1_period) as g:
                quota, period = int(f.read()), int(g.read())
        except (OSError, ValueError):
            return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, -(-quota // period))


_quotas: dict[tuple[str, ...], int | None] = {}


def usable_cores() -> int:
    """The cores this process may use: those of its affinity mask, no more than its
    control group's CPU quota (a container's limit). The quota's files are read once a
    process: :func:`successor_arrays` of the nardy games asks on every call, and
    reading them each time made a call on a starting position five times slower."""
    if hasattr(os, "sched_getaffinity"):
        cores = max(1, len(os.sched_getaffinity(0)))
    else:
        cores = os.cpu_count() or 1
    if CGROUP_QUOTA_FILES not in _quotas:
        _quotas[CGROUP_QUOTA_FILES] = _cgroup_quota()
    quota = _quotas[CGROUP_QUOTA_FILES]
    return cores if quota is None else min(cores, quota)


def cascade_threads() -> int:
    """Threads for a large cascade (its walk, the order and digest of its keys): the
    cores this process may use, at most four (``NARDY_THREADS`` overrides)."""
    n = os.environ.get("NARDY_THREADS")
    if n is not None and n.strip().isdigit():
        return max(1, int(n))
    return min(4, usable_cores())


def _executor(threads: int) -> ThreadPoolExecutor:
    """The threads of the cascade walk: one pool, grown when more threads are asked for."""
    global _pool, _pool_size
    if _pool is None or _pool_size < threads:
        _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="cascade")
        _pool_size = threads
    return _pool


_work: dict = {}
"""The threaded walk's work arrays, by number of threads, kept between calls: growing
them again for every large cascade cost a tenth of a second or more in page faults
(they reach about 180 MB on the largest cascades met)."""
_work_lock = threading.Lock()


@contextmanager
def _work_arrays(threads: int):
    """The work arrays of :func:`_cascade_on_threads`, one of each per thread: its
    children, its sort space and two sets of merged parts (the layer read, the one
    made). The kept ones (:data:`_work`) serve one call at a time; a call that finds
    them in use gets its own."""
    mine = _work_lock.acquire(blocking=False)
    try:
        if not mine or threads not in _work:
            work = ([np.empty(1024, np.int64) for _ in range(threads)],
                    [np.empty(1024, np.int64) for _ in range(threads)],
                    [[np.empty(1024, np.int64) for _ in range(threads)] for _ in range(2)])
            if not mine:
                yield work
                return
            _work.clear()
            _work[threads] = work
        try:
            yield _work[threads]
        except BaseException:
            if mine:              # a refused cascade's arrays may have grown to gigabytes
                _work.clear()
            raise
    finally:
        if mine:
            _work_lock.release()


def _cascade_on_threads(state, d1, table, seq, total, cascade, head_limit, out, work):
    """The exact cascade walk of :mod:`engine.movegen._core`, its large layers on threads:
    the same successors, in the same order, as the one-thread walk.

    A large layer is held as parts, sorted and each board range above the one before.
    Each thread expands one part (:func:`core.cascade_layer`, which runs without the
    GIL) into a sorted, squeezed array; then each thread merges, from every such array,
    the boards of one range (cut at quantiles of a sample of them), making the next
    layer's parts. The deepest layer's parts are checked and written out on the threads
    too. (A numba ``prange`` would do the same inside the kernel, but a cached kernel that
    reaches a parallel one can crash when loaded from numba's cache, and search and
    self-play call the generator from cached kernels.)"""
    threads = cascade_threads()
    pool = _executor(threads)
    cur, step, free = core.cascade_start(state, table, head_limit)
    parts = [(cur, 0, 1)]                   # (words, lo, hi): the layer, in board order
    # work arrays kept from layer to layer (:func:`_work_arrays`), and the ends of the
    # game met, one per thread
    kids, tmps, merged = work
    overs = [(np.empty(16, np.int64), 0) for _ in range(threads)]
    side = 0
    layer = 0

    def expand(j, part):
        words, lo, hi = part
        over, o = overs[j]
        kids[j], n, over, o, tmps[j] = core.cascade_layer(words, lo, hi, step, kids[j],
                                                          over, o, tmps[j])
        overs[j] = (over, o)
        return kids[j], n

    for k in range(total):
        core.cascade_step(step, seq, total, k, free)
        if sum(hi - lo for _, lo, hi in parts) < SPLIT_LAYER:
            made = [expand(0, _joined(parts))]
        else:
            if len(parts) == 1:             # cut a single part by index
                words, lo, hi = parts[0]
                cuts = np.linspace(lo, hi, threads + 1).astype(np.int64)
                parts = [(words, int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
            made = list(pool.map(expand, range(len(parts)), parts))
        made = [(w, n) for w, n in made if n]
        if not made:
            break
        boards = sum(n for _, n in made)
        if boards > MAX_LAYER_BOARDS:
            raise TooManyPlaysError(
                f"step {k + 1} of {total} of the cascade reaches {boards:,} boards, more "
                f"than the {MAX_LAYER_BOARDS:,} the move generator's walk may hold")
        side = 1 - side
        parts = _redistribute(made, merged[side], threads)
        layer = k + 1
    over = np.concatenate([o[:n] for o, n in overs])
    nover = core.cascade_squeeze(over, over.shape[0])
    counts = list(pool.map(lambda p: core.cascade_keep(p[0], p[1], p[2], state, table),
                            parts))
    nkeep, used = core.cascade_choice(sum(counts), nover, layer, total)
    if nkeep < 0:
        return -1, out
    if nkeep + nover > MAX_PLAYS:
        raise TooManyPlaysError(f"{nkeep + nover:,} plays, more than the {MAX_PLAYS:,} "
                                f"the move generator lists")
    segment = d1 == 0
    out = core.cascade_out(nkeep + nover)
    if nkeep:
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        list(pool.map(lambda j: core.cascade_rows(
            parts[j][0][parts[j][1]:], counts[j], out, int(starts[j]), state, segment,
            cascade, seq, used, total), range(len(parts))))
    core.cascade_rows(over, nover, out, nkeep, state, segment, False, seq, used, total)
    return nkeep + nover, out


def _joined(parts):
    """One ``(words, lo, hi)`` holding all of ``parts`` in order."""
    if len(parts) == 1:
        return parts[0]
    words = np.concatenate([w[lo:hi] for w, lo, hi in parts])
    return words, 0, words.shape[0]


def _redistribute(arrays, into, threads):
    """The union of the sorted, squeezed ``arrays`` ((words, count) pairs) as parts in
    board order, written into the arrays ``into`` (grown as needed): each thread merges
    one board range (cut at the quantiles of a sample of all the arrays) out of every
    array."""
    if len(arrays) == 1 and arrays[0][1] < SPLIT_LAYER:
        words, n = arrays[0]
        into[0], m = core.cascade_merge(words, n, words[:0], 0, into[0])
        return [(into[0], 0, m)]
    stride = max(1, sum(n for _, n in arrays) // 4096)
    sample = np.sort(np.concatenate([w[:n:stride] & core._CB_BOARD for w, n in arrays]))
    cuts = [0] + sorted({int(sample[j * len(sample) // threads])
                         for j in range(1, threads)}) + [None]

    def merge(j):
        ranges = []
        for words, count in arrays:
            lo = 0 if cuts[j] == 0 else core.cascade_lower_bound(words, count, cuts[j])
            hi = count if cuts[j + 1] is None else core.cascade_lower_bound(
                words, count, cuts[j + 1])
            if hi > lo:
                ranges.append((words[lo:hi], hi - lo))
        if not ranges:
            return None
        a, na = ranges[0]
        last, nlast = ranges[-1] if len(ranges) > 1 else (a[:0], 0)
        for b, nb in ranges[1:-1]:          # three threads or more
            a, na = core.cascade_merge(a, na, b, nb, np.empty(0, np.int64))
        # merged (or copied) into this part's own array, which the next layer reads
        into[j], m = core.cascade_merge(a, na, last, nlast, into[j])
        return into[j], 0, m

    return [p for p in _executor(threads).map(merge, range(len(cuts) - 1)) if p is not None]


class CascadeLayers:
    """Every board a gul bara cascade or pending segment reaches, step by step: layer
    ``k`` holds the distinct boards of my checkers after the turn's first ``k`` dice
    (``seq[:k]``), as the generator's walk finds them. With the layers, the single
    steps of any play are found backwards from its end in a few lookups, where a search
    forward from the start can wander among millions of partial plays
    (:func:`engine.notation.movetext.format_move` uses it for cascades).

    A board is my 25 counts (off, points 1..24) as the generator's 40-bit word. The
    opponent does not move during the turn, so the points I may land on are fixed."""

    def __init__(self, position: Position, dice, rules: Rules | None = None):
        state = position_state(position, rules)
        rules = rules or get_rules(position.variant)
        d = check_dice(dice, position.pending)
        d1, d2 = d if d is not None else (0, 0)
        table = rules.table()
        route, seq, total, _, _, head_limit = core.cascade_plan(state, d1, d2, table)
        if not route:
            raise ValueError(f"{position.variant} turn with dice {dice} is not a cascade "
                             f"walk")
        cur, step, free = core.cascade_start(state, table, head_limit)
        self.seq = tuple(int(x) for x in seq[:total])
        """The dice of the turn, in the order they are played."""
        self._seq = np.array(self.seq, np.int64)
        self.free = int(free)
        """Bit ``p`` set: my point ``p`` holds no opposing checker."""
        self.head0 = int(step[core._X_HEAD0])
        """My checkers on the head at the start (99: no head rule)."""
        self.head_limit = int(head_limit)
        """How many of them may leave the head this turn."""
        self.layers = [cur[:1] & core._CB_BOARD]
        """``layers[k]``: the sorted board words after ``k`` dice."""
        n = 1
        over, nover = np.empty(16, np.int64), 0
        kids, tmp = np.empty(1024, np.int64), np.empty(1024, np.int64)
        for k in range(total):
            core.cascade_step(step, seq, total, k, free)
            kids, n, over, nover, tmp = core.cascade_layer(cur, 0, n, step, kids, over,
                                                           nover, tmp)
            self.layers.append(kids[:n] & core._CB_BOARD)
            if n == 0:
                break
            cur, kids = kids, cur
        self._flat = np.concatenate(self.layers)        # one array for the numba walk
        self._starts = np.cumsum([0] + [len(a) for a in self.layers]).astype(np.int64)
        self.layers = [self._flat[a:b] for a, b in zip(self._starts[:-1], self._starts[1:])]

    def steps(self, board) -> list[tuple[int, int, int]]:
        """Single steps ``(from, to, die)`` that play the turn from the start to the
        end ``board`` (my counts of off and points 1..24), in order; raises ValueError
        when the turn's dice do not lead there. Found backwards
        (:func:`engine.movegen._core.cascade_back`), from the deepest layer holding
        ``board`` (any depth for a board with every checker off: the game ended on
        the way)."""
        me = np.array([int(n) for n in board], np.int64)
        if me.shape != (25,) or me.min() < 0:
            raise ValueError(f"board {list(board)}: expected 25 counts (off, points 1..24)")
        x = int(core._cb_encode(me))
        depths: Iterable[int]
        if me[0] == me.sum():
            depths = range(1, len(self.layers) + 1)
        else:                         # deepest first: a full play's end is in the last
            depths = (k for k in range(len(self.layers) - 1, -1, -1) if self._has(k, x))
        seq = self._seq
        for k in depths:
            steps = np.zeros((k, 2), np.int64)
            if core.cascade_back(self._flat, self._starts, seq, self.free, self.head0,
                                 self.head_limit, me.copy(), k, steps):
                return [(a, b, d) for (a, b), d in zip(steps.tolist(), self.seq)]
        raise ValueError("the board is not reached by the turn's dice")

    def holds(self, k: int, board) -> bool:
        """Whether the board ``board`` (my counts of off and points 1..24) is reached
        after the turn's first ``k`` dice."""
        if not 0 <= k < len(self.layers):
            return False
        return self._has(k, int(core._cb_encode(np.array(board, np.int64))))

    def _has(self, k: int, x: int) -> bool:
        layer = self.layers[k]
        i = int(np.searchsorted(layer, x))
        return i < len(layer) and int(layer[i]) == x


def successors(position: Position, dice, rules: Rules | None = None) -> list[Position]:
    """Every distinct legal position after the turn, sorted by canonical key."""
    arrays = successor_arrays(position, dice, rules)
    return [Position.from_array(arrays[i], position.variant)
            for i in key_order(arrays, cascade_threads())]
