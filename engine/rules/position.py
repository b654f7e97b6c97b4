"""The position type shared by all six games, seen from the side to move.

:class:`Position` mirrors the Position JSON of ``docs/rules.md`` field for field:
``me[i]`` and ``them[i]`` are each side's checkers on its **own** point ``i + 1``; ``bar``,
``off``, ``pinned`` and ``turns`` are ``(side to move, opponent)`` pairs; ``pending`` are
gul bara dice the side to move plays before rolling. Positions are immutable and
hashable; :meth:`Position.flip` gives the same checkers seen by the other side.

The numba core works on a flat ``int16`` array (:mod:`engine.rules._layout`);
:meth:`Position.to_array` and :meth:`Position.from_array` convert, and validation lives
here, at the edge, so kernels can trust their input.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import PositionError, PositionVariantError, quote
from engine.rules import _layout as L
from engine.rules.variants import (
    MOTHER_DEFERRED,
    MOTHER_IMMEDIATE,
    PIN,
    Rules,
    get_rules,
    rules_for,
)

FIELDS = ("variant", "me", "them", "bar", "off", "pinned", "turns", "pending")
CHECKERS = 15


@dataclass(frozen=True)
class Position:
    """A position of one of the six games, from the side to move's point of view."""

    variant: str
    """Game name (see :data:`engine.rules.variants.VARIANTS`)."""
    me: tuple
    """Side to move: checkers on its own points 1..24 (``me[0]`` is point 1)."""
    them: tuple
    """Opponent: checkers on its own points 1..24, in its own numbering."""
    bar: tuple = (0, 0)
    """Checkers on the bar, (side to move, opponent); backgammon and portes only."""
    off: tuple = (0, 0)
    """Checkers borne off, (side to move, opponent)."""
    pinned: tuple = ((), ())
    """Plakoto: owner's points where an owner's checker lies pinned, (side to move, opponent)."""
    turns: tuple = (0, 0)
    """Turns each side has completed in this game."""
    pending: tuple = ()
    """Gul bara: dice the side to move must play before rolling."""

    def __post_init__(self) -> None:
        """Lists given for the sequence fields become tuples, so that a position built
        from lists (``Position("backgammon", [0] * 23 + [15], ...)``) equals the same
        position built from tuples and can be hashed (a key of a dict, a member of a
        set). Nothing is checked here (:meth:`check`); the positions the engine builds
        hold tuples already and take the first test alone."""
        t = tuple
        if (type(self.me) is t and type(self.them) is t and type(self.bar) is t
                and type(self.off) is t and type(self.turns) is t
                and type(self.pending) is t and type(self.pinned) is t):
            if list not in map(type, self.pinned):
                return
        for name in ("me", "them", "bar", "off", "turns", "pending", "pinned"):
            value = getattr(self, name)
            if isinstance(value, list):
                value = tuple(value)
            if name == "pinned" and isinstance(value, tuple):
                value = tuple(tuple(p) if isinstance(p, list) else p for p in value)
            object.__setattr__(self, name, value)

    # ----------------------------------------------------------------- constructors
    @classmethod
    def start(cls, variant: str = "backgammon") -> "Position":
        """The starting position of ``variant``, first player to move."""
        rules = get_rules(variant)
        side = [0] * 24
        for point, count in rules.start:
            side[point - 1] = count
        return cls(variant, tuple(side), tuple(side))

    @classmethod
    def from_json(cls, data: Any, rules: Rules | None = None) -> "Position":
        """Parse Position JSON (a dict or a JSON string) and check it against the rules.

        Raises :class:`PositionError` quoting the offending field.
        """
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except (ValueError, RecursionError) as exc:
                raise PositionError(f"position {quote(data)} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise PositionError(f"position {quote(data)}: expected a JSON object")
        unknown = sorted(set(map(str, data)) - set(FIELDS))
        if unknown:
            raise PositionError(f"position has unknown field(s) {quote(unknown)}; "
                                f"expected only {list(FIELDS)}")
        for key in ("variant", "me", "them"):
            if key not in data:
                raise PositionError(f"position lacks the required field {key!r}")
        variant = data["variant"]
        if not isinstance(variant, str):
            raise PositionVariantError(f"field 'variant' = {quote(variant)}: expected a "
                                       f"string")
        if rules is None:
            try:
                rules = get_rules(variant)
            except ValueError as exc:
                raise PositionVariantError(f"field 'variant': {exc}") from None
        pos = cls(
            variant,
            _int_list(data["me"], "me", 24),
            _int_list(data["them"], "them", 24),
            _int_list(_optional(data, "bar", [0, 0]), "bar", 2),
            _int_list(_optional(data, "off", [0, 0]), "off", 2),
            _pinned(_optional(data, "pinned", [[], []])),
            _int_list(_optional(data, "turns", [0, 0]), "turns", 2),
            _int_list(_optional(data, "pending", []), "pending", None),
        )
        pos.check(rules)
        return pos

    @classmethod
    def from_literal(cls, text: str, variant: str = "backgammon", **extra) -> "Position":
        """A compact literal for tests and examples.

        ``"x 24:2 13:5 8:3 6:5; o 24:2 13:5 8:3 6:5"`` gives the backgammon start; each
        side lists ``point:count`` pairs in its own numbering, plus ``bar:n``, ``off:n``
        and, for plakoto, ``pin:p`` for a pinned checker on its point p. Checkers not
        listed are taken as borne off. Keyword ``extra`` fields (``turns``, ``pending``)
        are passed through.
        """
        if not isinstance(text, str) or len(text) > 10_000:
            raise PositionError(f"literal {quote(text)}: expected a string "
                                f"'x <point:count ...>; o <...>'")
        parts = [s.strip() for s in text.split(";")]
        if len(parts) != 2 or not parts[0].startswith("x") or not parts[1].startswith("o"):
            raise PositionError(f"literal {quote(text)}: expected 'x <point:count ...>; o <...>'")
        sides = []
        for part in parts:
            board = [0] * 24
            bar = off = None
            pins = []
            for token in part[1:].split():
                m = re.fullmatch(r"([0-9]{1,2}|bar|off|pin):([0-9]{1,2})", token)
                if not m:
                    raise PositionError(f"literal {quote(text)}: bad token {quote(token)}, "
                                        f"expected point:count")
                key, n = m.group(1), int(m.group(2))
                if key == "bar":
                    bar = n
                elif key == "off":
                    off = n
                elif key == "pin":
                    pins.append(n)
                elif 1 <= int(key) <= 24:
                    board[int(key) - 1] += n
                else:
                    raise PositionError(f"literal {quote(text)}: point {key} outside 1..24")
            bar = bar or 0
            if off is None:
                off = CHECKERS - sum(board) - bar
                if off < 0:
                    raise PositionError(f"literal {quote(text)}: {part[:1]} lists "
                                        f"{CHECKERS - off} checkers; expected at most "
                                        f"{CHECKERS}")
            sides.append((tuple(board), bar, off, tuple(sorted(pins))))
        (me, b0, o0, p0), (them, b1, o1, p1) = sides
        pos = cls(variant, me, them, (b0, b1), (o0, o1), (p0, p1),
                  _int_list(extra.get("turns", (0, 0)), "turns", 2),
                  _int_list(extra.get("pending", ()), "pending", None))
        pos.check()
        return pos

    # ----------------------------------------------------------------- views
    @property
    def rules(self) -> Rules:
        """The default rules of this position's game."""
        return get_rules(self.variant)

    def flip(self) -> "Position":
        """The same checkers seen by the other side (pending dice are dropped)."""
        return Position(self.variant, self.them, self.me, self.bar[::-1], self.off[::-1],
                        self.pinned[::-1], self.turns[::-1], ())

    def to_json(self) -> dict:
        """Position JSON with all eight fields written out."""
        return {
            "variant": self.variant,
            "me": list(self.me),
            "them": list(self.them),
            "bar": list(self.bar),
            "off": list(self.off),
            "pinned": [sorted(self.pinned[0]), sorted(self.pinned[1])],
            "turns": list(self.turns),
            "pending": list(self.pending),
        }

    def key(self) -> str:
        """The canonical key of ``docs/rules.md``, section 11 (sorted keys, no spaces)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    def pip_counts(self) -> tuple[int, int]:
        """Pips each side needs to bear off, (side to move, opponent)."""
        return (sum((i + 1) * n for i, n in enumerate(self.me)) + 25 * self.bar[0],
                sum((i + 1) * n for i, n in enumerate(self.them)) + 25 * self.bar[1])

    def is_over(self) -> bool:
        """Whether the game is over under the game's default rules: either side has
        borne off all its checkers, or a plakoto mother pin ended it
        (:func:`engine.rules.scoring.result` scores it, under any rules)."""
        if self.off[0] == CHECKERS or self.off[1] == CHECKERS:
            return True
        if not (self.pinned[0] or self.pinned[1]):     # no pins (every game but plakoto)
            return False
        return self.mother_end(get_rules(self.variant)) is not None

    def mother_end(self, rules: Rules) -> int | None:
        """How a mother pin ends the game under ``rules`` (plakoto's ``mother``
        option): 0 the side to move wins, 1 the opponent wins, -1 a draw (both mothers
        pinned, under the deferred rule), None the pins end nothing."""
        mine, theirs = 24 in self.pinned[0], 24 in self.pinned[1]
        if not (mine or theirs):
            return None
        if rules.mother == MOTHER_IMMEDIATE:
            return 1 if mine else 0
        if rules.mother == MOTHER_DEFERRED:
            if mine and theirs:
                return -1
            if mine and self.them[23] == 0:
                return 1
            if theirs and self.me[23] == 0:
                return 0
        return None

    def __repr__(self) -> str:
        return f"Position.from_json({json.dumps(self.to_json(), separators=(',', ':'))!r})"

    # ----------------------------------------------------------------- arrays
    def to_array(self) -> np.ndarray:
        """The flat ``int16`` state the numba core works on."""
        s = np.zeros(L.STATE_LEN, dtype=np.int16)
        s[L.ME + 1:L.ME + 25] = self.me
        s[L.THEM + 1:L.THEM + 25] = self.them
        s[L.ME + L.OFF], s[L.THEM + L.OFF] = self.off
        s[L.ME + L.BAR], s[L.THEM + L.BAR] = self.bar
        for p in self.pinned[0]:
            s[L.PIN_ME + p] = 1
        for q in self.pinned[1]:
            s[L.PIN_THEM + q] = 1
        s[L.TURNS_ME], s[L.TURNS_THEM] = self.turns
        s[L.NPEND] = len(self.pending)
        s[L.PEND:L.PEND + len(self.pending)] = self.pending
        return s

    @classmethod
    def from_array(cls, s: np.ndarray, variant: str) -> "Position":
        """Inverse of :meth:`to_array`. Only the array's shape is checked, not the
        position (kernels produce legal states; :meth:`check` or
        :func:`engine.rules.states.check_states` for rows from elsewhere)."""
        if getattr(s, "shape", None) != (L.STATE_LEN,):
            raise PositionError(f"state array of shape {getattr(s, 'shape', type(s))}; "
                                f"expected ({L.STATE_LEN},)")
        v = s.tolist()
        return cls(
            variant,
            tuple(v[L.ME + 1:L.ME + 25]),
            tuple(v[L.THEM + 1:L.THEM + 25]),
            (v[L.ME + L.BAR], v[L.THEM + L.BAR]),
            (v[L.ME + L.OFF], v[L.THEM + L.OFF]),
            (tuple(p for p in range(1, 25) if v[L.PIN_ME + p]),
             tuple(q for q in range(1, 25) if v[L.PIN_THEM + q])),
            (v[L.TURNS_ME], v[L.TURNS_THEM]),
            tuple(v[L.PEND:L.PEND + v[L.NPEND]]),
        )

    # ----------------------------------------------------------------- checks
    def check(self, rules: Rules | None = None) -> "Position":
        """Raise :class:`PositionError` unless the position is legal for ``rules``."""
        rules = rules_for(self.variant, rules)
        if rules.variant != self.variant:
            raise PositionError(f"position variant {quote(self.variant)} does not match "
                                f"the rules of {rules.variant!r}")
        for name, length, most in (("me", 24, CHECKERS), ("them", 24, CHECKERS),
                                   ("bar", 2, CHECKERS), ("off", 2, CHECKERS),
                                   ("turns", 2, None), ("pending", None, None)):
            value = _int_list(getattr(self, name), name, length)
            if most is not None and max(value) > most:
                raise PositionError(f"field {name!r} = {quote(list(value))}: expected "
                                    f"entries of at most {most}")
        for name, side in (("me", 0), ("them", 1)):
            board = self.me if side == 0 else self.them
            total = sum(board) + self.bar[side] + self.off[side]
            if total != CHECKERS:
                raise PositionError(
                    f"{name} has {total} checkers (board {sum(board)} + bar "
                    f"{self.bar[side]} + off {self.off[side]}); expected {CHECKERS}")
            if self.bar[side] and not rules.has_bar:
                raise PositionError(f"bar[{side}] = {self.bar[side]}: {self.variant} has no "
                                    f"bar (no hitting); expected 0")
        if self.off[0] == CHECKERS and self.off[1] == CHECKERS:
            raise PositionError("both sides have borne off all 15 checkers")
        pins = _pinned(self.pinned)
        if rules.meet != PIN and (pins[0] or pins[1]):
            raise PositionError(f"pinned = {[list(p) for p in pins]}: only plakoto has pins")
        if self.pending and rules.cascade == 0:
            raise PositionError(f"pending = {list(self.pending)}: only gul bara has "
                                f"pending dice")
        if len(self.pending) > L.MAXPEND or any(not 1 <= d <= 6 for d in self.pending):
            raise PositionError(f"pending = {list(self.pending)}: expected at most "
                                f"{L.MAXPEND} dice of 1..6")
        for side, pts in enumerate(pins):
            if len(set(pts)) != len(pts) or any(not 1 <= p <= 24 for p in pts):
                raise PositionError(f"pinned[{side}] = {list(pts)}: expected distinct "
                                    f"points 1..24")
        for p in range(1, 25):
            q = rules.opposite_point(p)
            mine, theirs = self.me[p - 1], self.them[q - 1]
            if not (mine and theirs):
                if p in pins[0] and not mine:
                    raise PositionError(f"pinned[0] names point {p}, where me has no checker")
                if q in pins[1] and not theirs:
                    raise PositionError(f"pinned[1] names point {q}, where them has no checker")
                if p in pins[0] or q in pins[1]:
                    raise PositionError(f"a pinned checker on me's point {p} has no "
                                        f"opposing checker on it")
                continue
            where = f"me's point {p} (them's point {q}) holds {mine} and {theirs}"
            if rules.meet != PIN:
                raise PositionError(f"{where}: checkers of both sides on one point")
            my_pin, their_pin = p in pins[0], q in pins[1]
            if my_pin == their_pin or (my_pin and mine != 1) or (their_pin and theirs != 1):
                raise PositionError(f"{where}: a shared point needs exactly one pinned "
                                    f"single checker under the other side's checkers")
        return self


def _int_list(value: Any, name: str, length: int | None) -> tuple:
    # a list's entries are checked one by one below (np.ndim of a ragged list raises)
    if not isinstance(value, (list, tuple, np.ndarray)) or (
            isinstance(value, np.ndarray) and value.ndim != 1):
        raise PositionError(f"field {name!r} = {quote(value)}: expected a list")
    if length is not None and len(value) != length:
        raise PositionError(f"field {name!r} = {quote(value)}: expected {length} entries, "
                            f"got {len(value)}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 or v > 9999:
            raise PositionError(f"field {name!r} = {quote(value)}: entry {quote(v)} is "
                                f"not an integer 0..9999")
    return tuple(int(v) for v in value)


def _optional(data: dict, key: str, default):
    """An optional field's value: its default when absent or null (RULES.md: "the rest
    default to zero or empty"; a client writing a missing value as null means the same,
    as the protocol reads its own fields)."""
    value = data.get(key)
    return default if value is None else value


def _pinned(value: Any) -> tuple:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise PositionError(f"field 'pinned' = {quote(value)}: expected two lists of points")
    return tuple(tuple(sorted(_int_list(v, f"pinned[{i}]", None))) for i, v in enumerate(value))
