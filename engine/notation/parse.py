"""One entry point for every way a position can be written.

:func:`parse_position` accepts Position JSON (a dict or JSON text), a GNU Backgammon
Position ID or ``PositionID:MatchID`` pair, an XGID, a FIBS board string
(``board:...``), or the word ``start`` (with a variant), and returns the position seen from the side to move plus whatever the notation
says about the cube, score and dice (``None`` for Position JSON). The CLI and the
protocol both read positions through it.
"""

from __future__ import annotations

import re
from typing import Any

from engine.errors import NotationError, PositionError, quote
from engine.rules.position import Position

_XGID_BARE = re.compile(r"[-a-oA-O]{26}(:[^:]*){9}")
"""An XGID written without its ``XGID=`` prefix (as GNU Backgammon's ``set xgid`` takes
it): 26 board characters and nine more fields."""


def parse_position(value: Any, variant: str | None = None):
    """Parse ``value``; returns ``(position, info)`` where ``info`` is a
    :class:`engine.notation.gnubg_id.MatchInfo`, :class:`engine.notation.xgid.XgidInfo` or ``None``.

    Raises :class:`PositionError` / :class:`NotationError` quoting the input; also
    :class:`NotationError` for a Match ID whose game is over, or that holds a
    resignation offered or a double offered after the roll, in the Crawford game or by
    the side that does not own the cube (:func:`_check_open`), and for an XGID with such
    a double (:func:`engine.notation.xgid.xgid_conflict`; not in portes, which has no
    cube and reads none of an XGID's cube fields).
    """
    if isinstance(value, dict):
        pos = Position.from_json(value)
        if variant is not None and pos.variant != variant:
            raise PositionError(f"position variant {quote(pos.variant)} differs from the "
                                f"requested variant {quote(variant)}")
        return pos, None
    if not isinstance(value, str):
        raise PositionError(f"position {quote(value)}: expected Position JSON, a GNU "
                            f"Backgammon ID, an XGID or a FIBS board string")
    text = value.strip()
    if text.lower() == "start":
        return Position.start(variant or "backgammon"), None
    if text.startswith(("{", "[", '"')) or text in ("null", "true", "false"):
        # JSON (no ID or XGID starts so): an object, or the error says one is expected
        return parse_position(_json_object(text), variant)
    if text.upper().startswith("XGID=") or _XGID_BARE.fullmatch(text):
        from engine.notation.xgid import parse_xgid, xgid_conflict
        xpos, xinfo = parse_xgid(text, variant or "backgammon")
        conflict = xgid_conflict(xinfo) if xpos.rules.cube else None
        if conflict is not None:
            raise NotationError(f"XGID {quote(text)} holds {conflict}")
        return xpos, xinfo
    if text.lower().startswith("board:"):
        return _fibs(text, variant)
    from engine.notation.gnubg_id import position_from_gnubg
    try:
        pos, info = position_from_gnubg(text, variant or "backgammon")
    except NotationError as exc:
        raise NotationError(f"position {quote(text)} is neither Position JSON, an XGID, "
                            f"a FIBS board nor a GNU Backgammon ID: {exc}") from None
    if info is not None:
        _check_open(info, text, pos.rules.cube)
    return pos, info


def _fibs(text: str, variant: str | None):
    """A FIBS board string (:mod:`engine.notation.fibs`, the fields 4 and 5 FIBS' own
    scores, as a FIBS client writes them) as ``(position, XgidInfo)``: the side on
    roll's checkers, the dice, cube, score and Crawford game the board holds (a double
    on offer as an XGID's ``D``, a beaver as its ``B``); the Jacoby rule, which the
    board does not carry, on in money play as the rules' default. What the board cannot
    hold (a finished game) is refused as :meth:`engine.notation.fibs.FibsBoard.view`
    says, a double the cube's owner could not make as an XGID's would be: each a
    :class:`NotationError`, as for the IDs."""
    from engine.notation.fibs import FibsBoardError, parse_fibs_board
    from engine.notation.xgid import XgidInfo, xgid_conflict
    try:
        view = parse_fibs_board(text).view("fibs", variant or "backgammon")
    except FibsBoardError as exc:               # a notation read here, as an ID's
        raise NotationError(str(exc)) from None
    action = {"take": "double", "beaver": "beaver"}.get(view.decision)
    info = XgidInfo(cube_value=view.cube, cube_owner=view.owner, dice=view.dice,
                    cube_action=action, score=tuple(view.score),
                    match_length=view.match_length, crawford=view.crawford,
                    jacoby=not view.match_length and view.position.rules.jacoby)
    conflict = xgid_conflict(info) if view.position.rules.cube else None
    if conflict is not None:
        raise NotationError(f"FIBS board {quote(text)} holds {conflict}")
    return view.position, info


def _check_open(info, text: str, cube: bool = True) -> None:
    """Refuse a Match ID that leaves nothing to decide in its position, or asks for a
    decision the engine does not take: a game that is over (ended, resigned or dropped),
    a resignation offered, and in a game with the cube (``cube``; portes reads none of
    the cube fields) a double offered with the dice already rolled (a double comes
    before the roll), in the Crawford game or by the side that does not own the cube
    (:func:`engine.notation.gnubg_id.match_conflict`). Read as a position, each was
    analysed as if play went on."""
    from engine.notation.gnubg_id import GAME_NONE, GAME_PLAYING, GAME_STATES, match_conflict
    what = f"GNU Backgammon ID {quote(text)}"
    if info.game_state not in (GAME_NONE, GAME_PLAYING):
        raise NotationError(f"{what}: its Match ID says the game is over (game state "
                            f"{GAME_STATES[info.game_state]!r}); there is nothing left to "
                            f"decide")
    if info.resigned:
        kind = ("a single game", "a gammon", "a backgammon")[info.resigned - 1]
        raise NotationError(f"{what}: its Match ID holds a resignation offered ({kind}); "
                            f"resignations are not analysed: give the position without "
                            f"it")
    conflict = match_conflict(info) if cube else None
    if conflict is not None:
        raise NotationError(f"{what}: its Match ID holds {conflict}")


def _json_object(text: str) -> dict:
    import json
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PositionError(f"position {quote(text)} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PositionError(f"position {quote(text)}: expected a JSON object")
    return data



def double_offered(info) -> bool:
    """Whether the notation's ``info`` (a Match ID's :class:`~engine.notation.gnubg_id.MatchInfo`
    or an :class:`~engine.notation.xgid.XgidInfo`) says the side to move has doubled
    and the opponent must answer: a Match ID's doubled flag, an XGID's ``D``."""
    return bool(getattr(info, "doubled", False)) or getattr(info, "cube_action", None) == "double"


def as_match_info(info):
    """``info`` (a :class:`~engine.notation.gnubg_id.MatchInfo`, an
    :class:`~engine.notation.xgid.XgidInfo` or None) as a MatchInfo: the cube, the
    dice, the match and score, the Crawford and Jacoby flags and a double on offer
    carried over from an XGID; None when there is none, or when the XGID holds what a
    Match ID cannot (a cube over 32768, a beaver or raccoon on offer).

    The Match ID is the one GNU Backgammon 1.07 shows after ``set xgid``: the side on
    roll is its player 1 (it swaps the players so that the side on roll sits at the
    bottom), and in a match the Jacoby bit says "off", as its ``SetXGID`` leaves it."""
    from engine.errors import NotationError
    from engine.notation.gnubg_id import MatchInfo
    from engine.notation.xgid import XgidInfo
    if info is None or isinstance(info, MatchInfo):
        return info
    if not isinstance(info, XgidInfo) or info.cube_action not in (None, "double"):
        return None
    doubled = info.cube_action == "double"
    try:
        return MatchInfo(cube_value=info.cube_value, cube_owner=info.cube_owner,
                         on_roll=1, turn=0 if doubled else 1, doubled=doubled,
                         crawford=info.crawford, dice=info.dice,
                         match_length=info.match_length, score=tuple(info.score),
                         jacoby=info.jacoby if not info.match_length else False)
    except NotationError:
        return None


def as_xgid_info(info):
    """``info`` (a MatchInfo, an XgidInfo or None) as an
    :class:`~engine.notation.xgid.XgidInfo`, the mirror of :func:`as_match_info`; None
    when there is none, or when the Match ID holds what this XGID cannot: a beaver on
    offer (the double answered by a redouble, the doubler to decide: GNU Backgammon's
    own files hold it), a Crawford flag with neither side 1-away."""
    from engine.errors import NotationError
    from engine.notation.gnubg_id import MatchInfo
    from engine.notation.xgid import XgidInfo
    if info is None or isinstance(info, XgidInfo):
        return info
    if not isinstance(info, MatchInfo) or (info.doubled and info.cube_owner == "them"):
        return None
    try:
        return XgidInfo(cube_value=info.cube_value, cube_owner=info.cube_owner,
                        dice=info.dice, cube_action="double" if info.doubled else None,
                        score=tuple(info.score), match_length=info.match_length,
                        crawford=info.crawford,
                        jacoby=info.jacoby if not info.match_length else False)
    except NotationError:
        return None
