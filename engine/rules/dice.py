"""Dice as a value type, the 21 distinct rolls with their probabilities, and rolling.

A :class:`Dice` is an unordered pair: ``Dice(1, 3) == Dice(3, 1)`` and it is stored
higher die first, because no rule of the six games depends on the order in which the
two dice fell (the forced-play rule speaks of the *larger* die). :data:`ALL_21` is the
chance node of every turn: the 15 non-doubles with probability 2/36 and the 6 doubles
with 1/36, summing to one, for expectations over the next roll (n-ply search, the
evaluation of a position before its roll).

:func:`check_dice` is the one check of dice given to the engine (the value type, the
move generator, move text, the search, the protocol and the command lines call it), and
:func:`parse_dice` the one reader of dice text.

Randomness is always passed in: :meth:`Dice.roll` takes a :class:`numpy.random.Generator`,
and nothing here seeds or reads a global generator, so two runs with equal seeds agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Sequence, overload

import numpy as np

from engine.errors import DiceError, quote


@dataclass(frozen=True, order=True)
class Dice:
    """One roll of two dice, stored higher die first."""

    high: int
    """The higher (or equal) die, 1..6."""
    low: int
    """The lower (or equal) die, 1..6."""

    def __post_init__(self) -> None:
        high, low = check_dice((self.high, self.low))
        if high < low:
            high, low = low, high
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "low", low)

    # ----------------------------------------------------------------- constructors
    @classmethod
    def of(cls, dice) -> "Dice":
        """A :class:`Dice` from a ``Dice``, a pair ``(d1, d2)`` or text such as ``"31"``,
        ``"3-1"`` or ``"3 1"``; raises :class:`DiceError` quoting anything else."""
        if isinstance(dice, Dice):
            return dice
        if isinstance(dice, str):
            return cls(*parse_dice(dice))
        if isinstance(dice, np.ndarray):
            dice = dice.tolist()
        return cls(*check_dice(dice))

    @classmethod
    def roll(cls, rng: np.random.Generator) -> "Dice":
        """A uniformly random roll drawn from ``rng`` (two independent fair dice)."""
        a, b = rng.integers(1, 7, size=2)
        return cls(int(a), int(b))

    # ----------------------------------------------------------------- views
    @property
    def is_double(self) -> bool:
        """Whether both dice show the same number."""
        return self.high == self.low

    @property
    def probability(self) -> float:
        """Chance of this unordered roll: 1/36 for a double, 2/36 otherwise."""
        return (1 if self.is_double else 2) / 36

    def moves(self) -> tuple[int, ...]:
        """The single moves the roll gives outside gul bara's cascade: four of a double,
        else the two dice (higher first)."""
        return (self.high,) * 4 if self.is_double else (self.high, self.low)

    def __iter__(self) -> Iterator[int]:
        """``d1, d2 = dice`` and ``tuple(dice)`` give ``(high, low)``."""
        return iter((self.high, self.low))

    def __str__(self) -> str:
        return f"{self.high}-{self.low}"

    def __repr__(self) -> str:
        return f"Dice({self.high}, {self.low})"


@overload
def check_dice(dice: object) -> tuple[int, int]: ...
@overload
def check_dice(dice: object, pending: Sequence[int]) -> tuple[int, int] | None: ...


def check_dice(dice: object, pending: Sequence[int] | None = None) -> tuple[int, int] | None:
    """The one check of dice given to the engine: a roll, two integers 1..6 as a list, a
    tuple or a :class:`Dice`, comes back as ``(d1, d2)`` in the order given. With
    ``pending`` (the pending dice of the position they are for), None plays gul bara's
    pending segment, which a position holding pending dice must play before it rolls:
    None comes back for it, and a roll for such a position is refused. Anything else
    raises :class:`DiceError` quoting it."""
    if dice is None and pending:
        return None
    if isinstance(dice, Dice):
        roll = (dice.high, dice.low)
    elif (isinstance(dice, (list, tuple)) and len(dice) == 2
          and all(not isinstance(d, bool) and isinstance(d, (int, np.integer)) and 1 <= d <= 6
                  for d in dice)):
        roll = (int(dice[0]), int(dice[1]))
    elif dice is None and pending is not None:
        raise DiceError("dice = null plays a gul bara pending segment, but the "
                        "position has no pending dice; expected two integers 1..6")
    else:
        raise DiceError(f"dice = {quote(dice)}: expected two integers 1..6")
    if pending:
        raise DiceError(f"dice = {list(roll)}: the position has pending dice "
                        f"{list(pending)} to play first; expected null (no dice)")
    return roll


_DICE_TEXT = re.compile(r"\s*([1-6])\s*[-,/ ]?\s*([1-6])\s*")


def parse_dice(text: str) -> tuple[int, int]:
    """Dice written as text, in the order written: two digits 1..6, apart or joined by
    one ``-``, ``,``, ``/`` or space (``"31"``, ``"3-1"``, ``"3 1"``, ``"3,1"``). The one
    reader of dice text (:meth:`Dice.of` and the command lines use it); anything else,
    ``"-31"`` or ``"3-1-"`` or ``"0-7"``, raises :class:`DiceError` quoting it."""
    m = _DICE_TEXT.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise DiceError(f"dice {quote(text)}: expected two digits 1..6 such as '31' or '3-1'")
    return check_dice((int(m.group(1)), int(m.group(2))))


ALL_21: tuple[tuple[Dice, float], ...] = tuple(
    (Dice(a, b), (1 if a == b else 2) / 36) for a in range(1, 7) for b in range(1, a + 1))
"""The 21 distinct rolls with their probabilities (doubles 1/36, others 2/36)."""


def roll(rng: np.random.Generator) -> Dice:
    """A random roll from ``rng``; same as :meth:`Dice.roll`."""
    return Dice.roll(rng)


def roll_one(rng: np.random.Generator) -> int:
    """One die 1..6 from ``rng`` (the opening roll throws one die per player)."""
    return int(rng.integers(1, 7))
