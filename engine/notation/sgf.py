"""GNU Backgammon's own match files (SGF, ``.sgf``: ``save match``, ``save game``,
``save session``) read into the :class:`~engine.notation.matfile.MatchRecord` of a
Jellyfish match file, so that :func:`~engine.notation.matfile.replay` and the review
(``python -m engine.review``) take either; and a record written as one
(:func:`format_sgf`, which GNU Backgammon's ``load match`` reads: the terminal game's
``--save FILE.sgf``, the web board's Save as .sgf).

The Smart Game Format (FF[4]) as GNU Backgammon 1.07 writes it for backgammon (GM[6]):
a collection of game trees, one a game, each a sequence of nodes ``;`` holding
properties ``ID[value][value]...`` (``\\]`` and ``\\\\`` escaped inside a value)::

    (;FF[4]GM[6]AP[GNU Backgammon:1.07.001]MI[length:5][game:0][ws:0][bs:0]
     PW[gnubg]PB[root]RU[Crawford]RE[B+1]
    ;B[21abln]                          a roll (2-1) and its play: a letter pair a checker
    ;W[52mhxv]                          ... and more letter pairs (four for a double)
    ;B[double]                          a double, answered by ;W[take] or ;W[drop]
    ;W[drop])

- The root node of each game: ``MI`` (``length:`` the match length, 0 for money play;
  ``game:`` its number from 0; ``ws:`` / ``bs:`` the scores before it), ``PW`` / ``PB``
  the players (White is the first player, the left column of the ``.mat`` export, Black
  the second), ``RU`` the rules (``Crawford``, ``Crawford:CrawfordGame``, ``Jacoby``,
  ``NoCube:...``), ``RE`` the result (``W+2``: White won 2 points; ``R`` after it: by a
  resignation), ``DT`` the date, ``EV``, ``RO``, ``PC`` the event, round and place.
- A game's result is its play's, as GNU Backgammon's ``load match`` scores it: a pass
  gives the doubler the cube before the double, the last checker off what the board and
  the cube give (a gammon a single under the Jacoby rule with the cube not turned); only
  a game the play leaves unfinished takes ``RE``, and only a resignation's (``W+2R``,
  Gibbon's ``W+2Resign``): an ``RE`` without one, or not of the form ``W+N`` (``RE[0]``,
  ``RE[?]``), is not read.
- A move ``B[...]`` / ``W[...]``: the dice, then a letter pair for each checker moved,
  from and to, in the mover's own direction: White's ``a`` .. ``x`` are his points 1 ..
  24, Black's ``a`` .. ``x`` his points 24 .. 1; ``y`` is the bar, ``z`` off. ``double``,
  ``take``, ``drop``, and ``beaver``, or a ``double`` by the doubled player while the
  cube is offered (as GNU Backgammon records a beaver). A resignation offered or
  answered (Gibbon's ``B[resign:2]``, ``W[accept]``, ``W[reject]``) is passed over, as
  GNU Backgammon passes it over: ``RE`` records the one accepted.
- ``PL[B]DI[31]``: the dice set for the player on roll and not played (the game resigned,
  or the file saved, after the roll): read as a roll not played, as the ``.mat`` export
  writes it.
- Analysis (``A``, ``DA``, ``GS``, ``LU``, marks, comments) is skipped; only the main line
  of a tree with variations is read, as GNU Backgammon reads it; a game tree of another
  game (``GM[1]``, or no ``GM``) is passed over, as GNU Backgammon passes it over.

Games that start from a position set up by hand (``AB``, ``AW``, ``AE``), with the cube
turned before the first roll (``CV``, ``CP``; ``CV`` in the first node: GNU Backgammon's
automatic doubles of money play), or in GNU Backgammon's variants
(Nackgammon, Hypergammon) are refused by name: the replay starts every game from the
opening position of standard backgammon.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import quote
from engine.notation.matfile import (
    MAX_LENGTH,
    Action,
    GameRecord,
    MatchRecord,
    MatFileError,
    crawford_games,
    parse_mat,
    read_with,
    replay,
)
from engine.notation.movetext import move_steps
from engine.rules.scoring import result

_MOVE = re.compile(r"^([1-6])([1-6])((?:[a-z][a-z]){0,4})$")
_RESULT = re.compile(r"^([BW])\+([0-9]{1,9})(.*)$", re.I | re.S)
"""``RE`` as GNU Backgammon reads it: the winner, the points, then ``R`` (or anything
starting with it: Gibbon's ``Resign``) for a resignation."""
_RESIGNATION = re.compile(r"^(resigns?(:[0-9]+)?|accept|rejects?)$", re.I)
"""A move value of a resignation offered or answered (Gibbon's ``B[resign:2]``,
``W[accept]``, ``W[reject]``), which GNU Backgammon passes over, as it passes over any
value that is not dice."""
_TREE_START = re.compile(r"\(\s*;")
"""The start of a game tree, ``(;``: text before the first one is passed over."""
GNU_VARIANTS = ("nackgammon", "hypergammon1", "hypergammon2", "hypergammon3")
"""GNU Backgammon's variants named in ``RU``; refused."""
SETUP = ("AB", "AW", "AE", "CV", "CP")
"""Properties that set up a board or a cube by hand; refused."""


class _Reader:
    """A recursive-descent reader of SGF text into game trees' main lines: each a list
    of nodes, each node a list of ``(ident, [values], line)``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self._counted, self._line = 0, 1      # newlines counted up to _counted

    def line(self) -> int:
        """The line of the reading position: newlines counted on from the last call
        (the position only moves on), so a large file is read in linear time."""
        if self.i >= self._counted:
            self._line += self.text.count("\n", self._counted, self.i)
        else:
            self._line = self.text.count("\n", 0, self.i) + 1
        self._counted = self.i
        return self._line

    def error(self, what: str) -> MatFileError:
        return MatFileError(f"SGF line {self.line()}: {what}")

    def skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def collection(self) -> list:
        trees = []
        self.skip()
        first = _TREE_START.search(self.text, self.i)
        if first is not None and first.start() != self.i:
            self.i = first.start()      # text before the first game tree: passed over,
            #                             as GNU Backgammon's load match passes it over
        while self.i < len(self.text):
            if self.text[self.i] != "(":
                raise self.error(f"{quote(self.text[self.i:self.i + 20])}: expected '(' "
                                 f"opening a game tree")
            trees.append(self.tree())
            self.skip()
        if not trees:
            raise MatFileError("no game tree ('(;FF[4]GM[6]...'): not an SGF file")
        return trees

    def tree(self) -> list:
        """A game tree's main line: its sequence, then its first variation's."""
        self.i += 1                                  # '('
        nodes = []
        self.skip()
        while self.i < len(self.text) and self.text[self.i] == ";":
            self.i += 1
            nodes.append(self.node())
            self.skip()
        if not nodes:
            raise self.error("a game tree with no node (expected ';')")
        first = True
        while self.i < len(self.text) and self.text[self.i] == "(":
            sub = self.tree()
            if first:
                nodes += sub
                first = False
            self.skip()
        if self.i >= len(self.text) or self.text[self.i] != ")":
            raise self.error("a game tree not closed (expected ')')")
        self.i += 1
        return nodes

    def node(self) -> list:
        props = []
        self.skip()
        while self.i < len(self.text) and self.text[self.i].isalpha():
            start = self.i
            while self.i < len(self.text) and self.text[self.i].isalpha():
                self.i += 1
            ident = "".join(c for c in self.text[start:self.i] if c.isupper())
            line = self.line()
            if not ident:
                raise self.error(f"property {quote(self.text[start:self.i])}: a property "
                                 f"name is in capitals ('B', 'W', 'MI')")
            values = []
            self.skip()
            while self.i < len(self.text) and self.text[self.i] == "[":
                values.append(self.value())
                self.skip()
            if not values:
                raise self.error(f"property {ident} has no value ('[...]')")
            props.append((ident, values, line))
        return props

    def value(self) -> str:
        self.i += 1                                  # '['
        out = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == "\\" and self.i + 1 < len(self.text):
                out.append(self.text[self.i + 1])
                self.i += 2
                continue
            if c == "]":
                self.i += 1
                return "".join(out)
            out.append(c)
            self.i += 1
        raise self.error("a property value not closed (expected ']')")


def _point(ch: str, player: int) -> int:
    """An SGF move letter as a point in the mover's own numbering: 25 the bar, 0 off."""
    if ch == "y":
        return 25
    if ch == "z":
        return 0
    k = ord(ch) - ord("a")
    return k + 1 if player == 0 else 24 - k


def _move_text(letters: str, player: int) -> str:
    """The letter pairs of a move as ``.mat`` move text (``13/8 24/22``)."""
    return " ".join(f"{_point(letters[k], player)}/{_point(letters[k + 1], player)}"
                    for k in range(0, len(letters), 2))


def _mi(values: list, line: int) -> dict:
    out = {}
    for v in values:
        key, sep, val = v.partition(":")
        if sep and key in ("length", "game", "ws", "bs"):
            if not re.fullmatch(r"[0-9]{1,9}", val.strip()):
                raise MatFileError(f"SGF line {line}: MI[{v}]: expected a whole number of "
                                   f"at most 9 digits")
            out[key] = int(val)
    return out


def parse_sgf(text: str) -> MatchRecord:
    """GNU Backgammon SGF text read into a :class:`MatchRecord` (module docstring)."""
    if not isinstance(text, str):
        raise MatFileError(f"text {quote(text)}: expected the file's text (a str)")
    games: list = []
    header: dict = {}
    length: int | None = None
    players: tuple | None = None
    try:
        trees = _Reader(text).collection()
    except RecursionError:
        raise MatFileError("game trees nested too deeply to read") from None
    last_number = 0
    # GNU Backgammon reads the trees whose first node says GM[6], and passes over the rest
    ours = [t for t in trees if [v[0].strip() for i, v, _ in t[0] if i == "GM"][:1] == ["6"]]
    if not ours:
        line0 = trees[0][0][0][2] if trees[0][0] else 1
        gm = [v[0].strip() for i, v, _ in trees[0][0] if i == "GM"]
        raise MatFileError(f"SGF line {line0}: " + (
            f"GM[{gm[0]}]: not a backgammon game (GM[6])" if gm else
            "no GM[6] in the game's first node: not a backgammon game"))
    for tree in ours:
        root = {ident: (values, line) for ident, values, line in tree[0]}
        line0 = tree[0][0][2] if tree[0] else 1
        mi = _mi(*root["MI"]) if "MI" in root else {}
        this_length = mi.get("length", 0)
        if this_length > MAX_LENGTH:
            raise MatFileError(f"SGF line {line0}: a {this_length}-point match: expected "
                               f"a length up to {MAX_LENGTH} (0 for money play)")
        number = mi.get("game", last_number) + 1
        if number <= last_number:
            raise MatFileError(f"SGF line {line0}: MI[game:{number - 1}] after game "
                               f"{last_number - 1}: the games are numbered in order")
        last_number = number
        if length is None:
            length = this_length
        elif this_length != length:
            raise MatFileError(f"SGF line {line0}: a {this_length}-point game in a "
                               f"{length}-point match")
        names = (root.get("PW", ([""], 0))[0][0].strip() or "White",
                 root.get("PB", ([""], 0))[0][0].strip() or "Black")
        if players is None:
            players = names
        rules = [t.strip() for t in root.get("RU", ([""], 0))[0][0].split(":") if t.strip()]
        if "CV" in root and root["CV"][0][0].strip() != "1":
            raise MatFileError(f"SGF line {root['CV'][1]}: CV {quote(root['CV'][0][0])} in the "
                               f"game's first node: the cube turned before the first roll "
                               f"(automatic doubles); only games played from the opening "
                               f"at cube 1 are read")
        bad = [t for t in rules if t.lower() in GNU_VARIANTS]
        if bad:
            raise MatFileError(f"SGF line {line0}: RU[{':'.join(rules)}]: {bad[0]} is "
                               f"not standard backgammon, the only game a match file "
                               f"holds here")
        if not games:
            header.update({"Player 1": names[0], "Player 2": names[1]})
            if length:
                header["Crawford"] = "On" if "Crawford" in rules else "Off"
            else:
                header["Jacoby"] = "On" if "Jacoby" in rules else "Off"
            if "NoCube" in rules:
                header["CubeLimit"] = "1"
            for key, name in (("DT", "EventDate"), ("EV", "Event"), ("RO", "Round"),
                              ("PC", "Place")):
                if key in root:
                    header[name] = root[key][0][0]
        score = (mi.get("ws", 0), mi.get("bs", 0))
        if length and max(score) >= length:
            raise MatFileError(f"SGF line {line0}: score {list(score)} in a {length}-point "
                               f"match: each score must be 0 .. {length - 1} before a game")
        crawford = bool(length) and "CrawfordGame" in rules
        if crawford and not (length - 1 in score and min(score) < length - 1):
            raise MatFileError(f"SGF line {line0}: the Crawford game at {list(score)} in "
                               f"a {length}-point match: expected one player at "
                               f"{length - 1}, the other below")
        actions = _actions(tree, line0)
        game = GameRecord(number, score, tuple(actions), line0, crawford=crawford)
        win = _played_result(MatchRecord(length, players, (game,), header), root.get("RE"),
                             jacoby=not length and "Jacoby" in rules)
        if win is not None:
            game = GameRecord(number, score, (*actions, win), line0, crawford=crawford)
        games.append(game)
    assert length is not None and players is not None
    return MatchRecord(length, players, tuple(games), header)


def _actions(tree: list, line0: int) -> list:
    """The actions of one game's nodes after its root, numbered as the ``.mat`` export
    numbers its lines (the first player's action opens a line, the second's fills it)."""
    actions: list = []
    number, right_taken = 0, True
    rolled_only = False                   # the last action is dice set and not played
    offered: tuple | None = None          # (who, the new cube, a beaver's)
    for node in tree[1:]:
        for ident, values, line in node:
            if ident in SETUP:
                raise MatFileError(f"SGF line {line}: {ident}[{values[0]}]: a position or "
                                   f"cube set up by hand; only games played from the "
                                   f"opening are read")
        moves = [(ident, values[0].strip(), line) for ident, values, line in node
                 if ident in ("B", "W")]
        dice = [(values[0].strip(), line) for ident, values, line in node if ident == "DI"]
        turn = [values[0].strip().upper() for ident, values, line in node if ident == "PL"]
        if len(moves) > 1:
            raise MatFileError(f"SGF line {moves[1][2]}: two moves in one node "
                               f"({moves[0][0]}[{moves[0][1]}] and {moves[1][0]}"
                               f"[{moves[1][1]}])")
        if moves:
            ident, value, line = moves[0]
            player = 0 if ident == "W" else 1
        elif dice:
            value, line = dice[0]
            if not turn or turn[0] not in ("B", "W"):
                raise MatFileError(f"SGF line {line}: DI[{value}] without PL[B] or PL[W] "
                                   f"(whose dice)")
            player = 0 if turn[0] == "W" else 1
            if not re.fullmatch(r"[1-6][1-6]", value):
                raise MatFileError(f"SGF line {line}: DI[{value}]: expected two dice 1-6")
            # read below as a roll with no play: the roll not played
        else:
            continue
        word = value.lower()
        if moves and _RESIGNATION.match(value):
            continue        # a resignation offered or answered: RE has its result
        if word == "double" and actions and actions[-1].kind == "drop":
            continue        # GNU Backgammon 1.07 repeats a dropped double after the drop
        if word in ("double", "beaver") and offered is not None and offered[0] != player:
            word = "beaver"                      # GNU Backgammon records a beaver so
        elif word == "take" and offered is not None and offered[2] and offered[0] != player:
            continue                             # a beaver's take: the .mat has none
        m = _MOVE.match(value)
        if (m and moves and rolled_only and actions[-1].player == player
                and actions[-1].dice == (int(m.group(1)), int(m.group(2)))):
            # the dice set (PL/DI), then the roll written again, played or not (GNU
            # Backgammon's 'roll' saved before the move): one roll
            last = actions[-1]
            actions[-1] = Action(player, "roll", last.line, last.dice,
                                 _move_text(m.group(3), player), number=last.number)
            rolled_only = False
            continue
        rolled_only = bool(m) and not moves
        if player == 0 or right_taken:
            number += 1
            right_taken = False
        if player == 1:
            right_taken = True
        who = "W" if player == 0 else "B"
        if word == "double":
            if offered is not None:
                raise MatFileError(f"SGF line {line}: {who}[{value}]: a second double "
                                   f"before the first is answered")
            offered = (player, _cube_after(actions) * 2, False)
            actions.append(Action(player, "double", line, value=offered[1], number=number))
        elif word == "beaver":
            if offered is None:
                raise MatFileError(f"SGF line {line}: {who}[{value}]: a beaver with no "
                                   f"double offered")
            offered = (player, offered[1] * 2, True)
            actions.append(Action(player, "beaver", line, value=offered[1], number=number))
        elif word in ("take", "drop"):
            if offered is None:
                raise MatFileError(f"SGF line {line}: {who}[{value}]: no double on offer")
            offered = None                       # a beaver passed too (GNU allows it)
            actions.append(Action(player, word, line, number=number))
        else:
            if not m:
                raise MatFileError(f"SGF line {line}: {who}[{value}]: expected dice and "
                                   f"letter pairs ('52mhxv'), double, take, drop or beaver")
            if offered is not None and not offered[2]:
                raise MatFileError(f"SGF line {line}: {who}[{value}]: a roll while a "
                                   f"double is offered")
            offered = None
            actions.append(Action(player, "roll", line, (int(m.group(1)), int(m.group(2))),
                                  _move_text(m.group(3), player), number=number))
    return actions


def _cube_after(actions: list) -> int:
    """The cube's value after ``actions`` (the last double or beaver taken)."""
    cube = 1
    for a in actions:
        if a.kind in ("double", "beaver"):
            cube = a.value
    return cube


def _re_win(re_prop: tuple, resigned_only: bool) -> Action | None:
    """``RE``'s win (GNU Backgammon's reading: :data:`_RESULT`), or None: not of that
    form, or (``resigned_only``) not a resignation."""
    m = _RESULT.match(re_prop[0][0].strip())
    if not m or resigned_only and m.group(3)[:1].upper() != "R":
        return None
    return Action(0 if m.group(1).upper() == "W" else 1, "win", re_prop[1],
                  value=int(m.group(2)))


def _played_result(record: MatchRecord, re_prop: tuple | None, jacoby: bool) -> Action | None:
    """The ``win`` of the one game of ``record`` as GNU Backgammon's ``load match`` scores
    it: by its play (a pass, the last checker off), else by ``RE`` where that says the
    game was resigned (module docstring); None for a game left unfinished. A game whose
    play cannot be replayed takes ``RE`` as written (the review's replay then names the
    fault)."""
    game = record.games[0]
    actions = game.actions
    line = re_prop[1] if re_prop else (actions[-1].line if actions else game.line)
    if actions and actions[-1].kind == "drop":
        # the pass of the last double or beaver: its maker wins the cube before it
        offer = next((a for a in reversed(actions) if a.kind in ("double", "beaver")), None)
        if offer is not None:
            return Action(offer.player, "win", line, value=max(offer.value // 2, 1))
    if actions and actions[-1].kind == "roll":
        try:
            last = None
            for last in replay(record):
                pass
        except MatFileError:
            return _re_win(re_prop, False) if re_prop else None
        end = (result(last.after) if last is not None and last.kind == "play"
               and last.after is not None else None)
        if last is not None and end is not None:    # the side on roll next has lost
            single = jacoby and last.cube_owner is None
            return Action(last.player, "win", line,
                          value=last.cube_value * (1 if single else end.points))
    return _re_win(re_prop, True) if re_prop else None


def read_sgf(path: str | Path) -> MatchRecord:
    """The SGF file at ``path`` (:func:`parse_sgf`)."""
    return read_with(path, parse_sgf)


def parse_match(text: str) -> MatchRecord:
    """A match file's text of either kind: SGF when it starts with ``(`` (after blanks),
    or holds a game tree's ``(;`` and a ``GM[`` after other text (a mail's or a page's
    lines before it), else a Jellyfish ``.mat`` file."""
    if not isinstance(text, str):
        raise MatFileError(f"text {quote(text)}: expected the file's text (a str)")
    text = text.removeprefix("\ufeff")              # a byte-order mark
    sgf = text.lstrip().startswith("(") or (_TREE_START.search(text) is not None
                                            and "GM[" in text)
    return parse_sgf(text) if sgf else parse_mat(text)


def read_match(path: str | Path) -> MatchRecord:
    """The match file at ``path``, of either kind (:func:`parse_match`)."""
    return read_with(path, parse_match)


# --------------------------------------------------------------------- writing
def _letter(point: int, player: int) -> str:
    """A point of the mover's numbering (25 the bar, 0 off) as an SGF move letter."""
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + (point - 1 if player == 0 else 24 - point))


def _value(text: str) -> str:
    """A property value with ``]`` and ``\\`` escaped."""
    return text.replace("\\", "\\\\").replace("]", "\\]")


def format_sgf(record: MatchRecord) -> str:
    """``record`` as GNU Backgammon's SGF (``load match`` reads it): a game tree a game,
    its rules, scores and result in the root, each roll's play as single-die letter
    pairs, the cube's turns as GNU Backgammon writes them (a beaver as the doubled
    player's ``double``, the doubler's take after it), a roll not played as ``PL``/``DI``,
    a game won by a resignation marked ``R``. Every game is replayed first
    (:func:`~engine.notation.matfile.replay`): a record whose actions cannot have been
    played is refused as :func:`parse_sgf` would refuse the file."""
    plays: dict = {}
    for d in replay(record):
        if d.kind == "play":
            plays.setdefault(d.game, []).append(d)
    crawford = crawford_games(record)
    no_cube = record.cube_limit() == 1
    out = []
    for i, game in enumerate(record.games):
        rules = []
        if no_cube:
            rules.append("NoCube")
        if record.length:
            if record.flag("Crawford", True):
                rules.append("Crawford")
                if game.number in crawford:
                    rules.append("CrawfordGame")
        elif record.flag("Jacoby", True):
            rules.append("Jacoby")
        root = (f"(;FF[4]GM[6]CA[UTF-8]AP[nardy]MI[length:{record.length}]"
                f"[game:{game.number - 1}][ws:{game.score[0]}][bs:{game.score[1]}]"
                f"PW[{_value(record.players[0])}]PB[{_value(record.players[1])}]")
        if rules:
            root += f"RU[{':'.join(rules)}]"
        nodes, ended_on_board, last = _nodes(game, plays.get(game.number, []))
        if game.winner is not None:
            resigned = not ended_on_board and last != "drop"
            root += f"RE[{'WB'[game.winner]}+{game.points}{'R' if resigned else ''}]"
        out.append(root + "".join(f"\n;{n}" for n in nodes) + ")")
    return "\n".join(out) + "\n"


def _nodes(game: GameRecord, plays: list) -> tuple[list, bool, str]:
    """The nodes after a game's root; whether its last play ended it on the board; the
    kind of its last action before the win."""
    nodes: list = []
    rolls = iter(plays)
    on_board, last = False, ""
    actions = [a for a in game.actions if a.kind != "win"]
    for k, a in enumerate(actions):
        who = "WB"[a.player]
        last = a.kind
        if a.kind == "roll":
            d = next(rolls, None)
            if d is None:                    # the roll not played: the dice set
                nodes.append(f"PL[{who}]DI[{a.dice[0]}{a.dice[1]}]")
                continue
            steps = move_steps(d.position, d.after, d.dice)
            nodes.append(f"{who}[{d.dice[0]}{d.dice[1]}"
                         + "".join(_letter(p, a.player) + _letter(q, a.player)
                                   for p, q in steps) + "]")
            on_board = d.after.is_over()
        elif a.kind in ("double", "beaver"):
            nodes.append(f"{who}[double]")
            follow = actions[k + 1] if k + 1 < len(actions) else None
            if a.kind == "beaver" and follow is not None and follow.kind not in (
                    "beaver", "drop"):
                nodes.append(f"{'WB'[1 - a.player]}[take]")    # GNU's take of the beaver
        else:
            nodes.append(f"{who}[{a.kind}]")
    return nodes, on_board, last
