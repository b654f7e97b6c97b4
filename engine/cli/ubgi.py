"""UBGI v0.2, the Universal Backgammon Interface (``python -m engine.ubgi``), per
``docs/ubgi.md``.

A line-based text protocol on standard input and output, the way chess engines speak
UCI: a controller (a GUI, a dueller, a test harness) sends one command per line, the
engine answers with zero or more lines, flushed after each. Keywords are case-sensitive.
Every line the engine cannot use gets one ``error <code> <detail>`` line (codes
``bad_command``, ``bad_value``, ``bad_state``, ``unsupported``) and the engine goes on
with the next; logs and tracebacks go to standard error.

:class:`Session` holds the state (the keys, the session and game context, the position,
the dice) and answers one line at a time (:meth:`Session.handle`); :func:`serve` runs it
over byte streams. The decisions come from :mod:`engine.cli._decide`. ``engine.ply`` is
UBGI's root-inclusive depth: UBGI ply ``n`` is the engine's (GNU Backgammon's)
``n - 1``-ply.
"""

from __future__ import annotations

import json
import re
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable

from engine.cli import _decide
from engine.cli._common import read_line
from engine.cube.decision import CUBE_LIMIT, MATCH_CUBE_LIMIT, CubeState, cubeful_value
from engine.cube.met import GNUBG_LONGEST_MATCH
from engine.errors import NardyError, clip, describe, quote
from engine.movegen.generate import cascade_threads
from engine.notation.gnubg_id import (
    GAME_NONE,
    GAME_PLAYING,
    MatchInfo,
    match_conflict,
    position_from_gnubg,
)
from engine.notation.movetext import BAR, OFF, die_steps, gnu_ending
from engine.notation.xgid import XgidInfo, parse_xgid, xgid_conflict
from engine.rules.position import Position
from engine.rules.scoring import result
from engine.rules.variants import VARIANTS, get_rules
from engine.search import precompile
from engine.search.nply import MAX_PLY

PROTO = "0.2"
NAME = "nardy"
AUTHOR = "the nardy project"
VERSION = "0.1.0"
MAX_LINE = 1 << 20
"""The longest command line read, in bytes; a longer one is skipped and refused."""
MAX_MATCH = GNUBG_LONGEST_MATCH
"""The longest match ``newsession`` accepts (GNU Backgammon's limit, and the reach of
the match equity table, extended to it as GNU Backgammon extends its own)."""
ID_GAMES = ("backgammon", "portes")
"""The games a GNU Backgammon ID or an XGID can describe (a bar, opposite directions)."""
PLAYERS = ("p0", "p1")


class UbgiError(Exception):
    """A line the engine cannot use: its reply is ``error <code> <detail>``."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _bad(code: str, detail: str) -> UbgiError:
    return UbgiError(code, detail)


# --------------------------------------------------------------------- keys
@dataclass(frozen=True)
class Key:
    """One configurable key, as a ``key`` line announces it."""

    name: str
    kind: str
    """``int``, ``bool``, ``enum`` or ``string``."""
    default: Any
    description: str
    lo: int = 0
    hi: int = 0
    choices: tuple = ()
    minor: bool = False
    """Announced with ``!``: the key does not change the engine's decisions."""

    def line(self) -> str:
        """The ``key`` line."""
        if self.kind == "int":
            domain = f" {self.lo}..{self.hi}"
        elif self.kind == "enum":
            domain = " " + "|".join(self.choices)
        elif self.kind == "string":
            domain = " *"
        else:
            domain = ""
        mark = " !" if self.minor else ""
        return f"key {self.name} {self.kind}{domain} {wire(self.default)}{mark} {self.description}"

    def parse(self, text: str) -> Any:
        """The value ``text`` stands for, or ``bad_value``."""
        if self.kind == "int":
            n = _wire_int(text)
            if n is None or not self.lo <= n <= self.hi:
                raise _bad("bad_value", f"{self.name} must_be {self.lo}..{self.hi}, got "
                                        f"{quote(clip(text, 40))}")
            return n
        if self.kind == "bool":
            if text not in ("true", "false"):
                raise _bad("bad_value", f"{self.name} must_be true|false, got {quote(text)}")
            return text == "true"
        if self.kind == "enum":
            if text not in self.choices:
                raise _bad("bad_value", f"{self.name} must_be {'|'.join(self.choices)}, got "
                                        f"{quote(text)}")
            return text
        return text


def wire(value: Any) -> str:
    """A key's value as it is written on the wire."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


DEFAULT_PLY = 3
"""``engine.ply`` at start: UBGI 3-ply, the engine's (GNU Backgammon's) 2-ply."""
EVAL_MODES = ("auto", "cubeless", "cubeful")
"""``game.evalmode``'s values (v0.1's recommended ``EvalMode``, with ``auto``)."""


def _keys() -> dict[str, Key]:
    keys = [
        Key("game.variant", "enum", "backgammon", "the game played: backgammon, or one "
            "of the family (docs/ubgi.md says how each game's position is written)",
            choices=VARIANTS),
        Key("game.evalmode", "enum", "auto", "what go chequer's plays are ranked by: "
            "cubeful (the session's cube and score), cubeless (cubeless money equity, "
            "gammons counting, as a dueller scoring cubeless games counts them), auto "
            "(cubeless until the controller shows a cube in play: newsession, setscore, "
            "setcube, a Match ID or an XGID, go cube, go take, go turn)",
            choices=EVAL_MODES),
        Key("engine.ply", "int", DEFAULT_PLY, "root-inclusive decision depth of checker "
            "play and cube decisions (UBGI 1-ply is GNU Backgammon's 0-ply)",
            lo=1, hi=MAX_PLY + 1),
        Key("engine.threads", "int", cascade_threads(), "threads a large search level "
            "is split over (the results do not depend on it)", lo=1, hi=64, minor=True),
        Key("engine.seed", "int", 1, "accepted and kept; no decision of the engine "
            "draws random numbers", lo=0, hi=2 ** 63 - 1, minor=True),
        Key("engine.deterministic", "bool", True, "always true: equal positions, dice "
            "and keys give equal answers (false is refused)", minor=True),
        Key("engine.info", "bool", True, "write info and eval lines before each "
            "bestmove, bestcube and bestturn", minor=True),
    ]
    return {k.name: k for k in keys}


# v0.1's setoption names of the same settings
_V01_OPTIONS = {"Threads": "engine.threads", "Seed": "engine.seed",
                "Deterministic": "engine.deterministic", "Variant": "game.variant",
                "EvalMode": "game.evalmode"}


_MAX_DIGITS = 30
"""Digits an integer on the wire may have: more are refused as ``bad_value`` before
Python's ``int`` is asked (it refuses over 4,300 with an error of its own)."""


def _wire_int(text: str) -> int | None:
    """The integer ``text`` writes (a sign, then at most :data:`_MAX_DIGITS` ASCII digits),
    or ``None``. The one reader of integers on the wire: keys and command arguments."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _MAX_DIGITS:
        return None
    return int(text)


DETAIL_LIMIT = 1000
"""Characters of an error line's detail: the inputs it quotes are already cut to
:data:`engine.errors.QUOTE_LIMIT` with their length said, and a detail cut again at that
limit said the length of the message instead of the input's."""


def _int(text: str, what: str, lo: int = 0, hi: int | None = None) -> int:
    n = _wire_int(text)
    if n is None or n < lo or (hi is not None and n > hi):
        span = f"{lo}..{hi}" if hi is not None else f"{lo} or more"
        raise _bad("bad_value", f"{what} {quote(clip(text, 40))}: expected an integer {span}")
    return n


BLANKS = " \t"
"""The characters that separate words (docs/ubgi.md): spaces and tabs only. Any other
character, a no-break space or another Unicode space included, is part of a word, so
``dice 3``, a no-break space, ``1`` is one word (``bad_command``), not the roll 3-1."""
_GAP = re.compile(r"[ \t]+")
BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark, which Windows tools write at the start of a file: skipped at
the start of the input (the JSON protocol, :mod:`engine.cli.protocol`, skips one too),
so that the first command is not ``unknown command '\\ufeffubgi'``."""


def _words(text: str) -> list[str]:
    """``text``'s words, split at runs of :data:`BLANKS` (``str.split`` with no
    separator would split at any Unicode white space)."""
    return [w for w in _GAP.split(text) if w]


def _first_word(text: str) -> tuple[str, str]:
    """``text`` split at its first run of :data:`BLANKS`: the word and the rest, both
    stripped of them."""
    parts = _GAP.split(text.strip(BLANKS), maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _on_off(text: str, what: str) -> bool:
    if text not in ("on", "off"):
        raise _bad("bad_value", f"{what} {quote(text)}: expected on or off")
    return text == "on"


def _point(p: int) -> str:
    return "bar" if p == BAR else "off" if p == OFF else str(p)


def move_payload(before: Position, after: Position, dice) -> str:
    """``bestmove``'s payload: the play as single-die ``from/to`` steps in the mover's
    numbering (``bar``, ``off``), in an order they can be played, one step for each die
    the play uses (:func:`~engine.notation.movetext.die_steps`); ``pass`` for none."""
    steps = die_steps(before, after, dice)
    return " ".join(f"{_point(p)}/{_point(q)}" for p, q in steps) or "pass"


def _fmt(x: float) -> str:
    return f"{x:.6f}"


# --------------------------------------------------------------------- the session
class Session:
    """One controller's session: keys, match context, position and dice."""

    def __init__(self) -> None:
        self.keys = _keys()
        self.values: dict[str, Any] = {k.name: k.default for k in self.keys.values()}
        self.quit = False
        self.cube_in_play = False
        """Whether the controller has shown a cube in play (``game.evalmode auto``)."""
        self._new_session(0, True, True, False)

    # ------------------------------------------------------------- state
    def _new_session(self, length: int, jacoby: bool, crawford_rule: bool,
                     beavers: bool) -> None:
        self.match_length = length
        self.jacoby = jacoby
        self.crawford_rule = crawford_rule
        self.beavers = beavers
        self.score = {"p0": 0, "p1": 0}
        self.crawford = False
        self._new_game()

    def _new_game(self) -> None:
        self.cube_value = 1
        self.cube_owner = "centre"
        self.max_cube: int | None = None    # an XGID's max cube
        self.turn = "p0"
        self.position: Position | None = None
        self.dice: tuple | None = None
        self.doubled = False

    @property
    def variant(self) -> str:
        return self.values["game.variant"]

    def _other(self, player: str) -> str:
        return "p1" if player == "p0" else "p0"

    def cube_state(self) -> CubeState:
        """The cube and match context, seen from the player on roll."""
        me, them = self.turn, self._other(self.turn)
        owner = ("centre" if self.cube_owner == "centre"
                 else "me" if self.cube_owner == me else "them")
        try:
            if self.match_length:
                return CubeState(self.cube_value, owner, self.match_length,
                                 (self.score[me], self.score[them]), self.crawford,
                                 False, False, self.max_cube)
            return CubeState(self.cube_value, owner, 0, (0, 0), False, self.jacoby,
                             self.beavers, self.max_cube)
        except NardyError as exc:
            raise _bad("bad_state", f"cube and score: {exc}") from None

    def _search(self):
        try:
            return _decide.search_for(self.variant, self.values["engine.threads"])
        except NardyError as exc:
            raise _bad("bad_state", f"no model for {self.variant}: {exc}") from None

    # ------------------------------------------------------------- lines
    def handle(self, line: str) -> list[str]:
        """The reply lines to one command line (never raises)."""
        # the line's end (LF, a CR before it) goes; only spaces and tabs are blank
        text = line.removesuffix("\n").removesuffix("\r").strip(BLANKS)
        if not text:
            return []
        word, rest = _first_word(text)
        handler = self._COMMANDS.get(word)
        try:
            if handler is None:
                raise _bad("bad_command", f"unknown command {quote(clip(word, 40))}")
            return handler(self, rest)
        except UbgiError as exc:
            return [f"error {exc.code} {' '.join(clip(exc.detail, DETAIL_LIMIT).split())}"]
        except NardyError as exc:
            return [f"error bad_value {' '.join(clip(str(exc), DETAIL_LIMIT).split())}"]
        except Exception as exc:  # a bug: report it, keep going
            traceback.print_exc(file=sys.stderr)
            return [f"error bad_state internal error: {describe(exc)}"]

    def _no_args(self, name: str, rest: str) -> None:
        if rest:
            raise _bad("bad_command", f"{name} takes no arguments, got {quote(rest)}")

    def cmd_ubgi(self, rest: str) -> list[str]:
        self._no_args("ubgi", rest)
        return [f"id name {NAME}", f"id author {AUTHOR}", f"id version {VERSION}",
                f"proto {PROTO}", *self._key_lines(), "ubgiok"]

    def _key_lines(self) -> list[str]:
        return [k.line() for k in self.keys.values()]

    def cmd_isready(self, rest: str) -> list[str]:
        self._no_args("isready", rest)
        search = self._search()
        start = Position.start(self.variant)
        # the search kernels compile here on a first run, not in the first go
        search.evaluate(start, 1)
        search.analyse(start, (4, 2) if self.variant != "gul_bara" else (2, 1), 0, top=1)
        return ["readyok"]

    def cmd_quit(self, rest: str) -> list[str]:
        # ``quit now`` is refused like ``stop now``: only ``quit`` itself ends the session
        self._no_args("quit", rest)
        self.quit = True
        return []

    def cmd_stop(self, rest: str) -> list[str]:
        # every go has answered before the next line is read: nothing runs to stop
        self._no_args("stop", rest)
        return []

    def cmd_keys(self, rest: str) -> list[str]:
        self._no_args("keys", rest)
        return self._key_lines()

    def cmd_get(self, rest: str) -> list[str]:
        if len(_words(rest)) != 1:
            raise _bad("bad_command", "expected: get <key>")
        if rest not in self.keys:
            raise _bad("unsupported", f"key {quote(rest)}")
        return [f"value {rest} {wire(self.values[rest])}"]

    def cmd_set(self, rest: str) -> list[str]:
        name, value = _first_word(rest)
        if not name or not value:
            raise _bad("bad_command", "expected: set <key> <value>")
        return self._set(name, value)

    def _set(self, name: str, value: str) -> list[str]:
        if name not in self.keys:
            raise _bad("unsupported", f"key {quote(name)}")
        parsed = self.keys[name].parse(value)
        if name == "engine.deterministic" and not parsed:
            raise _bad("bad_value", "engine.deterministic must_be true: the engine has no "
                                    "non-deterministic mode")
        if name == "game.variant" and parsed != self.variant:
            self.position, self.dice, self.doubled = None, None, False
        self.values[name] = parsed
        return []

    def cmd_setoption(self, rest: str) -> list[str]:
        """v0.1's ``setoption name <Name> value <Value>`` (``Threads``, ``Seed``,
        ``Deterministic``, ``Variant``, ``EvalMode`` or a v0.2 key name)."""
        words = _words(rest)
        if words[:1] != ["name"] or "value" not in words[2:-1]:
            raise _bad("bad_command", "expected: setoption name <Name> value <Value>")
        at = words.index("value", 2)
        name, value = " ".join(words[1:at]), " ".join(words[at + 1:])
        return self._set(_V01_OPTIONS.get(name, name), value)

    def cmd_newgame(self, rest: str) -> list[str]:
        self._no_args("newgame", rest)
        self._new_game()
        return []

    def cmd_newsession(self, rest: str) -> list[str]:
        words = _words(rest)
        if len(words) % 2:
            raise _bad("bad_command", "expected: newsession type <money|match> [length <N>] "
                                      "[jacoby <on|off>] [crawford <on|off>] "
                                      "[beavers <on|off>]")
        opts: dict[str, str] = {}
        for k, v in zip(words[::2], words[1::2]):
            if k not in ("type", "length", "jacoby", "crawford", "beavers"):
                raise _bad("bad_command", f"newsession: unknown field {quote(k)}; expected "
                                          f"type, length, jacoby, crawford, beavers")
            if k in opts:
                raise _bad("bad_command", f"newsession: field {k} given twice")
            opts[k] = v
        kind = opts.get("type", "match" if "length" in opts else "money")
        if kind not in ("money", "match"):
            raise _bad("bad_value", f"newsession type {quote(kind)}: expected money or match")
        if kind == "match":
            if "length" not in opts:
                raise _bad("bad_value", "newsession type match needs length <N>")
            length = _int(opts["length"], "newsession length", 1, MAX_MATCH)
        else:
            if "length" in opts and _int(opts["length"], "newsession length", 0) != 0:
                raise _bad("bad_value", "newsession type money takes no length but 0")
            length = 0
        jacoby = _on_off(opts.get("jacoby", "on"), "newsession jacoby")
        crawford = _on_off(opts.get("crawford", "on"), "newsession crawford")
        beavers = _on_off(opts.get("beavers", "off"), "newsession beavers")
        if beavers and length:
            raise _bad("bad_value", "newsession beavers on: beavers are a money-play option")
        self._new_session(length, jacoby, crawford, beavers)
        self.cube_in_play = True
        return []

    def cmd_setscore(self, rest: str) -> list[str]:
        words = _words(rest)
        if len(words) not in (2, 3):
            raise _bad("bad_command", "expected: setscore <p0> <p1> [crawford|postcrawford]")
        length = self.match_length
        hi = length - 1 if length else None
        new = {"p0": _int(words[0], "setscore p0", 0, hi),
               "p1": _int(words[1], "setscore p1", 0, hi)}
        mark = words[2] if len(words) == 3 else None
        if mark not in (None, "crawford", "postcrawford"):
            raise _bad("bad_value", f"setscore: {quote(clip(mark, 40))}; expected crawford "
                                    f"or postcrawford")
        one_away = length and length - 1 in new.values()
        if mark and not one_away:
            raise _bad("bad_value", f"setscore ... {mark}: only in a match with a player "
                                    f"1-away")
        if mark == "crawford" and new["p0"] == new["p1"]:
            raise _bad("bad_value", "setscore ... crawford: both players 1-away is after "
                                    "the Crawford game")
        if mark is not None:
            crawford = mark == "crawford"
        elif not one_away or not self.crawford_rule or new["p0"] == new["p1"]:
            crawford = False
        elif length - 1 not in self.score.values():
            crawford = True             # a player has just reached 1-away
        elif new == self.score:
            crawford = self.crawford    # the same score again
        else:
            crawford = False            # the score moved on with a player 1-away
        if crawford and self.cube_owner != "centre":
            raise _bad("bad_state", "the Crawford game with a turned cube")
        self.score, self.crawford = new, crawford
        self.cube_in_play = True
        return []

    def cmd_setcube(self, rest: str) -> list[str]:
        words = _words(rest)
        usage = "expected: setcube value <N> owner <center|p0|p1>"
        if len(words) != 4:
            raise _bad("bad_command", usage)
        opts = dict(zip(words[::2], words[1::2]))
        if set(opts) != {"value", "owner"}:
            raise _bad("bad_command", usage)
        value = _int(opts["value"], "setcube value", 1, CUBE_LIMIT)
        if value & (value - 1):
            raise _bad("bad_value", f"setcube value {value}: expected a power of two")
        owner = {"center": "centre", "centre": "centre", "p0": "p0", "p1": "p1"}.get(
            opts["owner"])
        if owner is None:
            raise _bad("bad_value", f"setcube owner {quote(opts['owner'])}: expected center, "
                                    f"p0 or p1")
        if (owner == "centre") != (value == 1):
            raise _bad("bad_value", f"setcube value {value} owner {opts['owner']}: a centred "
                                    f"cube is at 1, an owned cube at 2 or more")
        if owner != "centre" and self.crawford:
            raise _bad("bad_state", "setcube: the Crawford game has no cube")
        if self.match_length and value > MATCH_CUBE_LIMIT:
            # refused here, as a Match ID or XGID holding it is, not at each go
            raise _bad("bad_value", f"setcube value {value} in a match: the cube goes up "
                                    f"to {MATCH_CUBE_LIMIT} in a match (higher in money "
                                    f"play only)")
        self.cube_value, self.cube_owner, self.max_cube = value, owner, None
        self.cube_in_play = True
        return []

    def cmd_setturn(self, rest: str) -> list[str]:
        if len(_words(rest)) != 1:
            raise _bad("bad_command", "expected: setturn <p0|p1>")
        if rest not in PLAYERS:
            raise _bad("bad_value", f"setturn {quote(clip(rest, 40))}: expected p0 or p1")
        self.turn = rest
        return []

    # ------------------------------------------------------------- position
    def cmd_position(self, rest: str) -> list[str]:
        """``position ...``: the position, and the dice only when the ID carries them. A
        refused position leaves none: a ``go`` then answers ``bad_state`` rather than
        for the position before. An XGID's max cube lasts until the next ``position``
        (docs/ubgi.md): every form forgets it, and only an XGID sets it again (a
        ``position json`` after an XGID that made the cube dead at 1 kept it dead)."""
        self.max_cube = None
        try:
            return self._position(rest)
        except Exception:
            self.position, self.dice, self.doubled = None, None, False
            raise

    def _position(self, rest: str) -> list[str]:
        kind, arg = _first_word(rest)
        usage = "expected: position gnubgid <ID> | xgid <XGID> | json <Position JSON> | start"
        if kind == "start":
            if arg:
                raise _bad("bad_command", usage)
            self._set_position(Position.start(self.variant))
            return []
        if kind not in ("gnubgid", "xgid", "json") or not arg:
            raise _bad("bad_command", usage)
        if kind == "json":
            try:
                data = json.loads(arg)
            except (ValueError, RecursionError) as exc:
                raise _bad("bad_value", f"position json: not JSON ({exc})") from None
            pos = Position.from_json(data)
            if pos.variant != self.variant:
                raise _bad("bad_value", f"position json: a {pos.variant} position while "
                                        f"game.variant is {self.variant}")
            self._set_position(pos)
            return []
        if self.variant not in ID_GAMES:
            raise _bad("unsupported", f"position {kind} for {self.variant}: its positions "
                                      f"are written as position json")
        if len(_words(arg)) != 1:
            raise _bad("bad_command", f"position {kind} takes one word, got {quote(arg)}")
        if kind == "gnubgid":
            pos, info = position_from_gnubg(arg, self.variant)
            doubled = info is not None and self._match_info(info)
            self._set_position(pos, info.dice if info is not None else None, doubled)
            self.cube_in_play |= info is not None
        else:
            pos, xinfo = parse_xgid(arg, self.variant)
            doubled = self._xgid_info(xinfo)
            self._set_position(pos, xinfo.dice, doubled)
            self.cube_in_play = True
        return []

    def _set_position(self, pos: Position, dice=None, doubled: bool = False) -> None:
        self.position = pos
        self.dice = tuple(dice) if dice else None
        self.doubled = doubled

    def _match_info(self, info: MatchInfo) -> bool:
        """The context a GNU Backgammon Match ID carries: its player 0 is p0. Returns
        whether a double is on offer. In a game without a cube (portes) the cube fields
        (value, owner, Jacoby, the doubled flag) are read and unused: the cube stays
        centred at 1 and no double is on offer, so ``go`` plays the dice instead of
        asking for an answer that ``go take`` cannot give there."""
        if info.game_state not in (GAME_NONE, GAME_PLAYING):
            raise _bad("bad_value", "the Match ID says the game is over")
        if info.resigned:
            raise _bad("unsupported", "a Match ID with a resignation offered")
        turn = PLAYERS[info.on_roll]
        s0, s1 = info.scores_raw
        score = {"p0": s0, "p1": s1}
        if not self._has_cube():
            self._context(turn, info.match_length, score, info.crawford, 1, "centre",
                          self.jacoby, self.beavers)
            return False
        if info.doubled and info.turn == info.on_roll and info.cube_owner == "them":
            # GNU Backgammon's state after a beaver: the doubler to answer, the
            # beaverer owning the cube (refused as an XGID after a beaver is)
            raise _bad("unsupported", "a Match ID after a beaver")
        conflict = match_conflict(info)
        if conflict is not None:
            raise _bad("bad_value", f"the Match ID holds {conflict}")
        owner = info.cube_owner_raw
        self._context(turn, info.match_length, score, info.crawford,
                      info.cube_value, "centre" if owner < 0 else PLAYERS[owner],
                      info.jacoby, self.beavers)
        return info.doubled

    def _xgid_info(self, info: XgidInfo) -> bool:
        """The context an XGID carries: its bottom player (turn 1) is p0. Returns
        whether a double is on offer. In a game without a cube (portes) the cube fields
        (value, owner, max cube, the Jacoby and beaver flags, a double, beaver or
        raccoon in the dice field) are read and unused, as :meth:`_match_info` has it."""
        turn = "p0" if info.turn == 1 else "p1"
        other = self._other(turn)
        score = {turn: info.score[0], other: info.score[1]}
        if not self._has_cube():
            self._context(turn, info.match_length, score, info.crawford, 1, "centre",
                          self.jacoby, self.beavers)
            return False
        if info.cube_action in ("beaver", "raccoon"):
            raise _bad("unsupported", f"an XGID after a {info.cube_action}")
        conflict = xgid_conflict(info)
        if conflict is not None:
            raise _bad("bad_value", f"the XGID holds {conflict}")
        owner = {"centre": "centre", "me": turn, "them": other}[info.cube_owner]
        self._context(turn, info.match_length, score, info.crawford, info.cube_value,
                      owner, info.jacoby, info.beaver, info.max_cube)
        return info.cube_action == "double"

    def _context(self, turn, length, score, crawford, value, owner, jacoby, beavers,
                 max_cube=None):
        if length > MAX_MATCH:
            raise _bad("bad_value", f"a match to {length}; expected at most {MAX_MATCH}")
        if length and max(score.values()) >= length:
            raise _bad("bad_value", f"score {score['p0']}-{score['p1']} in a match to "
                                    f"{length}: the match is over")
        names = ("turn", "match_length", "score", "crawford", "cube_value", "cube_owner",
                 "jacoby", "beavers", "max_cube")
        old = {n: getattr(self, n) for n in names}
        self.turn, self.match_length, self.score, self.crawford = turn, length, score, crawford
        self.cube_value, self.cube_owner, self.max_cube = value, owner, max_cube
        if not length:
            self.jacoby, self.beavers = jacoby, beavers
        try:
            self.cube_state()           # checks the combination
        except UbgiError as exc:
            for n, v in old.items():
                setattr(self, n, v)
            raise _bad("bad_value", exc.detail) from None

    def cmd_dice(self, rest: str) -> list[str]:
        words = _words(rest)
        if len(words) != 2:
            raise _bad("bad_command", f"expected: dice <d1> <d2>, got {quote(clip(rest, 40))}")
        d = (_int(words[0], "die", 1, 6), _int(words[1], "die", 1, 6))
        if self.position is not None and self.position.pending:
            raise _bad("bad_state", f"the position has pending dice "
                                    f"{list(self.position.pending)} to play first: go "
                                    f"without dice")
        self.dice = d
        return []

    # ------------------------------------------------------------- go
    def cmd_go(self, rest: str) -> list[str]:
        words = _words(rest)
        role = "chequer"
        if words and words[0] in ("chequer", "checker", "cube", "turn", "take"):
            role = words.pop(0)
        elif words[:1] == ["role"]:         # v0.1: go role <chequer|cube|turn>
            if len(words) < 2:
                raise _bad("bad_command", "expected: go role <chequer|cube|turn>")
            if words[1] not in ("chequer", "cube", "turn"):
                raise _bad("bad_value", f"go role {quote(clip(words[1], 40))}: expected "
                                        f"chequer, cube or turn")
            role = words[1]
            words = words[2:]
        if len(words) % 2:
            raise _bad("bad_command", "expected: go [chequer|cube|turn|take] [depth <n>]")
        ply = self.values["engine.ply"]
        seen: set[str] = set()
        for k, v in zip(words[::2], words[1::2]):
            if k in seen:
                raise _bad("bad_command", f"go: field {k} given twice")
            seen.add(k)
            if k == "depth":
                ply = _int(v, "go depth", 1, MAX_PLY + 1)
            elif k in ("movetime", "nodes", "trials"):
                _int(v, f"go {k}", 0)       # accepted; the search has a fixed size
            else:
                raise _bad("bad_command", f"go: unknown field {quote(k)}")
        if self.position is None:
            raise _bad("bad_state", "missing position")
        if result(self.position) is not None:
            raise _bad("bad_state", "the game is over in this position")
        gnu = ply - 1
        if role in ("cube", "take", "turn"):
            self.cube_in_play = True
        if role in ("chequer", "checker"):
            if self.doubled:
                raise _bad("bad_state", "a double is on offer: go cube answers it")
            return self._go_chequer(gnu, ply)
        if role == "take" or (role == "cube" and self.doubled):
            return self._go_take(gnu, ply)
        if role == "cube":
            return self._go_cube(gnu, ply)
        if self.doubled:
            raise _bad("bad_state", "a double is on offer: go cube answers it")
        return self._go_turn(gnu, ply)

    def _dice_for_go(self):
        pos = self.position
        assert pos is not None
        if pos.pending:
            return None
        if self.dice is None:
            raise _bad("bad_state", "missing dice")
        return self.dice

    def _info(self, ply: int, start: float, extra: str = "") -> list[str]:
        if not self.values["engine.info"]:
            return []
        ms = int(1000 * (time.perf_counter() - start))
        return [f"info depth {ply} time_ms {ms}{extra}"]

    def _eval(self, eq: float, probs, mwc: float | None = None) -> list[str]:
        if not self.values["engine.info"]:
            return []
        w, wg, wbg, lg, lbg = (float(x) for x in probs)
        m = f" mwc {_fmt(mwc)}" if mwc is not None else ""
        return [f"eval eq {_fmt(eq)}{m} pwin {_fmt(w)} pgammon {_fmt(wg)} pbg {_fmt(wbg)} "
                f"plgammon {_fmt(lg)} plbg {_fmt(lbg)}"]

    def _best_move(self, gnu: int, ply: int, start: float) -> tuple[str, list[str]]:
        pos = self.position
        assert pos is not None
        dice = self._dice_for_go()
        cube = None
        if self._has_cube() and self._cubeful():
            try:
                cube = self.cube_state()
            except UbgiError:           # a cube the session cannot hold: play cubeless
                cube = None
        analysis = _decide.best_play(self._search(), pos, dice, gnu, cube)
        best = analysis.best
        payload = move_payload(pos, gnu_ending(pos, best.position, dice), dice)
        lines = self._info(ply, start, f" nodes {analysis.evaluated} score "
                                       f"{_fmt(best.equity)} pv {payload}")
        return payload, lines + self._eval(best.equity, best.probabilities, best.mwc)

    def _go_chequer(self, gnu: int, ply: int) -> list[str]:
        payload, lines = self._best_move(gnu, ply, time.perf_counter())
        return [*lines, f"bestmove {payload}"]

    def _has_cube(self) -> bool:
        return get_rules(self.variant).cube

    def _cubeful(self) -> bool:
        """Whether plays are ranked by cubeful equity (``game.evalmode``): ``auto`` is
        cubeful once the controller has shown a cube in play. A dueller that sends
        positions and dice alone scores cubeless games, where a gammon counts 2: ranked
        by the default session's cubeful money equity (the Jacoby rule, the cube
        centred) a gammon would count for nothing."""
        mode = self.values["game.evalmode"]
        return mode == "cubeful" or (mode == "auto" and self.cube_in_play)

    def _cube(self, gnu: int, ply: int, start: float) -> tuple[bool, list[str]]:
        """Whether the side on roll doubles, and the info and eval lines."""
        if not self._has_cube():
            return False, (["info string no cube in " + self.variant]
                           if self.values["engine.info"] else [])
        pos = self.position
        assert pos is not None
        state = self.cube_state()
        try:
            decision = _decide.cube_advice(self._search(), pos, state, gnu)
        except NardyError as exc:
            raise _bad("bad_state", f"cube decision: {exc}") from None
        double = _decide.doubles(decision)
        eq, mwc = cubeful_value(decision)       # a beavered double: twice the take
        lines = self._info(ply, start, f" score {_fmt(eq)} string {decision.action}")
        return double, lines + self._eval(eq, decision.probabilities, mwc)

    def _go_cube(self, gnu: int, ply: int) -> list[str]:
        double, lines = self._cube(gnu, ply, time.perf_counter())
        return [*lines, f"bestcube {'double' if double else 'nodouble'}"]

    def _go_take(self, gnu: int, ply: int) -> list[str]:
        start = time.perf_counter()
        pos = self.position
        assert pos is not None
        if not self._has_cube():
            raise _bad("bad_state", f"no cube in {self.variant}: no double to answer")
        state = self.cube_state()
        if state.owner != "them" and not state.crawford and state.dead_for(0):
            # as in the Crawford game and at the max cube: no double can be on offer
            raise _bad("bad_state", f"take decision: a double of a dead cube: the player "
                                    f"on roll is {state.away[0]}-away, so winning the "
                                    f"cube's {state.value} already wins him the match; "
                                    f"no double can be on offer")
        search = self._search()
        try:
            ans = _decide.answer(search, pos, state, gnu)
            probs = _decide.probabilities(search, pos, gnu)
        except NardyError as exc:
            raise _bad("bad_state", f"take decision: {exc}") from None
        # the answering side's view: its equity after its answer, on the cube before the
        # double; its own probabilities
        eq = -(ans.double_pass if ans.answer == "pass" else
               2.0 * ans.double_take if ans.answer == "beaver" else ans.double_take)
        mwc = None
        if ans.mwc is not None:
            mwc = 1.0 - ans.mwc["double_pass" if ans.answer == "pass" else "double_take"]
        mine = (1.0 - probs[0], probs[3], probs[4], probs[1], probs[2])
        lines = self._info(ply, start, f" score {_fmt(eq)}")
        return [*lines, *self._eval(eq, mine, mwc), f"bestcube {ans.answer}"]

    def _go_turn(self, gnu: int, ply: int) -> list[str]:
        start = time.perf_counter()
        self._dice_for_go()
        double, cube_lines = self._cube(gnu, ply, start)
        payload, move_lines = self._best_move(gnu, ply, start)
        return [*cube_lines, *move_lines,
                f"bestturn cube={'double' if double else 'nodouble'} move={payload}"]

    _COMMANDS: dict[str, Callable[["Session", str], list[str]]] = {
        "ubgi": cmd_ubgi, "isready": cmd_isready, "quit": cmd_quit, "stop": cmd_stop,
        "keys": cmd_keys, "get": cmd_get, "set": cmd_set, "setoption": cmd_setoption,
        "newgame": cmd_newgame, "newsession": cmd_newsession, "setscore": cmd_setscore,
        "setcube": cmd_setcube, "setturn": cmd_setturn, "position": cmd_position,
        "dice": cmd_dice, "go": cmd_go,
    }


# --------------------------------------------------------------------- the streams
def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
          session: Session | None = None) -> Session:
    """Run a :class:`Session` over the binary streams (default: standard input and
    output) until ``quit`` or end of input; each line is decoded as UTF-8 on its own, a
    byte-order mark at the start of the input skipped (:data:`BOM`)."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    session = session or Session()
    first = True
    while not session.quit:
        read = read_line(stdin, MAX_LINE)
        if read is None:
            break
        raw, size = read
        if size:
            replies = [f"error bad_command a line of {size:,} bytes is longer than the "
                       f"{MAX_LINE:,} read"]
        else:
            if first and raw.startswith(BOM):   # Windows tools write one
                raw = raw[len(BOM):]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                replies = [f"error bad_command the line is not UTF-8 ({exc.reason} at byte "
                           f"{exc.start})"]
            else:
                replies = session.handle(line)
        first = False
        for reply in replies:
            stdout.write(reply.encode("utf-8", "replace") + b"\n")
            stdout.flush()
    return session


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m engine.ubgi`` (no options: ``--help`` says so)."""
    import argparse
    argparse.ArgumentParser(prog="python -m engine.ubgi",
                            description="UBGI v0.2 on standard input and output "
                                        "(docs/ubgi.md): send 'ubgi', then commands, "
                                        "one a line.").parse_args(argv)
    precompile.allow()       # a cold start compiles on two cores
    serve()


if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
