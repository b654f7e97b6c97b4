"""eXtreme Gammon's XGID, read and written as XG writes it and GNU Backgammon reads it.

::

    XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10
         position                   | | | |  | | | | max cube (log2)
                                    | | | |  | | | match length (0 = money)
                                    | | | |  | | Crawford (match) / Jacoby + 2*beaver (money)
                                    | | | |  | second score: the top player (lowercase)
                                    | | | |  first score: the bottom player (uppercase)
                                    | | | dice: "00" not rolled, "D" doubled, "B" beavered,
                                    | | |       "R" raccooned, else two digits "53"
                                    | | turn: 1 bottom (uppercase) player, -1 top
                                    | cube owner: 0 centred, 1 bottom, -1 top
                                    cube value (log2)

The 26 position characters are seen from the bottom player, who moves 24 -> 1: index
``i`` (1..24) is his point ``i`` and the top player's point ``25 - i``; index 0 is the top
player's bar, index 25 the bottom player's; ``-`` is empty, ``A``..``O`` 1..15 of the
bottom player's checkers, ``a``..``o`` the top player's. Borne off is what is missing
from 15. (Field meanings as in GNU Backgammon's ``SetXGID``, which reads the fields with
the same numbering.)

The engine always sees a position from the side to move, so :func:`parse_xgid` returns
the position from the ``turn`` player's side and an :class:`XgidInfo` whose cube owner
and scores are relative to that player; :attr:`XgidInfo.turn` keeps which colour he was,
so :func:`format_xgid` gives back exactly the text it read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import DiceError, NotationError, PositionError, quote
from engine.notation.gnubg_id import DOUBLE_BY_NON_OWNER, DOUBLE_IN_CRAWFORD, check_geometry
from engine.rules.dice import check_dice
from engine.rules.position import CHECKERS, Position

PREFIX = "XGID="
_FIELD = re.compile(r"0|-?[1-9][0-9]{0,4}")   # canonical integers only, ASCII digits
_ACTIONS = {"D": "double", "B": "beaver", "R": "raccoon"}
_ACTION_CHARS = {v: k for k, v in _ACTIONS.items()}


@dataclass(frozen=True)
class XgidInfo:
    """Everything in an XGID apart from the checkers, relative to the side to move.

    The side to move is the XGID's ``turn`` player (after a double, ``"D"``, that is the
    player who doubled; the opponent must answer).
    """

    cube_value: int = 1
    """Cube value, a power of two (1 = the cube at 1, never turned)."""
    cube_owner: str = "centre"
    """``"centre"``, ``"me"`` (the side to move) or ``"them"``."""
    dice: tuple | None = None
    """Dice rolled, in the order written, or ``None`` (not rolled, or a cube action)."""
    cube_action: str | None = None
    """``None``, or ``"double"`` / ``"beaver"`` / ``"raccoon"`` (dice field D / B / R)."""
    score: tuple = (0, 0)
    """Points won in the match, (side to move, opponent); XG writes 0, 0 for money."""
    match_length: int = 0
    """Match length; 0 means money play."""
    crawford: bool = False
    """Match play: this game is the Crawford game."""
    jacoby: bool = False
    """Money play: the Jacoby rule is on (rules field bit 1)."""
    beaver: bool = False
    """Money play: beavers are allowed (rules field bit 2)."""
    max_cube: int = 1024
    """Highest cube value allowed, a power of two (XG writes 10, i.e. 1024)."""
    turn: int = 1
    """Which colour the side to move is in the XGID: 1 the bottom player (uppercase,
    first score), -1 the top player (lowercase, second score)."""

    def __post_init__(self) -> None:
        for name in ("cube_value", "max_cube"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v & (v - 1) \
                    or v.bit_length() > 31:
                raise NotationError(f"{name}={quote(v)}: expected a power of two 1..2**30")
        if self.cube_owner not in ("centre", "me", "them"):
            raise NotationError(f"cube_owner={quote(self.cube_owner)}: expected 'centre', 'me' "
                                f"or 'them'")
        for name in ("crawford", "jacoby", "beaver"):
            if not isinstance(getattr(self, name), bool):
                raise NotationError(f"{name}={quote(getattr(self, name))}: expected true or "
                                    f"false")
        if self.dice is not None:
            try:
                d = check_dice(self.dice)
            except DiceError:
                raise NotationError(f"dice={quote(self.dice)}: expected None or two dice "
                                    f"1..6") from None
            object.__setattr__(self, "dice", d)
            if self.cube_action is not None:
                raise NotationError(f"dice={quote(d)} with cube_action={quote(self.cube_action)}: "
                                    f"an XGID holds one or the other")
        if self.cube_action not in (None, *_ACTION_CHARS):
            raise NotationError(f"cube_action={quote(self.cube_action)}: expected None, "
                                f"'double', 'beaver' or 'raccoon'")
        m = self.match_length
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= 99999:
            raise NotationError(f"match_length={quote(m)}: expected 0 (money) or a length")
        s = self.score
        if (not isinstance(s, tuple) or len(s) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 99999
                       for x in s)):
            raise NotationError(f"score={quote(s)}: expected two non-negative scores")
        if m and any(x >= m for x in s):
            raise NotationError(f"score={quote(s)} in a {m}-point match: expected scores "
                                f"below the match length (a side at {m} has won the match)")
        if m and self.crawford and (m - 1 not in s or s == (m - 1, m - 1)):
            raise NotationError(f"crawford=True at score={quote(s)} in a {m}-point match: "
                                f"the Crawford game needs one side at {m - 1} (both there "
                                f"is after it)")
        if self.cube_value > self.max_cube:
            raise NotationError(f"cube_value={self.cube_value} above max_cube="
                                f"{self.max_cube}")
        if m and (self.jacoby or self.beaver):
            raise NotationError("jacoby/beaver are money-play flags; match_length is "
                                f"{m}")
        if not m and self.crawford:
            raise NotationError("crawford=True in money play: no Crawford game in money")
        if type(self.turn) is not int or self.turn not in (1, -1):
            raise NotationError(f"turn={quote(self.turn)}: expected 1 (bottom) or -1 (top)")

    @property
    def money(self) -> bool:
        """Money play (no match length)."""
        return self.match_length == 0


def xgid_conflict(info: XgidInfo) -> str | None:
    """What makes ``info`` a state no game reaches, or None: a double offered (``D``) in
    the Crawford game, which has no cube, or by the side whose opponent owns the cube.
    The notation holds such states; the readers that act on an XGID refuse them, as
    :func:`engine.notation.gnubg_id.match_conflict` has it for a Match ID."""
    if info.cube_action == "double" and info.crawford:
        return DOUBLE_IN_CRAWFORD
    if info.cube_action == "double" and info.cube_owner == "them":
        return DOUBLE_BY_NON_OWNER
    return None


def _board_char(count: int, upper: bool) -> str:
    if count == 0:
        return "-"
    return chr((ord("A") if upper else ord("a")) + count - 1)


def format_xgid(pos: Position, info: XgidInfo | None = None) -> str:
    """The XGID of ``pos`` (seen from the side to move) with ``info``'s cube and score.

    Without ``info`` the cube is centred at 1, the side to move has not rolled, and it is
    a money game with no Jacoby or beaver flag: the protocol's example form.
    """
    if not isinstance(pos, Position):
        raise PositionError(f"pos = {quote(pos)}: expected a Position")
    if info is None:
        info = XgidInfo()
    elif not isinstance(info, XgidInfo):
        raise NotationError(f"info = {quote(info)}: expected an XgidInfo or None")
    check_geometry(pos.variant, "format_xgid", "an XGID")
    if info.turn == 1:
        (bottom, bbar), (top, tbar) = (pos.me, pos.bar[0]), (pos.them, pos.bar[1])
    else:
        (bottom, bbar), (top, tbar) = (pos.them, pos.bar[1]), (pos.me, pos.bar[0])
    chars = [_board_char(tbar, False)]
    for i in range(1, 25):
        b, t = bottom[i - 1], top[25 - i - 1]
        if b and t:
            raise PositionError(f"format_xgid: point {i} holds checkers of both sides")
        chars.append(_board_char(b, True) if b else _board_char(t, False))
    chars.append(_board_char(bbar, True))
    t = info.turn
    owner = {"centre": 0, "me": t, "them": -t}[info.cube_owner]
    if info.cube_action:
        dice = _ACTION_CHARS[info.cube_action]
    elif info.dice:
        dice = f"{info.dice[0]}{info.dice[1]}"
    else:
        dice = "00"
    s1, s2 = info.score if t == 1 else info.score[::-1]
    if info.match_length:
        rules_flag = int(info.crawford)
    else:
        rules_flag = int(info.jacoby) + 2 * int(info.beaver)
    fields = ["".join(chars), info.cube_value.bit_length() - 1, owner, t, dice, s1, s2,
              rules_flag, info.match_length, info.max_cube.bit_length() - 1]
    return PREFIX + ":".join(map(str, fields))


def parse_xgid(text: str, variant: str = "backgammon") -> tuple[Position, XgidInfo]:
    """Read an XGID (the ``XGID=`` prefix is optional) into a position and its info.

    The position is seen from the ``turn`` player, ``turns`` = ``(0, 0)``. Raises
    :class:`NotationError`, quoting the text, for a wrong field count, a bad character,
    a field out of range, or an impossible position (more than 15 checkers a side).
    """
    if not isinstance(text, str):
        raise NotationError(f"XGID {quote(text)}: expected a string")
    what = f"XGID {quote(text)}"
    check_geometry(variant, what, "an XGID")
    body = text.strip()
    if body[:len(PREFIX)].upper() == PREFIX:
        body = body[len(PREFIX):]
    parts = body.split(":")
    if len(parts) == 10:
        # text after the last field and white space, as a post or a table adds it
        # (``...:0:9:10 | ||``): GNU Backgammon's SetXGID reads the leading digits
        parts[9] = re.split(r"\s", parts[9], maxsplit=1)[0]
    if len(parts) != 10:
        raise NotationError(f"{what}: expected 10 fields separated by ':' (board, cube, "
                            f"cube owner, turn, dice, score, score, rules, match length, "
                            f"max cube), got {len(parts)}")
    board, *nums = parts
    dice_text = nums.pop(3)
    for name, field in zip(("cube", "cube owner", "turn", "first score", "second score",
                            "rules", "match length", "max cube"), nums):
        if not _FIELD.fullmatch(field):
            raise NotationError(f"{what}: {name} field {quote(field)} is not an integer of "
                                f"at most five ASCII digits")
    cube_exp, owner, turn, s1, s2, flags, length, max_exp = map(int, nums)

    # --- board
    if len(board) != 26:
        raise NotationError(f"{what}: the board field has {len(board)} characters; "
                            f"expected 26")
    bottom, top = [0] * 25, [0] * 25          # own points 1..24 at 0..23, bar at 24
    for i, c in enumerate(board):
        if c == "-":
            continue
        if "A" <= c <= "O":
            if i == 0:
                raise NotationError(f"{what}: index 0 is the top player's bar; an "
                                    f"uppercase {quote(c)} there is not allowed")
            bottom[24 if i == 25 else i - 1] = ord(c) - ord("A") + 1
        elif "a" <= c <= "o":
            if i == 25:
                raise NotationError(f"{what}: index 25 is the bottom player's bar; a "
                                    f"lowercase {quote(c)} there is not allowed")
            top[24 if i == 0 else 25 - i - 1] = ord(c) - ord("a") + 1
        else:
            raise NotationError(f"{what}: board character {quote(c)} at index {i}; expected "
                                f"'-', A-O or a-o")
    for name, side in (("bottom (uppercase)", bottom), ("top (lowercase)", top)):
        if sum(side) > CHECKERS:
            raise NotationError(f"{what}: the {name} player has {sum(side)} checkers; "
                                f"expected at most {CHECKERS}")

    # --- the other fields
    if turn not in (1, -1):
        raise NotationError(f"{what}: turn {turn}; expected 1 (bottom) or -1 (top)")
    if owner not in (0, 1, -1):
        raise NotationError(f"{what}: cube owner {owner}; expected 0, 1 or -1")
    if not 0 <= cube_exp <= 30 or not 0 <= max_exp <= 30:
        raise NotationError(f"{what}: cube {cube_exp} / max cube {max_exp}: expected "
                            f"log2 values 0..30")
    if length < 0 or s1 < 0 or s2 < 0:
        raise NotationError(f"{what}: negative match length or score")
    if length and flags not in (0, 1):
        raise NotationError(f"{what}: rules field {flags} in a match; expected 0, or 1 "
                            f"for the Crawford game")
    if not length and flags not in (0, 1, 2, 3):
        raise NotationError(f"{what}: rules field {flags} in money play; expected 0..3 "
                            f"(1 Jacoby + 2 beaver)")
    dice = action = None
    if dice_text in _ACTIONS:
        action = _ACTIONS[dice_text]
    elif dice_text != "00":
        if not re.fullmatch(r"[1-6][1-6]", dice_text):
            raise NotationError(f"{what}: dice field {quote(dice_text)}; expected '00', 'D', "
                                f"'B', 'R' or two dice 1..6 such as '53'")
        dice = (int(dice_text[0]), int(dice_text[1]))

    if turn == 1:
        me, them, score = bottom, top, (s1, s2)
    else:
        me, them, score = top, bottom, (s2, s1)
    pos = Position(variant, tuple(me[:24]), tuple(them[:24]), (me[24], them[24]),
                   (CHECKERS - sum(me), CHECKERS - sum(them)))
    try:
        pos.check()
        info = XgidInfo(
            cube_value=1 << cube_exp,
            cube_owner="centre" if owner == 0 else ("me" if owner == turn else "them"),
            dice=dice,
            cube_action=action,
            score=score,
            match_length=length,
            crawford=bool(length and flags),
            jacoby=bool(not length and flags & 1),
            beaver=bool(not length and flags & 2),
            max_cube=1 << max_exp,
            turn=turn,
        )
    except (PositionError, NotationError) as exc:
        raise NotationError(f"{what}: {exc}") from None
    return pos, info
