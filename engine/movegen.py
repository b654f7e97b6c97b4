"""Move generation: every distinct legal full-turn successor, for all six games.

The typed API around the numba core of :mod:`engine._movegen`: it checks the position
and dice, runs the kernel and turns its arrays back into :class:`Position` values.
Successors are seen from the next side to move (turns advanced); a gul bara pending
segment (``dice=None``) leaves the same side to move with ``pending`` emptied.
"""

from __future__ import annotations

import numpy as np

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
    kernel = generate_play if play else generate_into
    n, out = kernel(position.to_array(), d1, d2, rules.table(), new_scratch(), out)
    return out[:n]


def successors(position: Position, dice, rules: Rules | None = None) -> list[Position]:
    """Every distinct legal position after the turn, sorted by canonical key."""
    arrays = successor_arrays(position, dice, rules)
    result = [Position.from_array(a, position.variant) for a in arrays]
    result.sort(key=Position.key)
    return result
