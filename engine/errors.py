"""Typed errors of the engine's Python API.

Every error raised for bad input subclasses :class:`ValueError`, quotes the input it
rejects and says what was expected, so callers (the protocol, the CLI, tests) can catch
one family and show the message as it is.
"""


class NardyError(ValueError):
    """Base class of every input error the engine raises."""

    code = "invalid"


class PositionError(NardyError):
    """A position (Position JSON or an object) breaks the format or its game's rules."""

    code = "invalid_position"


class NotationError(NardyError):
    """A GNU Backgammon Position ID / Match ID, XGID or literal could not be parsed."""

    code = "invalid_notation"


class DiceError(NardyError):
    """Dice out of range or of the wrong shape."""

    code = "invalid_dice"


class MoveError(NardyError):
    """Move text that cannot be parsed, or names no legal turn."""

    code = "invalid_move"


class IllegalMoveError(MoveError):
    """Move text that parses but is not a legal turn for the position and dice."""

    code = "illegal_move"


class AmbiguousMoveError(MoveError):
    """Move text that matches more than one legal turn."""

    code = "ambiguous_move"


class VariantError(NardyError):
    """An unknown game name or an unknown / ill-typed rule option."""

    code = "invalid_variant"
