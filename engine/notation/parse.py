"""One entry point for every way a position can be written.

:func:`parse_position` accepts Position JSON (a dict or JSON text), a GNU Backgammon
Position ID or ``PositionID:MatchID`` pair, an XGID, or the word ``start`` (with a
variant), and returns the position seen from the side to move plus whatever the notation
says about the cube, score and dice (``None`` for Position JSON). The CLI and the
protocol both read positions through it.
"""

from __future__ import annotations

from typing import Any

from engine.errors import NotationError, PositionError, quote
from engine.rules.position import Position


def parse_position(value: Any, variant: str | None = None):
    """Parse ``value``; returns ``(position, info)`` where ``info`` is a
    :class:`engine.notation.gnubg_id.MatchInfo`, :class:`engine.notation.xgid.XgidInfo` or ``None``.

    Raises :class:`PositionError` / :class:`NotationError` quoting the input.
    """
    if isinstance(value, dict):
        pos = Position.from_json(value)
        if variant is not None and pos.variant != variant:
            raise PositionError(f"position variant {quote(pos.variant)} differs from the "
                                f"requested variant {quote(variant)}")
        return pos, None
    if not isinstance(value, str):
        raise PositionError(f"position {quote(value)}: expected Position JSON, a GNU "
                            f"Backgammon ID or an XGID")
    text = value.strip()
    if text.lower() == "start":
        return Position.start(variant or "backgammon"), None
    if text.startswith(("{", "[", '"')) or text in ("null", "true", "false"):
        # JSON (no ID or XGID starts so): an object, or the error says one is expected
        return parse_position(_json_object(text), variant)
    if text.upper().startswith("XGID="):
        from engine.notation.xgid import parse_xgid
        return parse_xgid(text, variant or "backgammon")
    from engine.notation.gnubg_id import position_from_gnubg
    try:
        return position_from_gnubg(text, variant or "backgammon")
    except NotationError as exc:
        raise NotationError(f"position {quote(text)} is neither Position JSON, an XGID "
                            f"nor a GNU Backgammon ID: {exc}") from None


def _json_object(text: str) -> dict:
    import json
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PositionError(f"position {quote(text)} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PositionError(f"position {quote(text)}: expected a JSON object")
    return data

