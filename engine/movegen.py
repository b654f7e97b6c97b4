"""Move generation: every distinct legal full-turn successor, for all six games.

The typed API around the numba core of :mod:`engine._movegen`: it checks the position
and dice, runs the kernel and turns its arrays back into :class:`Position` values.
Successors are seen from the next side to move (turns advanced); a gul bara pending
segment (``dice=None``) leaves the same side to move with ``pending`` emptied.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _movegen as core
from ._layout import STATE_LEN
from ._movegen import generate, generate_into, generate_play, new_scratch
from .errors import DiceError
from .position import Position
from .variants import Rules, get_rules

__all__ = ["successors", "successor_arrays", "check_dice", "generate"]


def check_dice(dice, position: Position) -> tuple[int, int] | None:
    """Validate ``dice`` for ``position``: two ints 1..6, or None for a pending segment."""
    if dice is None:
        if not position.pending:
            raise DiceError("dice = null plays a gul bara pending segment, but the "
                            "position has no pending dice; expected [d1, d2]")
        return None
    if (not isinstance(dice, (list, tuple)) or len(dice) != 2
            or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 6
                   for d in dice)):
        raise DiceError(f"dice = {dice!r}: expected two integers 1..6")
    if position.pending:
        raise DiceError(f"dice = {list(dice)}: the position has pending dice "
                        f"{list(position.pending)} to play first; expected null")
    return int(dice[0]), int(dice[1])


def successor_arrays(position: Position, dice, rules: Rules | None = None, *,
                     play: bool = False) -> np.ndarray:
    """The successors as a ``(count, STATE_LEN)`` int16 array (unsorted). ``play``: the
    set players choose from in self-play and duels, which samples the plays of a gul
    bara cascade (:func:`engine._movegen.generate_play`); else every legal play."""
    rules = rules or get_rules(position.variant)
    d = check_dice(dice, position)
    d1, d2 = d if d is not None else (0, 0)
    out = np.empty((64, STATE_LEN), np.int16)
    state, table = position.to_array(), rules.table()
    if not play and _threads() > 1:
        route, seq, total, nondouble, cascade, head_limit = core.cascade_plan(
            state, d1, d2, table)
        if route:
            n, out = _cascade_on_threads(state, d1, table, seq, total, cascade,
                                         head_limit, out)
            if n < 0:                 # every longest play breaks the six-block rule
                n, out = core._layered(state, d1, d2, table, seq, total, nondouble,
                                       cascade, head_limit, out, 0)
            return out[:n]
    kernel = generate_play if play else generate_into
    n, out = kernel(state, d1, d2, table, new_scratch(), out)
    return out[:n]


SPLIT_LAYER = 20_000
"""Layers of at least this many boards are expanded on several threads."""

_pool: ThreadPoolExecutor | None = None


def _threads() -> int:
    """Threads for a large cascade: the cores this process may use, at most four
    (``NARDY_THREADS`` overrides)."""
    n = os.environ.get("NARDY_THREADS")
    if n is not None and n.strip().isdigit():
        return max(1, int(n))
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def _cascade_on_threads(state, d1, table, seq, total, cascade, head_limit, out):
    """The exact cascade walk of :mod:`engine._movegen` with each large layer split in
    parts expanded on threads of their own (:func:`core.cascade_layer` runs without
    the GIL) and their sorted halves merged: the same successors, in the same order,
    as the one-thread walk, at most half the time on the largest cascades. Lives in
    Python rather than as a numba ``prange``: a cached kernel that reaches a parallel
    one can crash when loaded from numba's cache, and search and self-play call the
    generator from cached kernels."""
    global _pool
    parts = _threads()
    if _pool is None or _pool._max_workers < parts:
        _pool = ThreadPoolExecutor(max_workers=parts, thread_name_prefix="cascade")
    cur, step, free = core.cascade_start(state, table, head_limit)
    ncur, layer = 1, 0
    over, nover = np.zeros(16, np.int64), 0
    kids = np.zeros(1024, np.int64)
    for k in range(total):
        core.cascade_step(step, seq, total, k, free)
        if ncur < SPLIT_LAYER:
            kids, nk, over, nover = core.cascade_layer(cur, 0, ncur, step, kids, over, nover)
        else:
            bounds = np.linspace(0, ncur, parts + 1).astype(np.int64)
            jobs = [_pool.submit(core.cascade_layer, cur, int(lo), int(hi), step,
                                 np.empty(2 * (hi - lo) + 1024, np.int64),
                                 np.zeros(16, np.int64), 0)
                    for lo, hi in zip(bounds[:-1], bounds[1:])]
            done = [job.result() for job in jobs]
            kids, nk = done[0][0], done[0][1]
            for words, n, _, _ in done[1:]:
                kids, nk = core.cascade_merge(kids, nk, words, n)
            over = np.concatenate([over[:nover]] + [o[:no] for _, _, o, no in done])
            nover = over.shape[0]
        if nk == 0:
            break
        cur, kids = kids, cur
        ncur, layer = nk, k + 1
    return core.cascade_end(state, d1, table, seq, total, cascade, cur, ncur, layer,
                            over, nover, out)


def successors(position: Position, dice, rules: Rules | None = None) -> list[Position]:
    """Every distinct legal position after the turn, sorted by canonical key."""
    arrays = successor_arrays(position, dice, rules)
    result = [Position.from_array(a, position.variant) for a in arrays]
    result.sort(key=Position.key)
    return result
