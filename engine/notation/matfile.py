"""Match files in the Jellyfish ``.mat`` format, the text GNU Backgammon, eXtreme Gammon
and most servers export a backgammon match or money session in: read into a
:class:`MatchRecord`, replayed (:func:`replay`) into the decisions each player made,
each with the position, the dice and the cube and score it was made at, and written
(:func:`format_mat`, the plays by :func:`played_action`).

The format, as GNU Backgammon 1.07 writes it::

    ; [Player 1 "Alice"]                 header lines (optional): ; [Key "value"]
     5 point match                       the length; 0: money play (a session)

     Game 1
     Alice : 0                     Bob : 0          the score before the game
      1)                             21: 13/11 24/23
      2) 52: 13/8 24/22              63: 8/5 11/5
      3)  Doubles => 2                Takes
      ...
      9) 51: 1/0 5/0
          Wins 2 points

Each numbered line holds the first player's action (the left column) and then the
second's (the right column): a roll and its play (``52: 13/8 24/22``; the points in the
mover's own numbering, 25 the bar, 0 off, ``*`` a hit; nothing after the roll when no
checker can move), ``Doubles => 2``, ``Takes``, ``Drops``, ``Beavers => 4``, ``Wins N
point(s) [and the match]``; a second beaver (a raccoon) is read and not rated (the cube
then stays with the side not on roll, as GNU Backgammon has it), and so is ``Drops``
after a beaver or raccoon (its maker wins the cube before it, as GNU Backgammon allows).
A game a resignation ends scores one, two or three times the cube, and a game starts at
the score the one before it left. A file is read as UTF-8 (a byte-order mark dropped),
UTF-16 with its byte-order mark, else Latin-1. A line
with one action puts it in its column: the right one starts under the second player's
name in the score line, by column 33 (GNU Backgammon's files). A roll written with no
play where the roll has one (or ``Cannot Move`` after it) is a roll not played: the file
was written, or the game resigned, after it (GNU Backgammon rolls a new game's opening
at once); a double left on offer where the file ends leaves the game unfinished too.
Other programs' files are read as GNU Backgammon's ``import mat`` reads them: a roll with
no play written where it has one legal play is that play (GridGammon leaves forced plays
out; not a game's last roll, unless the play ends the game: that is a roll not played), ``42: ????`` is a roll not played (eXtreme Gammon), Backgammon Galaxy's ``Losses 1
point`` and a ``Resigns`` are passed over, as is a line of a number alone (Backgammon
Studio), a rating after a name (``nori,1749``) is dropped, and the file's last game, where
it ends the match, may be written at fewer points than it is worth (the match length), or
by a resignation at more (the points the match needed, 100); a first game at one point from the match with a double in it is
after the Crawford game (a file starting in the middle of a match). The header keys read: ``Jacoby``, ``Beaver`` and ``Crawford`` (``"On"`` /
``"Off"``), ``CubeLimit``, ``Variation`` (only backgammon is played here), ``Player 1`` /
``Player 2``.

:func:`replay` plays every action on the board with the engine's own move generation
(:func:`engine.notation.movetext.parse_move`): a play the dice do not allow, an action
out of turn or a double the cube does not allow is a :class:`MatFileError` naming the
line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from engine.errors import MoveError, NotationError, quote
from engine.notation.movetext import (
    NO_MOVE,
    format_move,
    gnu_ending,
    jellyfish_move,
    parse_move,
)
from engine.rules.position import Position
from engine.rules.scoring import result

MAX_LINE = 4096
"""The longest line of a game (its ``Game`` line, score line and plays) that
:func:`parse_mat` reads, its tabs as 8 spaces each: GNU Backgammon writes lines under 80
characters; a megabyte line of tabs took the action patterns 7.8 s, holding a web
board's other sessions meanwhile. The header, comment (``;``) and match length lines are
read in one pass and have no limit but the file's."""
MAX_BYTES = 16 << 20
"""The largest match file read (16 MiB; a long session of hundreds of games is well
under 1 MiB)."""

MAX_LENGTH = 64
"""The longest match read: GNU Backgammon's, and the engine's with the cube
(:data:`engine.cube.computed_met.MAX_LENGTH`)."""

KINDS = ("roll", "double", "take", "drop", "beaver", "win")
"""What an :class:`Action` may be."""

_LENGTH = re.compile(r"^\s*([0-9]{1,9})\s+point\s+match\s*$", re.I)
_GAME = re.compile(r"^\s*Game\s+([0-9]{1,9})\s*$", re.I)
_NUMBER = re.compile(r"[0-9]{1,9}")
"""A number of a match file. Numbers are read up to nine digits here and below (a
longer one is no number the file can mean, and Python will not convert thousands of
digits)."""
_COLON_NUMBER = re.compile(r":\s*([0-9]+)\s*")
"""A colon of a score line and the number after it (:func:`_score_line`)."""
_CANNOT_MOVE = re.compile(r"\bcannot\s+move\b", re.I)
"""What some programs write after a roll with no legal play."""
_UNPLAYED = re.compile(r"(?<=[1-6][1-6]:)\s*\?{3,4}")
"""What eXtreme Gammon writes after a roll not played (the game resigned after it):
``42: ????``, read as no play written, as GNU Backgammon reads it."""
_NOT_READ = re.compile(r"\bLosses\s+[0-9]{1,9}\s+points?\b|\bResign(?:s|ed\s+(?:Game|Match))\b",
                       re.I)
"""Words some programs write that GNU Backgammon's import passes over: Backgammon
Galaxy's ``Losses 2 point`` in the loser's column (its ``Wins`` line follows), a
resignation's ``Resigns`` or ``Resigned Game`` (the ``Wins`` after it ends the game)."""
_ILLEGAL_PLAY = re.compile(r"\billegal\s+play\b", re.I)
"""Snowie's ``Illegal play (...)``: a position set by hand in the middle of a game."""
_NUMBERED = re.compile(r"^\s*([0-9]{1,9})\)(.*)$")
_ACTION = re.compile(
    r"(?P<roll>\b(?P<d1>[1-6])(?P<d2>[1-6]):(?P<move>(?:\s*(?:(?:[0-9]{1,2}|bar)/"
    r"(?:[0-9]{1,2}|off)\*?(?:/(?:[0-9]{1,2}|off)\*?)*(?:\([0-9]\))?))*))"
    r"|(?P<double>\bDoubles\s*=>\s*(?P<value>[0-9]{1,9}))"
    r"|(?P<beaver>\bBeavers\s*=>\s*(?P<bvalue>[0-9]{1,9}))"
    r"|(?P<take>\bTakes\b)|(?P<drop>\bDrops\b)"
    r"|(?P<win>\bWins\s+(?P<points>[0-9]{1,9})\s+points?(?P<match>\s+and\s+the\s+match)?)",
    re.I)
_RATING = re.compile(r",\s*0*[1-9][0-9]{0,8}(?:\.[0-9]{0,9})?$")
"""A rating after a player's name on the score line (GridGammon's ``nori,1749``), which
GNU Backgammon's import drops from the name."""
RIGHT_COLUMN = 33
"""Where GNU Backgammon's files start the second player's column; a file's own score
line (the second name's column) overrides it."""


class MatFileError(NotationError):
    """A match file that is not one, or whose actions cannot have been played."""

    code = "invalid_match_file"


@dataclass(frozen=True)
class Action:
    """One action of a game, as the file has it."""

    player: int
    """0: the first player (the left column), 1: the second."""
    kind: str
    """One of :data:`KINDS`."""
    line: int
    """The line of the file it is on (from 1)."""
    dice: tuple | None = None
    """A roll's dice, as written (``52``: (5, 2))."""
    move: str = ""
    """A roll's play as written (``13/8 24/22``; empty when no checker could move)."""
    value: int = 0
    """A double's or beaver's new cube value, a win's points."""
    number: int = 0
    """The move number of its line (``12)``: 12), 0 on a line without one."""


@dataclass(frozen=True)
class GameRecord:
    """One game of a match file."""

    number: int
    """Its number in the file (``Game 3``: 3)."""
    score: tuple
    """The players' scores before it (first, second)."""
    actions: tuple
    """Its :class:`Action` values in the order they were made."""
    line: int
    """The line of its ``Game`` heading."""
    crawford: bool | None = None
    """Whether it is the Crawford game, where the file says so (GNU Backgammon's SGF);
    None where the scores tell (:func:`crawford_games`)."""

    @property
    def winner(self) -> int | None:
        """The player of its ``Wins`` action, None for a game the file leaves unfinished."""
        wins = [a for a in self.actions if a.kind == "win"]
        return wins[-1].player if wins else None

    @property
    def points(self) -> int:
        """The points its ``Wins`` action gives (0 unfinished)."""
        wins = [a for a in self.actions if a.kind == "win"]
        return wins[-1].value if wins else 0


@dataclass(frozen=True)
class MatchRecord:
    """A match file read: its length (0: money play), the players, the header, the games."""

    length: int
    players: tuple
    """The two players' names (first, second), from the score lines or the header."""
    games: tuple
    header: dict = field(default_factory=dict)
    """Every ``; [Key "value"]`` line, keys as written."""

    def flag(self, key: str, default: bool) -> bool:
        """A header's ``"On"`` / ``"Off"`` (``Jacoby``, ``Beaver``, ``Crawford``), else
        ``default``."""
        for k, v in self.header.items():
            if k.lower() == key.lower():
                text = v.strip().lower()
                if text in ("on", "yes", "true", "1"):
                    return True
                if text in ("off", "no", "false", "0"):
                    return False
                raise MatFileError(f"header {k} {quote(v)}: expected \"On\" or \"Off\"")
        return default

    def cube_limit(self) -> int | None:
        """The header's ``CubeLimit`` (XG: 1 for cubeless play), else None."""
        for k, v in self.header.items():
            if k.lower() == "cubelimit":
                if not v.strip().isdigit() or int(v) < 1 or int(v) & (int(v) - 1):
                    raise MatFileError(f"header CubeLimit {quote(v)}: expected a power of "
                                       f"two (1 for cubeless play)")
                return int(v)
        return None


def read_mat(path: str | Path) -> MatchRecord:
    """The match file at ``path`` (:func:`parse_mat`)."""
    return read_with(path, parse_mat)


def read_with(path: str | Path, parse) -> MatchRecord:
    """The file at ``path`` (:func:`read_text`) read by ``parse``, its name in every
    error."""
    text = read_text(path)
    try:
        return parse(text)
    except MatFileError as exc:
        raise MatFileError(f"{path}: {exc}") from None


def read_text(path: str | Path) -> str:
    """The text of the match file at ``path`` (at most :data:`MAX_BYTES`; UTF-8, a
    byte-order mark dropped, else Latin-1), its name in every error.

    A file's size refuses a large one before it is read; what is read stops one byte
    past the limit all the same, for a pipe or a device (``/dev/zero``) has size 0 and
    would otherwise be read until memory ran out."""
    p, name = Path(path), str(path)         # the name as given, in every message
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise MatFileError(f"{name}: {size:,} bytes; a match file is read up to "
                               f"{MAX_BYTES:,}")
        with p.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise MatFileError(f"{name}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise MatFileError(f"{name}: more than {MAX_BYTES:,} bytes; a match file is read "
                           f"up to {MAX_BYTES:,}")
    try:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):   # UTF-16, as some Windows programs write
            return data.decode("utf-16")
        return data.decode("utf-8-sig")     # a byte-order mark, as some editors write
    except UnicodeDecodeError:
        return data.decode("latin-1")     # names written by older programs


def parse_mat(text: str) -> MatchRecord:
    """A match file's text read into a :class:`MatchRecord` (its syntax only:
    :func:`replay` checks that the actions can be played)."""
    if not isinstance(text, str):
        raise MatFileError(f"text {quote(text)}: expected the file's text (a str)")
    header: dict = {}
    length: int | None = None
    games: list = []
    players: tuple | None = None
    right = RIGHT_COLUMN
    current: dict | None = None

    def close() -> None:
        if current is not None:
            games.append(GameRecord(current["number"], current["score"],
                                    tuple(current["actions"]), current["line"]))

    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip().replace("\t", " " * 8)
        if not line.strip():
            continue
        if line.lstrip().startswith(";"):
            pair = _header_line(line.strip())
            if pair:
                header[pair[0]] = pair[1]
            continue
        if length is None:
            m = _LENGTH.match(line)
            if not m:
                raise MatFileError(f"line {n}: {quote(line.strip())}: expected the match "
                                   f"length first (' 5 point match'; 0 for money play)")
            length = int(m.group(1))
            if length > MAX_LENGTH:
                raise MatFileError(f"line {n}: a {length}-point match: expected a length "
                                   f"up to {MAX_LENGTH} (0 for money play)")
            continue
        if len(line) > MAX_LINE:
            raise MatFileError(f"line {n}: {len(line):,} characters (tabs as 8 spaces): "
                               f"expected at most {MAX_LINE:,} in a game's line")
        m = _GAME.match(line)
        if m:
            close()
            current = {"number": int(m.group(1)), "score": None, "actions": [], "line": n}
            continue
        if current is None:
            raise MatFileError(f"line {n}: {quote(line.strip())}: expected 'Game 1'")
        if current["score"] is None:
            read = _score_line(line)
            if read is None:
                raise MatFileError(f"line {n}: {quote(line.strip())}: expected the score "
                                   f"line ('Alice : 0    Bob : 0')")
            first, second, score, second_at = read
            if length and max(score) >= length:
                raise MatFileError(f"line {n}: score {list(score)} in a {length}-point "
                                   f"match: each score must be 0 .. {length - 1} before "
                                   f"a game")
            current["score"] = score
            if players is None:     # GridGammon's 'nori,1749': a rating after the name
                players = tuple(_RATING.sub("", name) for name in (first, second))
            # the second column starts near its name, and by column 33 (a long first
            # name pushes the second name right, not the column)
            right = min(second_at - 2, RIGHT_COLUMN)
            continue
        m = _NUMBERED.match(line)
        if m and not m.group(2).strip():
            continue        # a number and nothing after it (Backgammon Studio's last line)
        body_start = m.start(2) if m else 0
        body = m.group(2) if m else line
        if _ILLEGAL_PLAY.search(body):
            raise MatFileError(f"line {n}: {quote(line.strip())}: an illegal play (Snowie's "
                               f"position set by hand in the middle of a game): not read "
                               f"here; every game is replayed from its opening")
        for pattern in (_CANNOT_MOVE, _UNPLAYED, _NOT_READ):
            body = pattern.sub(lambda x: " " * len(x.group(0)), body)
        if not body.strip():
            continue        # only words passed over (a loser's 'Losses 1 point')
        found = list(_ACTION.finditer(body))
        rest = _ACTION.sub("", body).strip()
        if rest or not found:
            raise MatFileError(f"line {n}: {quote(line.strip())}: expected actions "
                               f"('52: 13/8 24/22', 'Doubles => 2', 'Takes', 'Drops', "
                               f"'Beavers => 4', 'Wins 1 point')")
        if len(found) > 2:
            raise MatFileError(f"line {n}: {quote(line.strip())}: more than two actions")
        for k, a in enumerate(found):
            column = body_start + a.start()
            player = k if len(found) == 2 else int(column >= right)
            current["actions"].append(_action(a, player, n, int(m.group(1)) if m else 0))
    close()
    if length is None:
        raise MatFileError("no match length (' 5 point match'): not a match file")
    if not games:
        raise MatFileError("no games ('Game 1'): not a match file")
    if any(g.score is None for g in games):
        g = next(g for g in games if g.score is None)
        raise MatFileError(f"line {g.line}: game {g.number} has no score line")
    # the header's names first (Backgammon Studio's may end in a space)
    given = [header.get(f"Player {i}", "").strip() for i in (1, 2)]
    assert players is not None
    return MatchRecord(length, tuple(a or b for a, b in zip(given, players)), tuple(games),
                       header)


def _header_line(line: str) -> tuple[str, str] | None:
    """A header line ``; [Key "value"]`` read: (key, value), or None where ``line`` is
    no header (a comment). The key is what stands between the bracket and the first
    quote, white space around it; the value runs to the last quote, which only white
    space and the closing bracket follow.

    Read with str methods, each a single pass over the line, where a regular expression
    with three adjacent runs that could each take the spaces after the bracket
    backtracked in cubic time: a line of 4,000 spaces and no quote took 30 seconds (a
    web board's review holding every session). It reads what that expression read."""
    if not line.startswith(";"):
        return None
    rest = line[1:].lstrip()
    at = rest.find('"')
    if not rest.startswith("[") or at < 0:
        return None
    before, value = rest[1:at], rest[at + 1:].rstrip()
    if not before[-1:].isspace() or not value.endswith("]"):
        return None           # white space before the quote, a bracket to close
    value = value[:-1].rstrip()
    # a key of white space alone: its last character but one, as that expression read it
    key = before.strip() or before[-2:-1]
    if not key or "]" in key or not value.endswith('"'):
        return None
    return key, value[:-1]


def _score_line(line: str) -> tuple[str, str, tuple, int] | None:
    """A score line read: the first name, the second, the scores (first, second) and
    the column the second name starts at; None where ``line`` is no score line.

    The line is ``Alice : 0    Bob : 0``; GNU Backgammon writes the first name and score
    in 31 characters, so a long first name leaves no space before the second name. A
    name may hold a colon: the second score is the number after the last colon, the
    first the number after the first colon (past the first name's first character) that
    leaves a second name before the last colon. That number is read up to nine digits,
    any more starting the second name; where only spaces follow it up to the last colon,
    its last digit is the second name, and a single digit leaves the second name empty
    (Backgammon Galaxy's ``lasse : 0        : 0``) where no colon leaves a name.

    Read in linear time, each colon's number matched once, where a regular expression
    with two lazy names backtracked in quadratic time on a long line of colons (``:1 ``
    4,000 times took 3.5 seconds); it reads what that expression read."""
    last = line.rfind(":")
    start = len(line) - len(line.lstrip())
    second_score = line[last + 1:].strip()
    if last < 0 or start == len(line) or not _NUMBER.fullmatch(second_score):
        return None
    unnamed = None                      # a second name left empty (Backgammon Galaxy's)
    for m in _COLON_NUMBER.finditer(line, start + 1, last):
        digits = m.group(1)
        if len(digits) > 9:
            width, second_at = 9, m.start(1) + 9
        elif m.end() < last:            # the second name after the number and spaces
            width, second_at = len(digits), m.end()
        elif len(digits) > 1:           # spaces alone up to the last colon
            width = len(digits) - 1
            second_at = m.start(1) + width
        else:
            unnamed = unnamed or m
            continue
        first = line[start:m.start()].rstrip()
        second = line[second_at:last].rstrip()
        return first, second, (int(digits[:width]), int(second_score)), second_at
    if unnamed is not None and line[start:unnamed.start()].strip():
        # 'lasse : 0        : 0': no second name (GNU Backgammon reads the line)
        return (line[start:unnamed.start()].rstrip(), "", (int(unnamed.group(1)),
                int(second_score)), last)
    return None


def _action(m: re.Match, player: int, line: int, number: int) -> Action:
    if m.group("roll"):
        move = " ".join(m.group("move").split())
        return Action(player, "roll", line, (int(m.group("d1")), int(m.group("d2"))), move,
                      number=number)
    if m.group("double"):
        return Action(player, "double", line, value=int(m.group("value")), number=number)
    if m.group("beaver"):
        return Action(player, "beaver", line, value=int(m.group("bvalue")), number=number)
    if m.group("take"):
        return Action(player, "take", line, number=number)
    if m.group("drop"):
        return Action(player, "drop", line, number=number)
    return Action(player, "win", line, value=int(m.group("points")), number=number)


# --------------------------------------------------------------------- writing
LEFT_WIDTH = 28
"""Characters of the first player's column after a line's number (``  1) ``): the
second's starts at column 33, as in GNU Backgammon's files."""


def action_text(a: Action, final: bool = False) -> str:
    """An action as a match file writes it (``final``: the win that ends the match)."""
    if a.kind == "roll":
        assert a.dice is not None
        return f"{a.dice[0]}{a.dice[1]}: {a.move}".rstrip()
    if a.kind in ("double", "beaver"):
        return f" {'Doubles' if a.kind == 'double' else 'Beavers'} => {a.value}"
    if a.kind == "win":
        return (f" Wins {a.value} point{'s' if a.value != 1 else ''}"
                f"{' and the match' if final else ''}")
    return " Takes" if a.kind == "take" else " Drops"


def format_mat(record: MatchRecord) -> str:
    """``record`` as a match file (what :func:`parse_mat` reads back): its header
    lines, the length, each game's score line and actions in the two columns."""
    lines = [f'; [{k} "{v}"]' for k, v in record.header.items()]
    if lines:
        lines.append("")
    lines += [f" {record.length} point match", ""]
    names = record.players
    for gi, g in enumerate(record.games):
        lines.append(f" Game {g.number}")
        lines.append(f" {f'{names[0]} : {g.score[0]}':<31}{names[1]} : {g.score[1]}")
        last = gi == len(record.games) - 1 and record.length > 0 and (
            max(g.score[g.winner] + g.points, 0) >= record.length
            if g.winner is not None else False)
        rows: list = []
        row: list = [None, None]
        for a in g.actions:
            if row[a.player] is not None or (a.player == 0 and row[1] is not None):
                rows.append(row)
                row = [None, None]
            row[a.player] = a
        rows.append(row)
        number = 0
        for left, right in rows:
            texts = [action_text(x, last and x.kind == "win") if x is not None else ""
                     for x in (left, right)]
            if any(x is not None and x.kind == "win" for x in (left, right)):
                head = "     "
            else:
                number += 1
                head = f"{number:3d}) "
            lines.append((head + f"{texts[0]:<{LEFT_WIDTH}}" + (" " if len(texts[0]) >=
                          LEFT_WIDTH and texts[1] else "") + texts[1]).rstrip())
        lines.append("")
    return "\n".join(lines) + "\n"


def played_action(player: int, before: Position, after: Position, dice,
                  line: int = 0) -> Action:
    """The :class:`Action` of a roll played from ``before`` to ``after``, its play in the
    match files' notation (:func:`engine.notation.movetext.jellyfish_move`); a play
    that ends the game written as the one of the same result other programs read
    (:func:`engine.notation.movetext.gnu_ending`)."""
    d1, d2 = (int(x) for x in dice)       # a pair, or a Dice
    after = gnu_ending(before, after, (d1, d2))
    return Action(player, "roll", line, (d1, d2), jellyfish_move(before, after, (d1, d2)))


def match_header(players: tuple, length: int, cube: bool, jacoby: bool = True,
                 beavers: bool = False) -> dict:
    """The header lines of a match file of games the engine played: the players, and
    the rules eXtreme Gammon's headers say (``Jacoby``, ``Beaver`` in money play,
    ``Crawford`` in a match, ``CubeLimit "1"`` without the cube)."""
    header = {"Player 1": players[0], "Player 2": players[1]}
    if length == 0:
        header.update({"Jacoby": "On" if cube and jacoby else "Off",
                       "Beaver": "On" if cube and beavers else "Off"})
    else:
        header["Crawford"] = "On"
    if not cube:
        header["CubeLimit"] = "1"
    return header


class MatchWriter:
    """A match written down as it is played, for :func:`format_mat`: the actions of the
    game under way and the games over, player 0 in the first column. Not thread-safe:
    a caller whose game runs on another thread holds its own lock around it."""

    def __init__(self) -> None:
        self.games: list[GameRecord] = []
        self.actions: list[Action] = []

    def roll(self, player: int, before: Position, after: Position, dice) -> None:
        """A roll and its play (or no play): ``before`` seen from ``player``."""
        self.actions.append(played_action(player, before, after, dice))

    def rolled(self, player: int, dice) -> None:
        """A roll not played: ``player`` resigned after it (``31:`` and no play, as GNU
        Backgammon writes it; without it a game resigned at the opening roll had no
        line, and GNU Backgammon's import left it unfinished, its points lost)."""
        d1, d2 = (int(x) for x in dice)
        self.actions.append(Action(player, "roll", 0, (d1, d2)))

    def double(self, player: int, value: int) -> None:
        """A double to ``value``."""
        self.actions.append(Action(player, "double", 0, value=value))

    def answer(self, player: int, takes: bool) -> None:
        """A take or a pass of the double on offer."""
        self.actions.append(Action(player, "take" if takes else "drop", 0))

    def beaver(self, player: int, value: int) -> None:
        """A beaver: the taker redoubles at once to ``value``, keeping the cube. It
        answers the double in the take's place (``Doubles => 2``, ``Beavers => 4``, as
        GNU Backgammon writes it): a take just recorded, as the game loop asks for one
        before the beaver, is dropped (kept, :func:`replay` refused the file and GNU
        Backgammon exported it back as a second double of the doubler's)."""
        last = self.actions[-1] if self.actions else None
        if last is not None and last.player == player and last.kind == "take":
            self.actions.pop()
        self.actions.append(Action(player, "beaver", 0, value=value))

    def end(self, number: int, score: tuple, winner: int | None, points: int) -> None:
        """The game under way over (``winner`` None: a draw or a game cut short), begun
        at ``score``."""
        if winner is not None:
            self.actions.append(Action(winner, "win", 0, value=points))
        self.games.append(GameRecord(number, tuple(score), tuple(self.actions), 0))
        self.actions = []

    def record(self, length: int, players: tuple, header: dict, number: int,
               score: tuple) -> MatchRecord:
        """The games so far, and the one under way (its ``number``, begun at
        ``score``) when it has actions."""
        games = list(self.games)
        if self.actions:
            games.append(GameRecord(number, tuple(score), tuple(self.actions), 0))
        return MatchRecord(length, tuple(players), tuple(games), dict(header))


# --------------------------------------------------------------------- replay
@dataclass(frozen=True)
class Decision:
    """One decision of a replayed game, from its player's side."""

    game: int
    """The game's number."""
    player: int
    """Who decided: 0 the first player, 1 the second."""
    kind: str
    """``"play"`` (a roll's play), ``"cube"`` (to double or not, before a roll) or
    ``"answer"`` (to a double: take, drop or beaver)."""
    position: Position
    """The board the decision was made on, seen from the side on roll: the player
    himself for ``play`` and ``cube``, the doubler for ``answer``."""
    cube_value: int
    cube_owner: int | None
    """The cube before the decision: its value and owner (None: centred)."""
    score: tuple
    """The players' scores before the game (first, second)."""
    crawford: bool
    """The game is the Crawford game."""
    line: int
    dice: tuple | None = None
    """``play``: the roll."""
    after: Position | None = None
    """``play``: the position after the play (the opponent on roll)."""
    move: str = ""
    """``play``: the play as written."""
    action: str = ""
    """``cube``: ``"double"`` or ``"no_double"``; ``answer``: ``"take"``, ``"drop"`` or
    ``"beaver"``."""
    number: int = 0
    """The move number of the action's line in the file (0: none)."""


def crawford_games(record: MatchRecord) -> set:
    """The numbers of the games that are Crawford games: those the file marks so (an
    SGF file's ``CrawfordGame``), else the first game in which a player stands one point
    from the match (when the rule is on, as it is unless the header says ``Crawford
    "Off"``), unless that is the file's first game and has a double: a file that starts
    in the middle of a match (GridGammon's, a match resumed) at that score starts after
    the Crawford game."""
    if any(g.crawford is not None for g in record.games):
        return {g.number for g in record.games if g.crawford}
    out: set = set()
    if record.length <= 1 or not record.flag("Crawford", True):
        return out          # a 1-point match is all double match point: no Crawford game
    for i, g in enumerate(record.games):
        if record.length - 1 in g.score:
            if (max(g.score) < record.length and min(g.score) < record.length - 1
                    and not (i == 0 and any(a.kind == "double" for a in g.actions))):
                out.add(g.number)
            break
    return out


def replay(record: MatchRecord) -> Iterator[Decision]:
    """Every decision of every game of ``record``, in order, each played on the board:
    the roll's play found among the legal plays, the cube followed. Raises
    :class:`MatFileError` naming the line of an action that cannot have been made."""
    if record.header and any(k.lower() == "variation" and v.strip().lower()
                             not in ("backgammon", "") for k, v in record.header.items()):
        var = next(v for k, v in record.header.items() if k.lower() == "variation")
        raise MatFileError(f"variation {quote(var)}: only backgammon is played here")
    crawford = crawford_games(record)
    before = None
    for g in record.games:
        if before is not None and before.winner is not None:
            # the score a game starts at is the last one's plus the points it gave
            score = list(before.score)
            score[before.winner] += before.points
            if list(g.score) != score:
                raise MatFileError(f"line {g.line} (game {g.number}): the score "
                                   f"{list(g.score)}, but game {before.number} ended at "
                                   f"{score}")
        yield from _replay_game(record, g, g.number in crawford)
        before = g


def _replay_game(record: MatchRecord, game: GameRecord, crawford: bool) -> Iterator[Decision]:
    pos = Position.start()
    mover: int | None = None          # who is on roll, whose side ``pos`` is seen from
    value, owner = 1, None
    limit = record.cube_limit()
    offered: int | None = None        # the new value of a double on offer
    doubled_at: Position | None = None
    beavered: int | None = None       # who beavered last, while a raccoon may follow
    passed: tuple | None = None       # a double passed: (the doubler, the cube before)
    rolled = False                    # the opening roll made
    over = False

    def bad(a: Action, why: str) -> MatFileError:
        return MatFileError(f"line {a.line} (game {game.number}): {why}")

    def decision(a: Action, kind: str, **kw) -> Decision:
        return Decision(game.number, a.player, kind, kw.pop("position", pos), value, owner,
                        game.score, crawford, a.line, number=a.number, **kw)

    won = False
    for i, a in enumerate(game.actions):
        if a.kind == "win":         # ends the game: a pass, the last checker off, or
            if won:                 # a resignation (the board not over)
                raise bad(a, "a second win in one game")
            won = over = True
            continue
        if over:
            raise bad(a, f"{a.kind} after the game was over")
        if offered is not None:
            if a.player == mover:
                raise bad(a, "the doubler acts before the double is answered")
            assert doubled_at is not None
            if a.kind == "take":
                yield decision(a, "answer", position=doubled_at, action="take")
                value, owner, offered = offered, a.player, None
            elif a.kind == "drop":
                yield decision(a, "answer", position=doubled_at, action="drop")
                offered = None
                over = True
                passed = (mover, value)        # the doubler wins the cube before it
            elif a.kind == "beaver":
                if record.length:
                    raise bad(a, "a beaver in match play")
                if a.value != 2 * offered:
                    raise bad(a, f"beavers => {a.value} after a double to {offered}: "
                                 f"expected {2 * offered}")
                if limit is not None and a.value > limit:
                    raise bad(a, f"beavers => {a.value} past the cube limit {limit}")
                yield decision(a, "answer", position=doubled_at, action="beaver")
                value, owner, offered, beavered = a.value, a.player, None, a.player
            else:
                raise bad(a, f"{a.kind} while a double is on offer")
            continue
        if a.kind == "beaver" and beavered is not None and a.player != beavered:
            # a raccoon: the doubler doubles the beavered cube again (not a decision
            # rated here); the cube stays with the side not on roll, as GNU Backgammon
            # has it (its files let that side redouble later)
            if a.value != 2 * value:
                raise bad(a, f"beavers => {a.value} after a beaver to {value}: expected "
                             f"{2 * value}")
            if limit is not None and a.value > limit:
                raise bad(a, f"beavers => {a.value} past the cube limit {limit}")
            value, beavered = a.value, a.player
            continue
        if a.kind == "drop" and beavered is not None and a.player != beavered:
            # a beaver (or raccoon) passed, as GNU Backgammon allows: its maker wins the
            # cube before it (not a decision rated here)
            passed, over = (beavered, value // 2), True
            continue
        beavered = None
        if a.kind in ("take", "drop", "beaver"):
            raise bad(a, f"{a.kind} with no double on offer")
        if mover is None:
            mover = a.player
        elif a.player != mover:
            raise bad(a, f"the {'first' if a.player == 0 else 'second'} player acts out "
                         f"of turn")
        may_double = (not crawford and owner in (None, a.player)
                      and (limit is None or value < limit) and not pos.is_over())
        if a.kind == "double":
            if not rolled:
                raise bad(a, "a double before the opening roll")
            if not may_double:
                why = ("in the Crawford game" if crawford else "with the opponent's cube"
                       if owner is not None and owner != a.player else
                       "with the cube at its limit" if limit is not None and value >= limit
                       else "after the game is over")
                raise bad(a, f"a double {why}")
            if a.value != 2 * value:
                raise bad(a, f"doubles => {a.value} with the cube at {value}: expected "
                             f"{2 * value}")
            yield decision(a, "cube", action="double")
            offered, doubled_at = a.value, pos
            continue
        # a roll
        assert a.kind == "roll" and a.dice is not None
        chance = may_double and rolled
        rolled = True
        # no play written where the roll has one legal play: that play (GNU Backgammon
        # reads it so; GridGammon leaves forced plays out), unless only the game's end
        # follows and the play does not end it (a roll not played, below)
        last = all(b.kind == "win" for b in game.actions[i + 1:])
        forced = None if a.move else _forced(pos, a.dice)
        if forced is not None and last and not forced.is_over():
            forced = None
        if not a.move and forced is None and last and _has_play(pos, a.dice):
            # rolled and not played: the file was written, or the game resigned, after
            # the roll (GNU Backgammon rolls a new game's opening at once); no decision,
            # not even the chance to double before it (GNU Backgammon's record of such a
            # roll, its dice set or no record at all, holds no cube decision)
            over = True
            continue
        try:
            after = (parse_move(a.move, pos, a.dice) if a.move
                     else forced or _no_move(pos, a.dice))
        except MoveError as exc:
            raise bad(a, f"{a.dice[0]}{a.dice[1]}: {a.move or '(no move)'}: {exc}") from None
        if chance:
            yield decision(a, "cube", action="no_double")
        yield decision(a, "play", dice=a.dice, after=after,
                       move=a.move or (jellyfish_move(pos, after, a.dice) if forced else ""))
        pos, mover = after, 1 - a.player
        if pos.is_over():
            over = True
    # a double still on offer where the file ends: the game unfinished, as when a roll
    # was not played
    end = result(pos) if pos.is_over() else None
    wins = [a for a in game.actions if a.kind == "win"]

    def ends_match(player: int, points: int) -> bool:
        """Whether ``points`` won by ``player`` end the match in the file's last game:
        a file may write that game at fewer points than it is worth (Backgammon Galaxy
        writes the match length), and a resignation at more (GridGammon's points the
        match needed, or 100); GNU Backgammon scores the game by the board, the cube and
        the resignation."""
        return (bool(record.length) and game is record.games[-1]
                and game.score[player] + points >= record.length)

    if passed is not None and wins and (wins[0].player, wins[0].value) != passed and not (
            wins[0].player == passed[0] and wins[0].value < passed[1]
            and ends_match(passed[0], wins[0].value)):
        doubler, cube = passed
        raise MatFileError(f"line {wins[0].line} (game {game.number}): wins {wins[0].value} "
                           f"point(s) for the {'first' if wins[0].player == 0 else 'second'}"
                           f" player, but the pass gives the "
                           f"{'first' if doubler == 0 else 'second'} player {cube}")
    cubes = [value] + ([offered] if offered is not None else [])
    if end is None and passed is None and wins and wins[0].value not in {
            k * c for k in (1, 2, 3) for c in cubes} and not ends_match(wins[0].player,
                                                                     wins[0].value):
        raise MatFileError(f"line {wins[0].line} (game {game.number}): wins "
                           f"{wins[0].value} point(s) by a resignation at cube {value}: "
                           f"expected {value}, {2 * value} or {3 * value} (a single game, "
                           f"a gammon, a backgammon)")
    if end is not None and wins and mover is not None:
        won = wins[0]
        winner = mover if end.winner == 0 else 1 - mover
        # the Jacoby rule (money, the cube never turned) scores a gammon as a single;
        # GNU Backgammon's files do not say whether it was on
        points = {end.points * value} | ({value} if not record.length and owner is None
                                         else set())
        if won.player != winner or won.value not in points and not (
                won.value < max(points) and ends_match(winner, won.value)):
            who = "first" if winner == 0 else "second"
            raise MatFileError(f"line {won.line} (game {game.number}): wins {won.value} "
                               f"point(s) for the {'first' if won.player == 0 else 'second'}"
                               f" player, but the board gives the {who} player "
                               f"{end.points * value} ({end.kind.name.lower()} at cube "
                               f"{value})")


def _dance(pos: Position, dice: tuple) -> tuple[Position | None, int]:
    """The position after a roll with no legal play (None where the roll has one), and
    how many successors the roll has."""
    from engine.movegen.generate import successors
    succ = successors(pos, dice)
    if len(succ) == 1 and format_move(pos, succ[0], dice) == NO_MOVE:
        return succ[0], 1
    return None, len(succ)


def _forced(pos: Position, dice: tuple) -> Position | None:
    """The position after the one legal play of a roll that has one (a checker that
    moves), else None."""
    from engine.movegen.generate import successors
    succ = successors(pos, dice)
    if len(succ) == 1 and format_move(pos, succ[0], dice) != NO_MOVE:
        return succ[0]
    return None


def _has_play(pos: Position, dice: tuple) -> bool:
    """Whether the roll has a legal play (a checker that moves)."""
    return _dance(pos, dice)[0] is None


def _no_move(pos: Position, dice: tuple) -> Position:
    """The position after a roll with no play written: the roll must have no legal play."""
    after, count = _dance(pos, dice)
    if after is None:
        raise MoveError(f"no play written, but the roll has {count} legal play(s)")
    return after
