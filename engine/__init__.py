"""nardy: a TD-Gammon-style engine for backgammon and the nardy / tavli family.

The public API in a few names: :class:`Position` (Position JSON, always from the side to
move), :func:`get_rules` (the rules table of the six games) and :func:`successors`
(every legal full-turn successor). See ``docs/architecture.md`` for the module map.
"""

from pathlib import Path as _Path

from engine._jit import drop_stale_caches as _drop_stale_caches

_drop_stale_caches(_Path(__file__).parent)

from engine.errors import (  # noqa: E402
                           AmbiguousMoveError,
                           DiceError,
                           IllegalMoveError,
                           MoveError,
                           NardyError,
                           NotationError,
                           PositionError,
                           VariantError,
)
from engine.movegen.generate import successors
from engine.rules.position import Position
from engine.rules.variants import VARIANTS, Rules, get_rules

__all__ = [
    "Position", "Rules", "get_rules", "successors", "VARIANTS",
    "NardyError", "PositionError", "NotationError", "DiceError", "MoveError",
    "IllegalMoveError", "AmbiguousMoveError", "VariantError",
]
