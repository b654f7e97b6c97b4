"""Positions checked where they enter the kernels: a kernel trusts its input, and an
impossible position gives garbage, reads out of bounds or never ends its walk.

:func:`state_error` is the kernel twin of :meth:`engine.rules.position.Position.check`
on a state array (:mod:`engine.rules._layout`; the game loop checks every position of
a checked game with it). :func:`position_state` is a :class:`Position`'s array, checked
so (the public entry points that take a position call it: :class:`Position` itself
checks nothing it is built with); :func:`check_states` runs the check over many rows
from outside a kernel (a file, a caller) and raises
:class:`~engine.errors.PositionError` naming the first row at fault.
"""

from __future__ import annotations

import numpy as np

from engine._jit import njit
from engine.errors import PositionError, quote
from engine.rules import _layout as L
from engine.rules.position import CHECKERS, Position
from engine.rules.variants import (
    CASCADE_NONE,
    PIN,
    T_BAR,
    T_CASCADE,
    T_MEET,
    T_OPP,
    Rules,
    get_rules,
    rules_for,
)

STATE_ERRORS = {
    1: "a side's checkers (board + bar + off) do not add up to 15",
    2: "a negative checker count",
    3: "a checker on the bar in a game without hitting",
    4: "a pin flag that is not 0/1, or outside plakoto, or on an empty / uncovered point",
    5: "checkers of both sides on one point without exactly one pinned single",
    6: "pending dice outside gul bara, or out of 1..6",
    7: "scratch fields or unused pending slots not zero",
    8: "a negative turn counter",
    11: "both sides have borne off all 15",
}
"""What each code of :func:`state_error` means."""


@njit(cache=True)
def state_error(s, table):
    """0 when state ``s`` is a legal position for the rules table, else a code of
    :data:`STATE_ERRORS` (the kernel twin of :meth:`Position.check`, plus the array's
    own invariants)."""
    meet = table[T_MEET]
    for side in (L.ME, L.THEM):
        total = 0
        for i in range(26):
            if s[side + i] < 0:
                return 2
            total += s[side + i]
        if total != CHECKERS:
            return 1
        if s[side + L.BAR] != 0 and table[T_BAR] == 0:
            return 3
    if s[L.ME + L.OFF] == CHECKERS and s[L.THEM + L.OFF] == CHECKERS:
        return 11
    for pin in (L.PIN_ME, L.PIN_THEM):
        if s[pin] != 0 or s[pin + 25] != 0:
            return 4
    for p in range(1, 25):
        q = table[T_OPP + p]
        mine = s[L.ME + p]
        theirs = s[L.THEM + q]
        pm = s[L.PIN_ME + p]
        pt = s[L.PIN_THEM + q]
        if pm < 0 or pm > 1 or pt < 0 or pt > 1:
            return 4
        if (pm or pt) and meet != PIN:
            return 4
        if mine and theirs:
            if meet != PIN or pm == pt:
                return 5
            if (pm and mine != 1) or (pt and theirs != 1):
                return 5
        elif pm or pt:
            return 4
    npend = s[L.NPEND]
    if npend < 0 or npend > L.MAXPEND or (npend and table[T_CASCADE] == CASCADE_NONE):
        return 6
    for k in range(L.MAXPEND):
        d = s[L.PEND + k]
        if k < npend:
            if d < 1 or d > 6:
                return 6
        elif d != 0:
            return 7
    for i in range(L.KEY_LEN, L.STATE_LEN):
        if s[i] != 0:
            return 7
    if s[L.TURNS_ME] < 0 or s[L.TURNS_THEM] < 0:
        return 8
    return 0


@njit(cache=True)
def _first_illegal(states, table):
    """``(row, code)`` of the first row of ``states`` that :func:`state_error` refuses,
    ``(-1, 0)`` when every row is a legal position."""
    for i in range(states.shape[0]):
        code = state_error(states[i], table)
        if code:
            return i, code
    return -1, 0


def check_states(states, rules: Rules | str, what: str = "states") -> np.ndarray:
    """``states`` as contiguous ``int16`` rows of :data:`engine.rules._layout.STATE_LEN`
    (the kernels' state arrays; one such row is taken as one position), each a legal
    position of ``rules`` (a game's name, or its :class:`Rules` with options). Anything
    else raises :class:`~engine.errors.PositionError` naming ``what``, the first row
    at fault and why (:data:`STATE_ERRORS`)."""
    rules = rules if isinstance(rules, Rules) else get_rules(rules)
    a = np.asarray(states)
    if a.ndim == 1 and a.shape[0] == L.STATE_LEN:
        a = a.reshape(1, L.STATE_LEN)
    if a.ndim != 2 or a.shape[1] != L.STATE_LEN or a.dtype.kind not in "iu":
        raise PositionError(f"{what}: {a.dtype} array of shape {a.shape}; expected integer "
                            f"rows of {L.STATE_LEN} (int16 state arrays)")
    if a.dtype != np.int16:
        if a.size and (a.min() < -(1 << 15) or a.max() >= 1 << 15):
            raise PositionError(f"{what}: values outside int16; not state arrays")
        a = a.astype(np.int16)
    a = np.ascontiguousarray(a)
    if not a.flags.writeable:      # (Ray's object store): numba types a read-only array
        a = a.copy()               # apart, and would compile every kernel again for it
    row, code = _first_illegal(a, rules.table())
    if row >= 0:
        raise PositionError(f"{what}: row {row} is not a legal {rules.variant} position: "
                            f"{STATE_ERRORS[code]}")
    return a


def position_state(position: Position, rules: Rules | None = None) -> np.ndarray:
    """The state array of ``position`` (:meth:`Position.to_array`), checked by
    :func:`state_error` against ``rules`` (its game's by default; anything but a
    :class:`Rules` is refused): the public entry points that hand a position to a
    kernel call this, since :class:`Position` itself does not check what it is built
    with, and a kernel given 40 checkers on a point read past its tables or never
    ended its walk. A position of another game than ``rules`` is refused too. Cheap
    (a few microseconds); :meth:`Position.check` words the error when there is one."""
    if not isinstance(position, Position):
        raise PositionError(f"position {quote(position)}: expected a Position")
    rules = rules_for(position.variant, rules)
    if rules.variant != position.variant:
        raise PositionError(f"a {position.variant} position given with the rules of "
                            f"{rules.variant}")
    try:
        state = position.to_array()
    except (TypeError, ValueError, OverflowError, IndexError):
        position.check(rules)             # says which field is wrong
        raise PositionError(f"position {position!r}: its fields do not make a state "
                            f"array") from None
    if not _same_numbers(state, position):
        position.check(rules)             # says which field is wrong
        raise PositionError(f"position {position!r}: a field holds what is not an "
                            f"integer")
    code = state_error(state, rules.table())
    if code:
        position.check(rules)
        raise PositionError(f"position {position!r}: {STATE_ERRORS[code]}")
    return state


def _same_numbers(state: np.ndarray, position: Position) -> bool:
    """Whether ``state`` holds ``position``'s numbers as they are: numpy's assignment
    takes 5.5 as 5 and ``"5"`` as 5 without a word, and these compare unequal."""
    v = state.tolist()
    n = len(position.pending)
    return (v[L.ME + 1:L.ME + 25] == list(position.me)
            and v[L.THEM + 1:L.THEM + 25] == list(position.them)
            and [v[L.ME + L.BAR], v[L.THEM + L.BAR]] == list(position.bar)
            and [v[L.ME + L.OFF], v[L.THEM + L.OFF]] == list(position.off)
            and [v[L.TURNS_ME], v[L.TURNS_THEM]] == list(position.turns)
            and v[L.PEND:L.PEND + n] == list(position.pending))
