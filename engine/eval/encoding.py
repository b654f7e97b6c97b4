"""Network input encodings, as tables the numba kernels read.

An encoding here is *per slot*: each of the 52 checker slots of a state (both sides'
off, points 1..24 and bar, :mod:`engine.rules._layout`) owns up to :data:`MAX_UNITS` input
units, and the value of each unit depends only on that slot's checker count. So an
:class:`Encoder` is two small arrays, fixed for ever, never a function of the weights:

* ``unit_index[slot, u]``: the input index of the slot's ``u``-th unit, or -1;
* ``unit_value[slot, n, u]``: that unit's value when the slot holds ``n`` checkers;

plus inputs that are constant (``const_index``/``const_value``). Because a successor
differs from its flipped parent in a handful of slots, the hidden layer of each
successor is the parent's plus a few weight rows (:mod:`engine.eval.network`), the main trick
that makes self-play fast.

The state is always seen from the side to move, so the encoding is too: the side to
move's slots come first. Tesauro's "side to move" units are therefore constant.

:data:`TESAURO198` is Tesauro's raw encoding (TD-Gammon 0.0): per point and side four
units (``n >= 1``, ``n >= 2``, ``n >= 3``, ``(n - 3) / 2`` for ``n > 3``), the bar
(``n / 2``) and the checkers off (``n / 15``) per side, and two turn units (here always
``1, 0``): 2 * (24 * 4 + 2) + 2 = 198 inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine._jit import njit
from engine.errors import NardyError, quote
from engine.eval.features import (
    EXTENDED_INDEX,
    FAMILY_INDEX,
    N_EXTENDED,
    N_FAMILY,
    N_FEATURES,
    feature_values,
    uses_family,
)
from engine.rules import _layout as L
from engine.rules.variants import SAME, VARIANTS, get_rules, race_geometry

N_SLOTS = 2 * L.SIDE
"""Checker slots a state has: ``ME + 0 .. ME + 25`` and ``THEM + 0 .. THEM + 25``."""
MAX_UNITS = 4
"""Most input units one slot owns."""
MAX_COUNT = 25
"""Slot values the value table covers (0..24); larger values (a long game's turn
counter) read as 24."""


class EncodingError(NardyError):
    """An unknown encoder name, or a state an encoder cannot read."""

    code = "invalid_encoding"


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Encoder:
    """A per-slot input encoding (see the module docstring)."""

    name: str
    """Name stored in model cards, e.g. ``"tesauro198"``."""
    n_inputs: int
    """Length of the input vector."""
    unit_index: np.ndarray
    """``int64[slots, MAX_UNITS]``: input index of each slot's units, -1 if unused. An
    encoder reads the first ``slots`` slots of a state: the 52 checker slots
    (:data:`N_SLOTS`) for backgammon's, up to the pending dice for the family's."""
    unit_value: np.ndarray
    """``float32[slots, MAX_COUNT, MAX_UNITS]``: unit values by slot value."""
    const_index: np.ndarray
    """``int64[k]``: inputs that do not depend on the position."""
    const_value: np.ndarray
    """``float32[k]``: their values."""
    feature_index: np.ndarray = field(default_factory=lambda: _read_only(np.zeros(0, np.int64)))
    """``int64[k]``: input indices of the first ``k`` hand-crafted features of
    :func:`engine.eval.features.features`; ``int32`` (:data:`~engine.eval.features.FAMILY_INDEX`)
    of all :data:`~engine.eval.features.N_FAMILY` of
    :func:`engine.eval.features.family_features`; ``int16``
    (:data:`~engine.eval.features.EXTENDED_INDEX`) of all
    :data:`~engine.eval.features.N_EXTENDED` of
    :func:`engine.eval.features.extended_features`; or empty for an encoder without them.
    Read-only, as all of an encoder's arrays: numba types a read-only array apart from
    a writable one, so one mixed in would compile every kernel that takes a network
    (the whole search with it) once more."""

    def encode(self, state: np.ndarray) -> np.ndarray:
        """The ``float32`` input vector of one ``int16`` state (see :func:`encode`):
        ``state`` must be an ``int16`` array of :data:`engine.rules._layout.STATE_LEN`
        values, none negative and each checker slot at most 15, else
        :class:`EncodingError` (the kernel would read outside its tables)."""
        check_state(state)
        x = np.zeros(self.n_inputs, dtype=np.float32)
        encode(state, self.unit_index, self.unit_value, self.const_index,
               self.const_value, x)
        k = self.feature_index.size
        if k:
            x[self.feature_index] = feature_values(self.feature_index,
                                                   np.asarray(state))[:k]
        return x

    def __repr__(self) -> str:
        return f"get_encoder({self.name!r})"


CHECKERS = 15
"""Most checkers a slot of a state may hold (:data:`engine.rules.position.CHECKERS`)."""


def check_state(state: object) -> None:
    """Raise :class:`EncodingError` naming ``state`` unless it is one ``int16`` state
    of :data:`~engine.rules._layout.STATE_LEN` values, none negative, each checker slot
    (:data:`N_SLOTS`) at most :data:`CHECKERS`: what :meth:`Encoder.encode` and its
    kernel read without bounds checks."""
    if (not isinstance(state, np.ndarray) or state.dtype != np.int16
            or state.shape != (L.STATE_LEN,)):
        got = (f"{state.dtype} array of shape {state.shape}" if isinstance(state, np.ndarray)
               else quote(state))
        raise EncodingError(f"state = {got}: expected an int16 array of shape "
                            f"({L.STATE_LEN},) (Position.to_array())")
    if state.min() < 0 or state[:N_SLOTS].max() > CHECKERS:
        raise EncodingError(f"state = {quote(state.tolist())}: expected values >= 0 and "
                            f"at most {CHECKERS} checkers per slot (slots 0..{N_SLOTS - 1})")


def _tesauro198() -> Encoder:
    idx = np.full((N_SLOTS, MAX_UNITS), -1, dtype=np.int64)
    val = np.zeros((N_SLOTS, MAX_COUNT, MAX_UNITS), dtype=np.float32)
    for side, block in ((0, L.ME), (1, L.THEM)):
        base = 98 * side
        for p in range(1, 25):
            slot = block + p
            idx[slot] = [base + 4 * (p - 1) + u for u in range(4)]
            for n in range(MAX_COUNT):
                val[slot, n] = [n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n > 3 else 0.0]
        idx[block + L.BAR, 0] = base + 96
        idx[block + L.OFF, 0] = base + 97
        for n in range(MAX_COUNT):
            val[block + L.BAR, n, 0] = n / 2
            val[block + L.OFF, n, 0] = n / 15
    const_index = np.array([196, 197], dtype=np.int64)
    const_value = np.array([1.0, 0.0], dtype=np.float32)
    for a in (idx, val, const_index, const_value):
        a.setflags(write=False)
    return Encoder("tesauro198", 198, idx, val, const_index, const_value)


TESAURO198 = _tesauro198()
"""Tesauro's raw 198-input encoding, from the side to move."""


def _with_features(base: Encoder, count: int, dtype=np.int64, tag: str = "f") -> Encoder:
    """``base`` followed by ``count`` hand-crafted inputs, named ``base+<tag><count>``.
    ``dtype``, the feature index's type, tells the kernels which feature set the inputs
    are (:func:`engine.eval.features.feature_values`): ``int64`` the set of
    :func:`~engine.eval.features.features`, :data:`~engine.eval.features.EXTENDED_INDEX`
    :func:`~engine.eval.features.extended_features`'s,
    :data:`~engine.eval.features.FAMILY_INDEX` :func:`~engine.eval.features.family_features`'s."""
    fidx = np.arange(base.n_inputs, base.n_inputs + count, dtype=dtype)
    fidx.setflags(write=False)
    return Encoder(f"{base.name}+{tag}{count}", base.n_inputs + count,
                   base.unit_index, base.unit_value, base.const_index, base.const_value,
                   fidx)


TESAURO198F = _with_features(TESAURO198, 5)
"""Tesauro's 198 inputs plus the first five features of :mod:`engine.eval.features`
(contact, each side's exposure to shots, each side's longest prime): 203 inputs, for
the games with opposite directions of play."""

TESAURO198F13 = _with_features(TESAURO198, N_FEATURES)
"""Tesauro's 198 inputs plus all thirteen features of :mod:`engine.eval.features` (those of
``tesauro198+f5`` and each side's escapes, containment, pips behind the opponent's
rearmost checker and chance to dance): 211 inputs."""


TESAURO198F21 = _with_features(TESAURO198, 21, EXTENDED_INDEX)
"""Tesauro's 198 inputs plus the 21 of :func:`engine.eval.features.extended_features`:
``tesauro198+f13``'s, then each side's exposure to hits with the points in between
checked (hit, double hit, pip loss) and back game: 219 inputs. Its first 211 are
``tesauro198+f13``'s, so such a network seeds it (``--init``)."""

TESAURO198F39 = _with_features(TESAURO198, N_EXTENDED, EXTENDED_INDEX)
"""Tesauro's 198 inputs plus all :data:`~engine.eval.features.N_EXTENDED` of
:func:`engine.eval.features.extended_features`: ``tesauro198+f21``'s, then each side's
timing, free pips, mobility, moment, backbone, forward anchor and checkers off in three
pieces: 237 inputs. Its first 219 are ``tesauro198+f21``'s, so such a network seeds it."""


def _nardy255() -> Encoder:
    base = TESAURO198
    slots = L.PEND + 1
    idx = np.full((slots, MAX_UNITS), -1, dtype=np.int64)
    val = np.zeros((slots, MAX_COUNT, MAX_UNITS), dtype=np.float32)
    idx[:N_SLOTS] = base.unit_index
    val[:N_SLOTS] = base.unit_value
    n = 198
    for block in (L.PIN_ME, L.PIN_THEM):          # pinned checkers, per point and side
        for p in range(1, 25):
            idx[block + p, 0] = n
            val[block + p, 1:, 0] = 1.0
            n += 1
    for slot in (L.TURNS_ME, L.TURNS_THEM):       # turns completed: 1, 2, 3 or more
        idx[slot, :3] = [n, n + 1, n + 2]
        for v in range(MAX_COUNT):
            val[slot, v, :3] = [v >= 1, v >= 2, v >= 3]
        n += 3
    idx[L.NPEND, :2] = [n, n + 1]                 # pending dice: any, and how many
    for v in range(MAX_COUNT):
        val[L.NPEND, v, :2] = [v >= 1, v / 8]
    n += 2
    idx[L.PEND, 0] = n                            # the first pending die (the rest
    for v in range(MAX_COUNT):                    # follow it: d, d+1, ... 6)
        val[L.PEND, v, 0] = v / 6
    n += 1
    for a in (idx, val):
        a.setflags(write=False)
    return Encoder("nardy255", n, idx, val, base.const_index, base.const_value)


NARDY255 = _nardy255()
"""The encoding of the family games: Tesauro's 198 inputs (checker counts per point
and side, bar, off) plus what backgammon's position lacks: a unit per pinned checker
(48, plakoto), three units per side for the turns completed (the first-turn head
exception, gul bara's cascade from the 4th turn) and three for gul bara's pending dice
(any, how many, the first one): 255 inputs. Its first 198 inputs are
:data:`TESAURO198`'s, so a backgammon network can seed it (``--init``)."""


NARDY255M14 = _with_features(NARDY255, N_FAMILY, FAMILY_INDEX, "m")
""":data:`NARDY255` plus the 14 inputs of :func:`engine.eval.features.family_features` (each
side's moves of each number, capped at a double's four, and whether it may bear off),
for gul bara, whose cascades pass the dice a player cannot play to the opponent: 269
inputs. Its first 255 are :data:`NARDY255`'s, so a ``nardy255`` network can seed it."""

ENCODERS = {e.name: e for e in (TESAURO198, TESAURO198F, TESAURO198F13, TESAURO198F21,
                                TESAURO198F39, NARDY255, NARDY255M14)}
"""Every encoder by name."""


def extends(big: Encoder, small: Encoder) -> bool:
    """Whether ``big``'s first ``small.n_inputs`` inputs are ``small``'s, one for one:
    the same units of the same slots, the same constant inputs, and ``small``'s
    hand-crafted features the first of ``big``'s (the first ``k`` of
    :func:`~engine.eval.features.features` are also the first of
    :func:`~engine.eval.features.extended_features`). A network of ``small`` then
    carries over to ``big`` with zero weights on the inputs it lacks
    (:meth:`engine.eval.network.Network.reencoded`)."""
    k = small.unit_index.shape[0]
    if (small.n_inputs > big.n_inputs or k > big.unit_index.shape[0]
            or not np.array_equal(small.unit_index, big.unit_index[:k])
            or not np.array_equal(small.unit_value, big.unit_value[:k])
            or not np.array_equal(small.const_index, big.const_index)
            or not np.array_equal(small.const_value, big.const_value)):
        return False
    a, b = small.feature_index, big.feature_index
    if a.size == 0:
        return True
    same_kind = (a.dtype == b.dtype
                 or (a.dtype == np.int64 and b.dtype == EXTENDED_INDEX))
    return same_kind and a.size <= b.size and np.array_equal(a, b[:a.size])


def default_encoder(variant: str) -> str:
    """The encoder a game's networks use unless told otherwise: Tesauro's for
    backgammon and portes (one board, one bar, nothing else), :data:`NARDY255` for
    the games with pins, heads, turn-dependent rules or pending dice."""
    return TESAURO198.name if variant in ("backgammon", "portes") else NARDY255.name


def get_encoder(name: str) -> Encoder:
    """The encoder called ``name``; raises :class:`EncodingError` for unknown names."""
    try:
        return ENCODERS[name]
    except (KeyError, TypeError):
        raise EncodingError(f"unknown encoder {quote(name)}; expected one of "
                            f"{sorted(ENCODERS)}") from None


def encoder_problem(variant: str, encoder: str) -> str | None:
    """Why the encoder ``encoder`` cannot serve ``variant``, or None when it can: its
    hand-crafted inputs read the board of one family of games only, and give wrong
    values on the others. ``f5`` .. ``f21`` (:func:`engine.eval.features.features`) are
    backgammon's: sides moving in opposite directions that hit; ``m14``
    (:func:`engine.eval.features.family_features`) takes the opponent's point ``q`` for
    the mover's ``q +- 12``: sides moving the same way (fevga, long nardy, gul bara)."""
    fidx = get_encoder(encoder).feature_index
    if not fidx.size:
        return None
    rules = get_rules(variant)
    if uses_family(fidx):
        if rules.geometry == SAME:
            return None
        same = [v for v in VARIANTS if get_rules(v).geometry == SAME]
        return (f"encoder = {quote(encoder)} for {variant}: its family inputs (m14) read "
                f"the board as if both sides moved the same way, and are wrong where they "
                f"move in opposite directions; they are for the games played in the same "
                f"direction ({', '.join(same)})")
    if race_geometry(rules):
        return None
    return (f"encoder = {quote(encoder)} for {variant}: its hand-crafted inputs are for "
            f"the games played in opposite directions with hitting (backgammon, portes)")


@njit(cache=True)
def encode(s, unit_index, unit_value, const_index, const_value, x):
    """Write the inputs of state ``s`` into ``x`` (zeroed first)."""
    x[:] = 0.0
    for slot in range(unit_index.shape[0]):
        n = min(s[slot], MAX_COUNT - 1)
        for u in range(MAX_UNITS):
            i = unit_index[slot, u]
            if i >= 0:
                x[i] = unit_value[slot, n, u]
    for k in range(const_index.shape[0]):
        x[const_index[k]] = const_value[k]
