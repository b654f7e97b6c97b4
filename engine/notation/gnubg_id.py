"""GNU Backgammon's Position ID and Match ID, read and written exactly as gnubg does.

A **Position ID** is 14 characters of base64 over a 10-byte (80-bit) key. The key is a
bit string, packed least significant bit first: for each player in turn, for each of his
points 1..24 and then his bar (gnubg's point 25), as many ``1`` bits as he has checkers
there followed by one ``0``. The player **not** on roll comes first (gnubg's
``anBoard[0]``), the player on roll second (``anBoard[1]``), each in his own numbering.
Checkers not on the board or the bar are borne off. Checked against all 940 records of
``tests/data/perft/backgammon.jsonl`` (GNU Backgammon's own IDs); the start is ``4HPwATDgc/ABMA``.

A **Match ID** is 12 characters of base64 over a 9-byte key holding the cube, whose turn
it is, the dice, the match length and the score (bit layout in :func:`match_id`). It
names the two players 0 and 1 and says which of them is on roll; :class:`MatchInfo`
keeps gnubg's raw player numbers (so an ID round-trips exactly, but for dice written
lower first: they are read, and written again higher first, as gnubg writes them) and
offers the cube owner and the score relative to the player on roll, the way the rest of
the engine sees a position.

Only the two backgammon-geometry games can be written this way (``backgammon`` and
``portes``): the format has a bar and assumes opposite directions of play.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from engine.errors import DiceError, NotationError, PositionError, quote
from engine.rules.dice import check_dice
from engine.rules.position import CHECKERS, Position
from engine.rules.variants import OPPOSITE, get_rules

POSITION_ID_LEN = 14
MATCH_ID_LEN = 12
_B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

# gnubg's game states (bits 9-11 of the match key)
GAME_NONE = 0
"""No game started."""
GAME_PLAYING = 1
"""A game is being played."""
GAME_OVER = 2
"""The game is over."""
GAME_RESIGNED = 3
"""The game ended by a resignation."""
GAME_DROP = 4
"""The game ended by a dropped (passed) cube."""
GAME_STATES = ("none", "playing", "over", "resigned", "drop")

_CENTRE = 3          # gnubg's raw cube owner for a centred cube
_MAX_FIELD = 0x7FFF  # 15-bit fields: match length and scores


# ----------------------------------------------------------------- base64 helpers
def _b64_key(text: object, length: int, nbytes: int, what: str) -> int:
    """Decode ``length`` base64 characters into an ``nbytes`` little-endian integer.

    Rejects anything but exactly ``length`` characters of the standard alphabet, and
    non-canonical text (unused low bits of the last character set), so that every
    accepted ID is the one gnubg itself would print.
    """
    if not isinstance(text, str):
        raise NotationError(f"{what} {quote(text)}: expected a string of {length} "
                            f"base64 characters")
    if len(text) != length or any(c not in _B64_CHARS for c in text):
        raise NotationError(f"{what} {quote(text)}: expected exactly {length} characters "
                            f"of A-Z a-z 0-9 + /")
    padded = text + "=" * (-len(text) % 4)
    try:
        data = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - alphabet checked
        raise NotationError(f"{what} {quote(text)}: not base64 ({exc})") from None
    if len(data) != nbytes or _b64_text(data) != text:
        raise NotationError(f"{what} {quote(text)}: its last character has unused bits set "
                            f"(not an ID gnubg writes)")
    return int.from_bytes(data, "little")


def _b64_text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def check_geometry(variant: str, what: str, notation: str = "a GNU Backgammon ID",
                   error: type[NotationError] = NotationError) -> None:
    """``error`` unless ``variant`` has backgammon's geometry (the sides move in opposite
    directions, with a bar), the only one the backgammon notations can write: GNU
    Backgammon's IDs, XGIDs and FIBS boards hold backgammon or portes, no other game."""
    try:
        rules = get_rules(variant)
    except ValueError as exc:
        raise error(f"{what}: {exc}") from None
    if rules.geometry != OPPOSITE or not rules.has_bar:
        raise error(f"{what}: variant {quote(variant)} cannot be written as {notation}; "
                    f"expected 'backgammon' or 'portes'")


# ----------------------------------------------------------------- Position ID
def position_key(pos: Position) -> bytes:
    """The 10-byte gnubg position key of ``pos`` (player on roll = side to move)."""
    if not isinstance(pos, Position):
        raise PositionError(f"pos = {quote(pos)}: expected a Position")
    check_geometry(pos.variant, "position_key")
    bits = 0
    n = 0
    for board, bar in ((pos.them, pos.bar[1]), (pos.me, pos.bar[0])):
        for count in (*board, bar):
            bits |= ((1 << count) - 1) << n   # `count` ones ...
            n += count + 1                    # ... then a zero
    if n > 80:
        raise PositionError(f"position has more than {CHECKERS} checkers a side on the "
                            f"board; cannot form a Position ID")
    return bits.to_bytes(10, "little")


def position_id(pos: Position) -> str:
    """The 14-character GNU Backgammon Position ID of ``pos``.

    ``pos`` is seen from the side to move, which gnubg calls the player on roll.
    """
    return _b64_text(position_key(pos))


def position_from_id(text: str, variant: str = "backgammon") -> Position:
    """The position a Position ID describes, seen from the player on roll.

    ``turns`` are ``(0, 0)``: the ID does not record them. Raises
    :class:`NotationError` for text that is not a canonical ID or describes an illegal
    position (more than 15 checkers a side, both sides on one point).
    """
    what = f"Position ID {quote(text)}"
    check_geometry(variant, what)
    key = _b64_key(text, POSITION_ID_LEN, 10, "Position ID")
    sides: list[list[int]] = [[], []]
    side = 0
    count = 0
    for i in range(80):
        if (key >> i) & 1:
            count += 1
            continue
        sides[side].append(count)
        count = 0
        if len(sides[side]) == 25:
            side += 1
            if side == 2:
                if key >> (i + 1):
                    raise NotationError(f"{what}: bits set after both players' 25 points "
                                        f"(more than {CHECKERS} checkers a side)")
                break
    if side < 2:
        raise NotationError(f"{what}: fewer than 50 point separators (more than "
                            f"{CHECKERS} checkers a side)")
    them, me = sides
    for name, pts in (("player not on roll", them), ("player on roll", me)):
        if sum(pts) > CHECKERS:
            raise NotationError(f"{what}: the {name} has {sum(pts)} checkers; expected at "
                                f"most {CHECKERS}")
    pos = Position(variant, tuple(me[:24]), tuple(them[:24]), (me[24], them[24]),
                   (CHECKERS - sum(me), CHECKERS - sum(them)))
    try:
        pos.check()
    except PositionError as exc:
        raise NotationError(f"{what}: {exc}") from None
    return pos


# ----------------------------------------------------------------- Match ID
@dataclass(frozen=True)
class MatchInfo:
    """The contents of a gnubg Match ID.

    gnubg numbers the players 0 and 1; :attr:`on_roll` says which of them the Position
    ID's "player on roll" (our side to move) is. :attr:`cube_owner` and :attr:`score` are
    relative to that player, so they read the same way as a :class:`Position`; the raw
    gnubg values are :attr:`cube_owner_raw` and :attr:`scores_raw`.
    """

    cube_value: int = 1
    """Cube value, a power of two from 1 to 32768."""
    cube_owner: str = "centre"
    """``"centre"``, ``"me"`` (the player on roll) or ``"them"``."""
    on_roll: int = 0
    """gnubg's player (0 or 1) on roll, or who rolled: the Position ID's second half."""
    crawford: bool = False
    """This game is the Crawford game."""
    game_state: int = GAME_PLAYING
    """gnubg game state: :data:`GAME_NONE` .. :data:`GAME_DROP` (see :data:`GAME_STATES`)."""
    turn: int = 0
    """gnubg's player (0 or 1) who must decide now (differs from :attr:`on_roll` while a
    double or resignation is offered to the other player)."""
    doubled: bool = False
    """A double has been offered."""
    resigned: int = 0
    """Resignation offered: 0 none, 1 single, 2 gammon, 3 backgammon."""
    dice: tuple | None = None
    """The dice rolled, higher first, or ``None`` before the roll."""
    match_length: int = 0
    """Match length in points; 0 means money play."""
    score: tuple = (0, 0)
    """Points won so far, (player on roll, opponent)."""
    jacoby: bool = True
    """Money play: the Jacoby rule is in force (newer gnubg stores its negation in key bit 66)."""

    def __post_init__(self) -> None:
        c = self.cube_value
        if isinstance(c, bool) or not isinstance(c, int) or c < 1 or c > 1 << 15 or c & (c - 1):
            raise NotationError(f"cube_value={quote(c)}: expected a power of two 1..32768")
        if self.cube_owner not in ("centre", "me", "them"):
            raise NotationError(f"cube_owner={quote(self.cube_owner)}: expected 'centre', 'me' "
                                f"or 'them'")
        for name, most in (("on_roll", 1), ("turn", 1), ("game_state", len(GAME_STATES) - 1),
                           ("resigned", 3)):
            v = getattr(self, name)
            if type(v) is not int or not 0 <= v <= most:     # not True, not 1.0
                raise NotationError(f"{name}={quote(v)}: expected an integer 0..{most}")
        for name in ("crawford", "doubled", "jacoby"):
            if not isinstance(getattr(self, name), bool):
                raise NotationError(f"{name}={quote(getattr(self, name))}: expected true or "
                                    f"false")
        if self.dice is not None:
            try:
                d = check_dice(self.dice)
            except DiceError:
                raise NotationError(f"dice={quote(self.dice)}: expected None or two dice "
                                    f"1..6") from None
            object.__setattr__(self, "dice", (max(d), min(d)))
        m = self.match_length
        if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= _MAX_FIELD:
            raise NotationError(f"match_length={quote(m)}: expected 0 (money) .. {_MAX_FIELD}")
        s = self.score
        if (not isinstance(s, tuple) or len(s) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) for x in s)
                or any(not 0 <= x <= (m or _MAX_FIELD) for x in s)):
            raise NotationError(f"score={quote(s)}: expected two scores 0..match length")
        if self.crawford and not m:
            raise NotationError("crawford=True in money play (match_length 0): there is no "
                                "Crawford game in money play")

    @property
    def cube_owner_raw(self) -> int:
        """gnubg's cube owner: 0 or 1 for a player, -1 for a centred cube."""
        if self.cube_owner == "centre":
            return -1
        return self.on_roll if self.cube_owner == "me" else 1 - self.on_roll

    @property
    def scores_raw(self) -> tuple:
        """Scores in gnubg's order, (player 0, player 1)."""
        return self.score if self.on_roll == 0 else self.score[::-1]

    @property
    def money(self) -> bool:
        """Money play (no match length)."""
        return self.match_length == 0


def match_conflict(info: MatchInfo) -> str | None:
    """What makes ``info`` a state no game reaches, or None: a double offered with the
    dice already rolled (a double comes before the roll), in the Crawford game (which
    has no cube), or by the side whose opponent owns the cube (its opponent to decide;
    after a beaver the doubler decides, the beaverer owning the cube). The key holds such
    states; the readers that act on a Match ID refuse them
    (:func:`engine.notation.parse.parse_position`, the UBGI session)."""
    if info.doubled and info.dice is not None:
        return (f"a double offered and the dice {info.dice[0]}-{info.dice[1]} rolled; a "
                f"double is offered before the roll")
    if info.doubled and info.crawford:
        return DOUBLE_IN_CRAWFORD
    if info.doubled and info.cube_owner == "them" and info.turn != info.on_roll:
        # (with the decision back on the doubler's side, the state after a beaver: the
        # beaverer owns the cube at twice its value, and the doubler answers)
        return DOUBLE_BY_NON_OWNER
    return None


DOUBLE_IN_CRAWFORD = "a double offered in the Crawford game, which has no cube"
DOUBLE_BY_NON_OWNER = ("a double offered by the side that does not own the cube (the "
                       "cube belongs to the side asked to take)")
"""What :func:`match_conflict` (and an XGID's, :func:`engine.notation.xgid.xgid_conflict`)
says of such a double."""


def match_key(info: MatchInfo) -> bytes:
    """The 9-byte gnubg match key of ``info``.

    Bits, least significant first: 0-3 log2 of the cube, 4-5 cube owner (0, 1, or 3 =
    centred), 6 player on roll, 7 Crawford, 8-10 game state, 11 player to decide, 12
    double offered, 13-14 resignation, 15-17 and 18-20 the dice (higher first, 0 = not
    rolled), 21-35 match length, 36-50 player 0's score, 51-65 player 1's score, 66 Jacoby
    *off* (newer gnubg), 67-71 unused.
    """
    if not isinstance(info, MatchInfo):
        raise NotationError(f"info = {quote(info)}: expected a MatchInfo")
    owner = info.cube_owner_raw
    d1, d2 = info.dice or (0, 0)
    s0, s1 = info.scores_raw
    fields = (
        (0, 4, info.cube_value.bit_length() - 1),
        (4, 2, _CENTRE if owner < 0 else owner),
        (6, 1, info.on_roll),
        (7, 1, int(info.crawford)),
        (8, 3, info.game_state),
        (11, 1, info.turn),
        (12, 1, int(info.doubled)),
        (13, 2, info.resigned),
        (15, 3, d1),
        (18, 3, d2),
        (21, 15, info.match_length),
        (36, 15, s0),
        (51, 15, s1),
        (66, 1, int(not info.jacoby)),
    )
    key = 0
    for at, width, value in fields:
        key |= (value & ((1 << width) - 1)) << at
    return key.to_bytes(9, "little")


def match_id(info: MatchInfo) -> str:
    """The 12-character GNU Backgammon Match ID of ``info``."""
    return _b64_text(match_key(info))


def match_from_id(text: str) -> MatchInfo:
    """Decode a Match ID, with the checks gnubg makes and a few more.

    Raises :class:`NotationError` for text that is not 12 base64 characters, a cube
    owner of 2, a game state above 4, dice of 7 or only one die rolled, a score above the
    match length, a Crawford game in money play, or reserved bits set.
    """
    what = f"Match ID {quote(text)}"
    key = _b64_key(text, MATCH_ID_LEN, 9, "Match ID")

    def bits(at: int, width: int) -> int:
        return (key >> at) & ((1 << width) - 1)

    if key >> 67:
        raise NotationError(f"{what}: reserved key bits 67-71 are set")
    owner = bits(4, 2)
    if owner == 2:
        raise NotationError(f"{what}: cube owner field is 2; expected 0, 1 or 3 (centred)")
    on_roll = bits(6, 1)
    state = bits(8, 3)
    if state >= len(GAME_STATES):
        raise NotationError(f"{what}: game state {state}; expected 0..4")
    d1, d2 = bits(15, 3), bits(18, 3)
    if d1 > 6 or d2 > 6 or (d1 == 0) != (d2 == 0):
        raise NotationError(f"{what}: dice {d1}, {d2}; expected two dice 1..6, or 0 and 0 "
                            f"before the roll")
    scores = (bits(36, 15), bits(51, 15))
    if on_roll == 1:
        scores = scores[::-1]
    try:
        return MatchInfo(
            cube_value=1 << bits(0, 4),
            cube_owner="centre" if owner == _CENTRE else ("me" if owner == on_roll else "them"),
            on_roll=on_roll,
            crawford=bool(bits(7, 1)),
            game_state=state,
            turn=bits(11, 1),
            doubled=bool(bits(12, 1)),
            resigned=bits(13, 2),
            dice=(d1, d2) if d1 else None,
            match_length=bits(21, 15),
            score=scores,
            jacoby=not bits(66, 1),
        )
    except NotationError as exc:
        raise NotationError(f"{what}: {exc}") from None


# ----------------------------------------------------------------- both together
_WORD = re.compile(r"[A-Za-z0-9+/]+")
_LABELS = frozenset({"gnu", "backgammon", "gnubg", "gnubgid", "position", "match", "id"})
"""Words of the labels GNU Backgammon prints around its IDs (``GNU Backgammon  Position
ID: ...`` / ``Match ID   : ...``, ``GNUbg ID: ...``, the GammOnLine export's ``Position
ID: ... Match Id: ...``), which its ``set gnubgid`` skips; none is 12 or 14 characters
long, so none can be taken for an ID."""


def _split_ids(text: str) -> list[str] | None:
    """The IDs in ``text``, in order: the base64 words that are not label words, when
    nothing but white space and ``:`` lies between the words; else None."""
    ids, end = [], 0
    for m in _WORD.finditer(text):
        if text[end:m.start()].strip(" \t\r\n:"):
            return None
        end = m.end()
        if m.group().lower() not in _LABELS:
            ids.append(m.group())
    if text[end:].strip(" \t\r\n:"):
        return None
    return ids


def position_from_gnubg(text: str, variant: str = "backgammon"
                        ) -> tuple[Position, MatchInfo | None]:
    """Read ``"PositionID:MatchID"`` or a bare ``"PositionID"`` (gnubg's "GNUbg ID").

    The Match ID may also follow after white space, and the labels GNU Backgammon
    prints around the IDs may stay (``GNU Backgammon  Position ID: P`` / ``Match ID   :
    M`` as its board shows them, ``Position ID: P Match Id: M`` as its GammOnLine export
    writes them): its ``set gnubgid`` reads all of these.

    Returns the position, seen from the player on roll, and the :class:`MatchInfo`
    (``None`` when no Match ID is given). The Match ID's dice, when rolled, are the side
    to move's dice; its :attr:`MatchInfo.on_roll` says which gnubg player that side is.
    """
    if not isinstance(text, str):
        raise NotationError(f"GNUbg ID {quote(text)}: expected a string")
    ids = _split_ids(text)
    if not ids or len(ids) > 2:
        raise NotationError(f"GNUbg ID {quote(text)}: expected 'PositionID:MatchID' "
                            f"(14 + 12 base64 characters) or a 14-character Position ID")
    pos = position_from_id(ids[0], variant)
    info = match_from_id(ids[1]) if len(ids) == 2 else None
    return pos, info


def format_gnubg(pos: Position, info: MatchInfo | None = None) -> str:
    """``"PositionID:MatchID"``, or the bare Position ID when ``info`` is ``None``."""
    if info is not None and not isinstance(info, MatchInfo):
        raise NotationError(f"info = {quote(info)}: expected a MatchInfo or None")
    pid = position_id(pos)
    return pid if info is None else f"{pid}:{match_id(info)}"
