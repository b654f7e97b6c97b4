"""The rules table: the six games as settings of one engine.

Each game is a :class:`Rules` value: its geometry, how checkers meet (hit to the bar, a
single checker holding a point, or a pin), the head, block and start rules, the gul bara
cascade and the scoring. Every **option** of ``docs/rules.md`` is a field with the
documented default. :meth:`Rules.table` packs the fields that move generation needs into
an ``int64`` array for the numba kernel, so the kernel never branches on a game's name.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields, replace

import numpy as np

from engine.errors import VariantError, quote

# geometry
OPPOSITE = 0          # my point p is the opponent's point 25 - p
SAME = 1              # my point p is the opponent's point p + 12 (p <= 12) or p - 12

# how checkers meet
HIT = 0               # a lone opposing checker is hit to the bar; two or more close a point
HOLD = 1              # one opposing checker closes a point (long nardy, gul bara, fevga)
PIN = 2               # a lone opposing checker is pinned (plakoto)

# head rule on a player's first turn
HEAD_FIRST_CLASSIC = 0   # 6-6, 4-4 or 3-3 may take two from the head
HEAD_FIRST_ANY_DOUBLE = 1  # any double on the first turn may take two
HEAD_FIRST_NONE = 2      # always one

# block rule
BLOCK_NONE = 0
BLOCK_END = 1         # six-block checked on the position at the end of the turn
BLOCK_EACH = 2        # six-block checked after every single move
BLOCK_QUARTER = 3     # fevga option: may not hold all six points of own starting quarter

# cascade counting (gul bara)
CASCADE_NONE = 0
CASCADE_OWN = 1       # from the player's own 4th turn
CASCADE_GAME = 2      # from the 4th turn of the game (both players' turns)

# plakoto mother
MOTHER_NONE = 0
MOTHER_IMMEDIATE = 1  # pinning the mother ends the game at once, worth 2
MOTHER_DEFERRED = 2   # option: wins only once the pinner has left his own start

# indices of the packed table
T_GEOM, T_MEET, T_HEAD, T_HEAD_FIRST, T_BLOCK, T_START, T_CASCADE, T_MOTHER, T_BAR = range(9)
T_OPP = 16            # T_OPP + p: the opponent's point (its numbering) under my point p
TABLE_LEN = T_OPP + 26

VARIANTS = ("backgammon", "portes", "plakoto", "fevga", "long_nardy", "gul_bara")

_OPTION_VALUES = {
    "head_first": (HEAD_FIRST_CLASSIC, HEAD_FIRST_ANY_DOUBLE, HEAD_FIRST_NONE),
    "block": (BLOCK_NONE, BLOCK_END, BLOCK_EACH, BLOCK_QUARTER),
    "cascade": (CASCADE_NONE, CASCADE_OWN, CASCADE_GAME),
    "mother": (MOTHER_NONE, MOTHER_IMMEDIATE, MOTHER_DEFERRED),
}
"""The values of the options that pick one of several rules; every other option is a
flag (True / False, or 1 / 0)."""


@dataclass(frozen=True)
class Rules:
    """One game's rules, as settings of the shared engine."""

    variant: str
    """Game name, one of :data:`VARIANTS`."""
    geometry: int
    """:data:`OPPOSITE` or :data:`SAME` direction of play."""
    meet: int
    """:data:`HIT`, :data:`HOLD` or :data:`PIN`: what landing by an opposing checker does."""
    start: tuple
    """Starting checkers per own point, as ``((point, count), ...)``."""
    head: bool = False
    """At most one checker leaves the head (point 24) per turn (long nardy, gul bara)."""
    head_first: int = HEAD_FIRST_CLASSIC
    """First-turn exception to the head rule (option)."""
    block: int = BLOCK_NONE
    """Six-block rule variant (option)."""
    start_rule: bool = False
    """Fevga: after one checker has left the start, no other until one reaches point 12."""
    cascade: int = CASCADE_NONE
    """Gul bara cascade of doubles, and how the 4th turn is counted (option)."""
    mother: int = MOTHER_NONE
    """Plakoto: what pinning the mother does (option)."""
    cube: bool = False
    """The doubling cube is used (backgammon only)."""
    backgammon_triple: bool = False
    """A gammon with a checker on the bar or in the winner's home scores 3."""
    koks: bool = False
    """Long nardy / gul bara option: mars with a checker still in the first quarter scores 3."""
    home_mars: bool = False
    """Long nardy / gul bara option: mars with all the loser's checkers at home scores 4."""
    opening_rolls_both: bool = False
    """The opening winner rolls both dice anew (nardy, plakoto, fevga) instead of
    playing the two opening dice (backgammon, portes)."""
    jacoby: bool = True
    """Money play: gammons count only after a double (backgammon)."""
    beavers: bool = False
    """Money play: beavers allowed (backgammon option)."""

    @property
    def has_bar(self) -> bool:
        """Whether checkers can be on the bar (only games with hitting)."""
        return self.meet == HIT

    def with_options(self, **options) -> "Rules":
        """A copy with some options changed; unknown names raise :class:`VariantError`."""
        names = {f.name for f in fields(self)} - {"variant", "geometry", "meet", "start"}
        for key, value in options.items():
            if key not in names:
                raise VariantError(f"unknown rule option {quote(key)} for {self.variant}; "
                                   f"expected one of {sorted(names)}")
            if not isinstance(value, (bool, int)):
                raise VariantError(f"rule option {key}={quote(value)}: expected an int or bool")
            allowed = _OPTION_VALUES.get(key)
            if allowed is None and value not in (0, 1):
                raise VariantError(f"rule option {key}={quote(value)}: expected true or false")
            if allowed is not None and (isinstance(value, bool) or value not in allowed):
                raise VariantError(f"rule option {key}={quote(value)}: expected one of "
                                   f"{list(allowed)}")
        return replace(self, **options)

    def opposite_point(self, p: int) -> int:
        """The opponent's own number for my point ``p`` (1..24)."""
        if self.geometry == OPPOSITE:
            return 25 - p
        return p + 12 if p <= 12 else p - 12

    def table(self) -> np.ndarray:
        """The settings move generation needs, packed for the numba kernel: a fresh
        copy of one made once per rules value (packing them took about 5 us a call, of
        the 34 us that ``successor_arrays`` took for a roll of plakoto's start)."""
        return _packed_table(self).copy()


@functools.lru_cache(maxsize=256)
def _packed_table(rules: Rules) -> np.ndarray:
    """:meth:`Rules.table`'s packing, kept per rules value (never handed out: callers
    get copies, so the kept one cannot be changed)."""
    t = np.zeros(TABLE_LEN, dtype=np.int64)
    t[T_GEOM] = rules.geometry
    t[T_MEET] = rules.meet
    t[T_HEAD] = int(rules.head)
    t[T_HEAD_FIRST] = rules.head_first
    t[T_BLOCK] = rules.block
    t[T_START] = int(rules.start_rule)
    t[T_CASCADE] = rules.cascade
    t[T_MOTHER] = rules.mother
    t[T_BAR] = int(rules.has_bar)
    for p in range(1, 25):
        t[T_OPP + p] = rules.opposite_point(p)
    return t


_BG_START = ((24, 2), (13, 5), (8, 3), (6, 5))
_HEAD_START = ((24, 15),)

_DEFAULTS = {
    "backgammon": Rules("backgammon", OPPOSITE, HIT, _BG_START, cube=True,
                        backgammon_triple=True),
    "portes": Rules("portes", OPPOSITE, HIT, _BG_START),
    "plakoto": Rules("plakoto", OPPOSITE, PIN, _HEAD_START, mother=MOTHER_IMMEDIATE,
                     opening_rolls_both=True),
    "fevga": Rules("fevga", SAME, HOLD, _HEAD_START, block=BLOCK_END, start_rule=True,
                   opening_rolls_both=True),
    "long_nardy": Rules("long_nardy", SAME, HOLD, _HEAD_START, head=True, block=BLOCK_END,
                        opening_rolls_both=True),
    "gul_bara": Rules("gul_bara", SAME, HOLD, _HEAD_START, head=True, block=BLOCK_END,
                      cascade=CASCADE_OWN, opening_rolls_both=True),
}


def rules_for(variant: str, rules: object = None) -> Rules:
    """``rules`` where a function takes a game's rules (``None``: ``variant``'s
    defaults); anything but a :class:`Rules` (a game's name, say) raises
    :class:`VariantError`."""
    if rules is None:
        return get_rules(variant)
    if not isinstance(rules, Rules):
        raise VariantError(f"rules {quote(rules)}: expected a Rules "
                           f"(engine.get_rules(variant, **options))")
    return rules


def get_rules(variant: str, **options) -> Rules:
    """The rules of ``variant`` with its defaults, changed by ``options``."""
    try:
        rules = _DEFAULTS[variant]
    except (KeyError, TypeError):
        raise VariantError(f"unknown variant {quote(variant)}; expected one of "
                           f"{', '.join(VARIANTS)}") from None
    return rules.with_options(**options) if options else rules


def race_geometry(rules: Rules) -> bool:
    """Whether the game's races are backgammon's (:func:`engine.eval.evaluator.races`
    tells them apart), and its hand-crafted network inputs too: the sides move in
    opposite directions and hit (backgammon, portes)."""
    return rules.geometry == OPPOSITE and rules.meet == HIT
