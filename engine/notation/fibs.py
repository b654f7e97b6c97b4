"""FIBS board strings (``board:...``), the board state FIBS sends its clients and GNU
Backgammon sends its external players, read field by field and written back as they were.

A board string is ``board:`` followed by 52 fields separated by ``:``, two names then 50
integers (FIBS's "boardstyle 3"; GNU Backgammon writes the same layout in ``FIBSBoard``):

======  ==================  =====================================================
field   name                meaning
======  ==================  =====================================================
1       ``player``          the player's name ("You" on FIBS)
2       ``opponent``        the opponent's name
3       ``match_length``    match length; 9999 (FIBS) or 0 (GNU Backgammon): money
4       ``score``           the player's points in the match
5       ``opponent_score``  the opponent's points
6-31    ``board``           26 numbers, positions 0..25: positive counts are O's
                            checkers, negative X's; positions 0 and 25 are the bars
32      ``turn``            -1: X to play, 1: O to play, 0: the game is over
33-34   ``dice``            the player's dice (0, 0 before the roll)
35-36   ``opponent_dice``   the opponent's dice
37      ``cube``            the cube's value
38      ``may_double``      1 if the player may double
39      ``opponent_may_double``  the same for the opponent
40      ``was_doubled``     1 if a double has just been offered (GNU Backgammon also
                            writes -1: a double by the other side)
41      ``colour``          the player's colour: -1 X, 1 O
42      ``direction``       the player's direction: -1 from 24 to 1, 1 from 1 to 24
43      ``home``            0 or 25: where the player bears off (0 with direction -1)
44      ``bar``             25 or 0: the player's bar (25 with direction -1)
45      ``on_home``         the player's checkers borne off
46      ``opponent_on_home``  the opponent's
47      ``on_bar``          the player's checkers on the bar (GNU Backgammon writes 0;
                            the bar positions of ``board`` are what counts)
48      ``opponent_on_bar``  the opponent's
49      ``can_move``        how many checkers the player can move (0..4)
50      ``forced_move``     unused by FIBS clients
51      ``did_crawford``    FIBS: the Crawford game has been played; GNU Backgammon: 1
                            after the Crawford game (post-Crawford)
52      ``redoubles``       FIBS: instant redoubles left (unlimited matches); GNU
                            Backgammon: 1 when this game is not the Crawford game
======  ==================  =====================================================

A side of colour ``c`` owns the board entries of sign ``c``. The side whose direction is
-1 numbers its points as the board does (own point ``p`` is position ``p``), its bar is
position 25 and it bears off to 0; the side of direction +1 sees own point ``p`` at
position ``25 - p``, its bar at 0. Checkers missing from 15 are borne off, and the
``on_home`` fields must say so.

:func:`parse_fibs_board` reads a string into a :class:`FibsBoard` (every field, checked:
:class:`~engine.errors.FibsBoardError` names the field and what it holds);
:meth:`FibsBoard.text` writes it back exactly. :meth:`FibsBoard.view` reads the game
out of it: the position seen from the side on roll, the dice, the cube, the score and
whether this is the Crawford game (:class:`FibsView`), and who must decide what.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import FibsBoardError, PositionError, quote
from engine.notation.gnubg_id import check_geometry
from engine.rules.position import CHECKERS, Position

PREFIX = "board:"
UNLIMITED = 9999
"""FIBS's match length of an unlimited (money) session."""
N_INTS = 50
"""Integer fields after the two names."""
_INT = re.compile(r"[-+]?[0-9]{1,6}")

SCORE_CONVENTIONS = ("fibs", "gnubg")
"""Whose points the two score fields hold. ``"fibs"``: the player's and the opponent's,
as FIBS defines them. ``"gnubg"``: as GNU Backgammon 1.07's external-player code writes
them (``play.c``): the two fields follow its players 0 and 1 (fields 4 and 5 name its
player 0 and player 1 except while a double is offered, when they name player 1 and
player 0), while the board is always written from its player 1's side (colour 1, O)."""


@dataclass(frozen=True)
class FibsBoard:
    """Every field of a FIBS board string, as written (see the module's table)."""

    player: str
    opponent: str
    match_length: int
    score: int
    opponent_score: int
    board: tuple
    """26 signed counts, positions 0..25."""
    turn: int
    dice: tuple
    opponent_dice: tuple
    cube: int
    may_double: bool
    opponent_may_double: bool
    was_doubled: int
    colour: int
    direction: int
    home: int
    bar: int
    on_home: int
    opponent_on_home: int
    on_bar: int
    opponent_on_bar: int
    can_move: int
    forced_move: int
    did_crawford: int
    redoubles: int

    # ----------------------------------------------------------------- views
    @property
    def money(self) -> bool:
        """A money session (match length 0 or FIBS's 9999)."""
        return self.match_length in (0, UNLIMITED)

    @property
    def length(self) -> int:
        """Match length, 0 for money."""
        return 0 if self.money else self.match_length

    def direction_of(self, colour: int) -> int:
        """The direction of the side of ``colour``."""
        return self.direction if colour == self.colour else -self.direction

    def bar_of(self, colour: int) -> int:
        """The board position of the bar of the side of ``colour`` (25 or 0)."""
        return 25 if self.direction_of(colour) < 0 else 0

    def checkers(self, colour: int) -> tuple[tuple, int]:
        """The side of ``colour``'s checkers on its own points 1..24, and on its bar."""
        back = self.direction_of(colour) > 0
        own = tuple(max(0, colour * self.board[25 - p if back else p]) for p in range(1, 25))
        return own, max(0, colour * self.board[self.bar_of(colour)])

    def borne_off(self, colour: int) -> int:
        """Checkers of ``colour`` missing from the board and the bar."""
        own, bar = self.checkers(colour)
        return CHECKERS - sum(own) - bar

    def position(self, colour: int, variant: str = "backgammon") -> Position:
        """The checkers seen from the side of ``colour`` (``turns`` 0, 0)."""
        if type(colour) is not int or colour not in (-1, 1):
            raise FibsBoardError(f"colour = {quote(colour)}: expected -1 (X) or 1 (O)")
        check_geometry(variant, f"board {quote(self.text())}", "a FIBS board", FibsBoardError)
        me, my_bar = self.checkers(colour)
        them, their_bar = self.checkers(-colour)
        pos = Position(variant, me, them, (my_bar, their_bar),
                       (self.borne_off(colour), self.borne_off(-colour)))
        try:
            pos.check()
        except PositionError as exc:
            raise FibsBoardError(f"board {quote(self.text())}: {exc}") from None
        return pos

    def text(self) -> str:
        """The board string, field for field as read."""
        ints = [self.match_length, self.score, self.opponent_score, *self.board, self.turn,
                *self.dice, *self.opponent_dice, self.cube, int(self.may_double),
                int(self.opponent_may_double), self.was_doubled, self.colour,
                self.direction, self.home, self.bar, self.on_home, self.opponent_on_home,
                self.on_bar, self.opponent_on_bar, self.can_move, self.forced_move,
                self.did_crawford, self.redoubles]
        return PREFIX + ":".join([self.player, self.opponent, *map(str, ints)])

    def __str__(self) -> str:
        return self.text()

    def view(self, scores: str = "fibs", variant: str = "backgammon") -> "FibsView":
        """The game the board describes, from the side on roll (:class:`FibsView`).

        ``scores`` says whose points fields 4 and 5 hold (:data:`SCORE_CONVENTIONS`).
        Raises :class:`FibsBoardError` for a finished game (``turn`` 0) or a cube the
        fields cannot describe."""
        if scores not in SCORE_CONVENTIONS:
            raise FibsBoardError(f"scores = {quote(scores)}: expected one of "
                                 f"{list(SCORE_CONVENTIONS)}")
        what = f"board {quote(self.text())}"
        if self.turn == 0:
            raise FibsBoardError(f"{what}: turn 0, the game is over; no decision to make")
        mover = self.turn                       # colour on roll
        # both may-double flags 0 read as a double on offer (module docs), but FIBS also
        # writes the Crawford game so, with the cube at 1 (GNU Backgammon's boards of
        # the Crawford game set both flags)
        fibs_crawford = (self.cube == 1 and self.was_doubled == 0 and bool(self.length)
                         and self.length - 1 in (self.score, self.opponent_score)
                         and self.score != self.opponent_score
                         and not (self.did_crawford or self.redoubles))
        doubled = self.was_doubled != 0 or (not self.may_double and not self.opponent_may_double
                                            and not fibs_crawford)
        # dice: the mover's, in whichever slot they were written
        mover_dice = self.dice if mover == self.colour else self.opponent_dice
        other = self.opponent_dice if mover == self.colour else self.dice
        dice = mover_dice if mover_dice[0] else other
        if doubled and dice[0]:
            raise FibsBoardError(f"{what}: a double offered after the roll (dice "
                                 f"{dice[0]}-{dice[1]})")
        flags = {self.colour: self.may_double, -self.colour: self.opponent_may_double}
        # a beaver: the side on roll doubled, its opponent took and turned the cube
        # again at once, and owns it; the side on roll answers (GNU Backgammon's play.c
        # then asks the doubler: fMove = fTurn, the cube owned by the other side, which
        # alone may double: a turned cube is redoubled only by its owner, so only a
        # beaver leaves the doubler on roll without the cube)
        beavered = bool(doubled and not self.length and self.cube > 1 and not flags[mover]
                        and flags[-mover])            # beavers: money play only
        # the cube, relative to the side on roll
        if self.cube == 1:
            owner = "centre"
        elif beavered:
            owner = "them"
        elif doubled:
            owner = "me"                        # a turned cube is redoubled by its owner
        else:
            if flags[mover] == flags[-mover]:
                raise FibsBoardError(f"{what}: cube {self.cube} with both may-double flags "
                                     f"{int(flags[mover])}; a turned cube has one owner")
            owner = "me" if flags[mover] else "them"
        # the score, relative to the side on roll
        if scores == "fibs":
            slot_one = self.colour
        else:
            slot_one = self.colour if doubled and not beavered else -self.colour
        points = {slot_one: self.score, -slot_one: self.opponent_score}
        score = (points[mover], points[-mover])
        length = self.length
        crawford = post = False
        if length:
            if length - 1 in score and score[0] != score[1]:
                crawford = not (self.did_crawford or self.redoubles)
                post = not crawford
            elif length - 1 in score:
                post = length > 1           # both 1-away: never the Crawford game
        names = {self.colour: self.player, -self.colour: self.opponent}
        if scores == "gnubg":
            names = {slot_one: self.player, -slot_one: self.opponent}
        return FibsView(self, self.position(mover, variant), mover,
                        "beaver" if beavered else "take" if doubled
                        else ("move" if dice[0] else "cube"),
                        (dice[0], dice[1]) if dice[0] else None, self.cube, owner,
                        length, score, crawford, post, (names[mover], names[-mover]))


@dataclass(frozen=True)
class FibsView:
    """The game of a :class:`FibsBoard`, from the side on roll."""

    board: FibsBoard
    """The board it was read from."""
    position: Position
    """The checkers seen from the side on roll (``turns`` 0, 0)."""
    on_roll: int
    """The colour on roll (-1 X, 1 O)."""
    decision: str
    """What is asked: ``"move"`` (the side on roll has rolled ``dice``), ``"cube"`` (the
    side on roll, before its roll: double or roll), ``"take"`` (its opponent, offered
    a double: take, drop or beaver) or ``"beaver"`` (the side on roll doubled and was
    beavered: it takes the cube at twice ``cube``, owned by the opponent, or drops,
    losing ``cube`` points)."""
    dice: tuple | None
    """The dice of the side on roll, higher first as written, or None before the roll."""
    cube: int
    """The cube's value (before the double on offer, if any)."""
    owner: str
    """``"centre"``, ``"me"`` (the side on roll) or ``"them"``."""
    match_length: int
    """0 for money."""
    score: tuple
    """Points, (side on roll, opponent); (0, 0) in money play is what is written."""
    crawford: bool
    """This game is the Crawford game."""
    post_crawford: bool
    """A player is 1-away and the Crawford game has been played."""
    names: tuple
    """Names, (side on roll, opponent)."""


def parse_fibs_board(text: object) -> FibsBoard:
    """Read a FIBS board string (``board:`` then 52 ``:``-separated fields; see the
    module's table). Surrounding white space and NUL bytes (GNU Backgammon sends one
    after each line) are ignored; anything else out of place raises
    :class:`FibsBoardError` naming the field."""
    if not isinstance(text, str):
        raise FibsBoardError(f"board {quote(text)}: expected a string 'board:...'")
    body = text.strip(" \t\r\n\x00")
    what = f"board {quote(body)}"
    if not body.startswith(PREFIX):
        raise FibsBoardError(f"{what}: expected it to start with {PREFIX!r}")
    parts = body[len(PREFIX):].split(":")
    if len(parts) != 2 + N_INTS:
        raise FibsBoardError(f"{what}: {len(parts)} fields after {PREFIX!r}; expected 52 "
                             f"(two names and {N_INTS} integers)")
    names, raw = parts[:2], parts[2:]
    for label, name in zip(("player", "opponent"), names):
        if not name or any(c.isspace() for c in name):
            raise FibsBoardError(f"{what}: {label} name {quote(name)}: expected a "
                                 f"non-empty name without spaces")
    labels = _INT_LABELS
    nums = []
    for label, field in zip(labels, raw):
        if not _INT.fullmatch(field):
            long = re.fullmatch(r"[-+]?[0-9]+", field) is not None
            raise FibsBoardError(f"{what}: field {label} = {quote(field)}: expected an "
                                 f"integer{' of at most 6 digits' if long else ''}")
        nums.append(int(field))
    v = dict(zip(labels, nums))

    def bad(label: str, expected: str) -> FibsBoardError:
        return FibsBoardError(f"{what}: field {label} = {v[label]}: expected {expected}")

    m = v["match_length"]
    if m < 0:
        raise bad("match_length", "0 or 9999 (money) or a match length")
    for label in ("score", "opponent_score"):
        if v[label] < 0 or (m not in (0, UNLIMITED) and v[label] >= m):
            raise bad(label, f"a score 0..{m - 1} of the match to {m}" if m not in
                      (0, UNLIMITED) else "a score 0 or more")
    board = tuple(v[f"board[{i}]"] for i in range(26))
    for i, n in enumerate(board):
        if abs(n) > CHECKERS:
            raise bad(f"board[{i}]", f"a count -15..15")
    for colour in (1, -1):
        total = sum(colour * n for n in board if colour * n > 0)
        if total > CHECKERS:
            raise FibsBoardError(f"{what}: {'O' if colour > 0 else 'X'} has {total} "
                                 f"checkers on the board; expected at most {CHECKERS}")
    if v["turn"] not in (-1, 0, 1):
        raise bad("turn", "-1 (X), 1 (O) or 0 (game over)")
    for a, b in (("dice[0]", "dice[1]"), ("opponent_dice[0]", "opponent_dice[1]")):
        if not (0 <= v[a] <= 6 and 0 <= v[b] <= 6 and (v[a] == 0) == (v[b] == 0)):
            raise FibsBoardError(f"{what}: fields {a}, {b} = {v[a]}, {v[b]}: expected two "
                                 f"dice 1..6, or 0, 0 before the roll")
    c = v["cube"]
    if c < 1 or c & (c - 1):
        raise bad("cube", "a power of two 1, 2, 4, ...")
    for label in ("may_double", "opponent_may_double"):
        if v[label] not in (0, 1):
            raise bad(label, "0 or 1")
    if v["was_doubled"] not in (-1, 0, 1):
        raise bad("was_doubled", "0 or 1 (GNU Backgammon: -1, 0 or 1)")
    if v["colour"] not in (-1, 1):
        raise bad("colour", "-1 (X) or 1 (O)")
    if v["direction"] not in (-1, 1):
        raise bad("direction", "-1 (24 to 1) or 1 (1 to 24)")
    home, bar = (0, 25) if v["direction"] < 0 else (25, 0)
    if v["home"] != home:
        raise bad("home", f"{home} with direction {v['direction']}")
    if v["bar"] != bar:
        raise bad("bar", f"{bar} with direction {v['direction']}")
    colour = v["colour"]
    if board[bar] * colour < 0:
        raise bad(f"board[{bar}]", f"the player's bar, checkers of colour {colour} or 0")
    if board[home] * colour > 0:
        raise bad(f"board[{home}]", f"the opponent's bar, checkers of colour {-colour} or 0")
    for label, col in (("on_home", colour), ("opponent_on_home", -colour)):
        off = CHECKERS - sum(col * n for n in board if col * n > 0)
        if v[label] != off:
            raise bad(label, f"{off}: the checkers of colour {col} missing from the board")
    for label, hi in (("on_bar", CHECKERS), ("opponent_on_bar", CHECKERS), ("can_move", 4)):
        if not 0 <= v[label] <= hi:
            raise bad(label, f"0..{hi}")
    for label in ("forced_move", "did_crawford", "redoubles"):
        if v[label] < 0:
            raise bad(label, "0 or more")
    return FibsBoard(
        names[0], names[1], m, v["score"], v["opponent_score"], board, v["turn"],
        (v["dice[0]"], v["dice[1]"]), (v["opponent_dice[0]"], v["opponent_dice[1]"]), c,
        bool(v["may_double"]), bool(v["opponent_may_double"]), v["was_doubled"], colour,
        v["direction"], v["home"], v["bar"], v["on_home"], v["opponent_on_home"],
        v["on_bar"], v["opponent_on_bar"], v["can_move"], v["forced_move"],
        v["did_crawford"], v["redoubles"])


_INT_LABELS = ("match_length", "score", "opponent_score", *(f"board[{i}]" for i in range(26)),
               "turn", "dice[0]", "dice[1]", "opponent_dice[0]", "opponent_dice[1]", "cube",
               "may_double", "opponent_may_double", "was_doubled", "colour", "direction",
               "home", "bar", "on_home", "opponent_on_home", "on_bar", "opponent_on_bar",
               "can_move", "forced_move", "did_crawford", "redoubles")
assert len(_INT_LABELS) == N_INTS


def gnubg_board(position: Position, *, on_roll_is_o: bool, names=("O", "X"),
                match_length: int = 0, score=(0, 0), dice=None, cube: int = 1,
                owner: str = "centre", doubled: bool = False, crawford: bool = False,
                post_crawford: bool = False) -> FibsBoard:
    """The board GNU Backgammon 1.07 sends its external player for ``position`` (seen
    from the side on roll), written its way: O (colour 1, direction -1, positive counts)
    is its player 1, X its player 0; ``on_roll_is_o`` says which of them is on roll.
    ``score``, ``owner`` are relative to the side on roll; ``names`` are (O, X). The
    score and name fields follow GNU Backgammon's players as its ``play.c`` writes them
    (:data:`SCORE_CONVENTIONS`, ``"gnubg"``). For tests and for reading logs.

    Raises :class:`FibsBoardError` for a name the board string cannot hold (empty, or
    with a space or the field separator ``:``, so that :func:`parse_fibs_board` reads
    back what was written) and for an unknown ``owner``."""
    if not isinstance(position, Position):
        raise FibsBoardError(f"position {quote(position)}: expected a Position")
    check_geometry(position.variant, "gnubg_board", "a FIBS board", FibsBoardError)
    if not isinstance(names, (tuple, list)) or len(names) != 2:
        raise FibsBoardError(f"names = {quote(names)}: expected two names (O, X)")
    for label, name in zip(("names[0]", "names[1]"), names):
        if not isinstance(name, str) or not name or ":" in name \
                or any(c.isspace() for c in name):
            raise FibsBoardError(f"{label} = {quote(name)}: expected a non-empty name "
                                 f"without spaces or ':' (the board's field separator)")
    if owner not in ("centre", "me", "them"):
        raise FibsBoardError(f"owner = {quote(owner)}: expected 'centre', 'me' or 'them'")
    roll = 1 if on_roll_is_o else -1
    o_view = position if on_roll_is_o else position.flip()
    board = [0] * 26
    board[0] = -o_view.bar[1]
    board[25] = o_view.bar[0]
    for p in range(1, 25):
        if o_view.me[p - 1]:
            board[p] = o_view.me[p - 1]
        if o_view.them[25 - p - 1]:
            board[p] = -o_view.them[25 - p - 1]
    pts = {roll: score[0], -roll: score[1]}
    # a double on offer: GNU Backgammon's player to answer, not the one on roll, in
    # field 4; a beaver (doubled, the opponent's cube) is answered by the one on roll
    slot_one = 1 if doubled and owner != "them" else -1
    raw_owner = {"centre": None, "me": roll, "them": -roll}[owner]
    d = tuple(dice) if dice else (0, 0)
    name = {1: names[0], -1: names[1]}
    return FibsBoard(
        name[slot_one], name[-slot_one], match_length, pts[slot_one], pts[-slot_one],
        tuple(board), roll, d, d, cube, raw_owner != -1, raw_owner != 1, int(doubled), 1, -1,
        0, 25, o_view.off[0], o_view.off[1], 0, 0, 0, 0, int(post_crawford),
        int(not crawford))
