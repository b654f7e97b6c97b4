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


class FibsBoardError(NotationError):
    """A FIBS board string (``board:...``, GNU Backgammon's external-player format) that
    cannot be read: a field missing, not an integer, or out of its range."""

    code = "invalid_board"


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


class PositionVariantError(PositionError, VariantError):
    """A position of an unknown game: a :class:`PositionError` to those who read
    positions, the protocol's ``invalid_variant``."""

    code = "invalid_variant"


class TooManyPlaysError(NardyError):
    """A turn whose plays are too many to list (a gul bara cascade of tens of millions
    of boards): listing them would exhaust the machine's memory."""

    code = "too_many_plays"


QUOTE_LIMIT = 200
"""Characters of a bad input an error message quotes; a longer one is cut (:func:`quote`)."""


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with ``... (N chars)`` saying how long it
    was: an error must name its input, not repeat ten megabytes of it."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} chars)"


def _json_spelling(value: object) -> str | None:
    """``value`` as JSON writes it when that differs from Python's spelling and the
    value is plain: ``null``, ``true``, ``false``, and a list or tuple of numbers and
    those (``[true, 1]``); None for anything else (left to ``repr``)."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, (list, tuple)) and len(value) <= 64 and all(
            v is None or isinstance(v, (bool, int, float)) for v in value) and any(
            v is None or isinstance(v, bool) for v in value):
        return "[" + ", ".join(_json_spelling(v) or repr(v) for v in value) + "]"
    return None


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` for an error message, cut by :func:`clip`, with JSON's spelling
    of null and booleans (the protocol and the CLI read JSON; Python callers read
    both). Every error that quotes its input quotes it through here."""
    plain = _json_spelling(value)
    if plain is not None:
        return plain
    try:
        text = repr(value)
    except RecursionError:               # a list nested thousands deep
        return f"<{type(value).__name__} nested too deeply to show>"
    return clip(text, limit)


def describe(exc: BaseException) -> str:
    """``exc`` in one short line for a message that wraps it: ``zlib.error: Error -3
    while decompressing data``, its text cut by :func:`clip`."""
    kind = type(exc)
    name = kind.__qualname__
    if kind.__module__ != "builtins":
        name = f"{kind.__module__}.{name}"
    return clip(f"{name}: {' '.join(str(exc).split())}")
