"""A game or a match between a person and the engine, served to the web board.

The game is played by the project's one game loop (:func:`engine.play.match.play_cube_game`,
:func:`~engine.play.match.play_match`, :func:`~engine.play.match.play_tavli_match`) on a
thread of its own. The person is player A: when the loop asks A for a play (or, with
the cube, whether to double and whether to take), the thread waits until a request
answers. A request that is not a legal answer gets a :class:`SessionError` and the game
waits on: bad input never loses a session. The engine (player B) plays its released
network at the session's ply through :class:`engine.search.nply.Search`.
"""

from __future__ import annotations

import secrets
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from engine.cli._decide import (
    accepts_resignation,
    best_play,
    resignation_offer,
    without_cube,
)
from engine.cube.met import GNUBG_LONGEST_MATCH
from engine.errors import NardyError, describe, quote
from engine.notation.matfile import MatchWriter, format_mat, match_header
from engine.notation.movetext import NO_MOVE, format_move
from engine.notation.sgf import format_sgf
from engine.play.match import (
    TAVLI_GAMES,
    DecisionCubePolicy,
    crawford_game,
    play_cube_game,
    play_match,
    play_tavli_match,
)
from engine.play.resign import Resigned, check_level, points as resign_points, words as resign_words
from engine.play.turn import TurnWalk
from engine.rules.position import Position
from engine.rules.scoring import Kind, kind_words
from engine.rules.variants import VARIANTS, get_rules

MODES = ("game", "match", "tavli")
"""``game``: one game (backgammon for money, with the cube when asked); ``match``: a
match to ``length`` points of one game (backgammon with the cube and the Crawford rule);
``tavli``: portes, plakoto and fevga in turn to ``length`` points."""
MAX_PLY = 2
"""The deepest search a session's engine plays at (3-ply takes seconds a move)."""
ACTIONS = ("move", "double", "take", "beaver", "resign", "accept")
"""The answers a session takes (:meth:`GameSession.answer`)."""
MAX_LENGTH = GNUBG_LONGEST_MATCH
"""The longest match a session plays: GNU Backgammon's, the match equity table's reach."""


class SessionError(NardyError):
    """A request a session cannot take: a bad setting, or an answer it did not ask for."""

    code = "invalid_session"


class _Closed(Exception):
    """The session was closed while its game waited for the person."""


@dataclass
class Need:
    """What the game waits for from the person."""

    kind: str
    """``move`` (a play of ``dice``), ``double`` (double or roll), ``take`` (take or
    pass the engine's double), ``beaver`` (having taken it, beaver or not: money play
    with beavers) or ``accept`` (accept or reject the engine's resignation)."""
    position: Position
    """The position, seen from the person."""
    dice: tuple | None = None
    """The roll to play (None: a gul bara pending segment)."""
    walk: TurnWalk | None = None
    """The turn's legal steps (``move``)."""
    cube: Any = None
    """The :class:`engine.cube.decision.CubeState` of the cube decision (``double``,
    ``take``), seen from the side that may double: the person for ``double``, the
    engine for ``take``."""
    doubler: Position | None = None
    """The position the cube decision is about, seen from the side that may double
    (``double``: :attr:`position`; ``take``: the engine's side of it)."""
    level: int = 0
    """The engine's resignation's level (``accept``)."""
    serial: int = 0


class _Resign:
    """The person's resignation, accepted: the answer that makes the game thread raise
    :class:`engine.play.resign.Resigned` where it waited."""

    def __init__(self, level: int):
        self.level = level


class _Person:
    """Player A: every decision is asked of the person through the session."""

    def __init__(self, session: "GameSession"):
        self.session = session

    def choose(self, position, dice, successors) -> int:
        return self.choose_with_cube(position, dice, successors, None)

    def choose_with_cube(self, position, dice, successors, cube) -> int:
        # the cube (from the person's side) is kept for a resignation on this turn
        rules = get_rules(position.variant)
        walk = TurnWalk(position, None if dice is None else tuple(dice), successors, rules)
        return self.session._ask(Need("move", position, walk.dice, walk, cube=cube))

    def double(self, position, state) -> bool:
        return self.session._ask(Need("double", position, cube=state, doubler=position))

    def take(self, position, state) -> bool:
        # the game loop gives the doubler's position and cube; the board stays the
        # person's
        return self.session._ask(Need("take", position.flip(), cube=state,
                                      doubler=position))

    def beaver(self, position, state) -> bool:
        if not self.session.beavers:
            return False
        return self.session._ask(Need("beaver", position.flip(), cube=state,
                                      doubler=position))

    def accept_resignation(self, position, state, level) -> bool:
        # the engine (on roll in ``position``) resigns; the board stays the person's
        return self.session._ask(Need("accept", position.flip(), cube=state,
                                      doubler=position, level=level))


class _Engine:
    """Player B: the released network at the session's ply."""

    def __init__(self, session: "GameSession"):
        self.session = session
        self._cube = DecisionCubePolicy(self._probabilities, session.ply)

    def _probabilities(self, position: Position, ply: int) -> np.ndarray:
        with self.session.lock:
            search = self.session.search_of(position.variant)
            return np.asarray(search.evaluate(position, ply).probabilities, np.float64)

    def choose(self, position, dice, successors) -> int:
        """The engine's play; in a backgammon match without the cube, by the match
        winning chance at the score (:func:`engine.cli._decide.without_cube`)."""
        session = self.session
        if session.mode == "match" and position.variant == "backgammon":
            score = (session.score[1], session.score[0])       # the engine's first
            return self.choose_with_cube(position, dice, successors,
                                         without_cube(session.length, score))
        with session.lock:
            best = session.search_of(position.variant).best(position, dice, session.ply)
        return self._index(best, successors)

    def choose_with_cube(self, position, dice, successors, cube) -> int:
        """With the cube in play, the play of the best cubeful equity at its value (and
        the match score) (:func:`engine.cli._decide.best_play`, as the protocols'
        engines play)."""
        with self.session.lock:
            best = best_play(self.session.search_of(position.variant), position, dice,
                             self.session.ply, cube).best
        return self._index(best, successors)

    @staticmethod
    def _index(best, successors) -> int:
        key = best.position.key()
        for i, s in enumerate(successors):
            if s.key() == key:
                return i
        raise RuntimeError(f"the search's play {best.move!r} is not among the successors")

    def double(self, position, state) -> bool:
        doubles = self._cube.double(position, state)
        if doubles:
            self.session._note(None, "engine", f"doubles to {state.value * 2}",
                               double=state.value * 2)
        return doubles

    def take(self, position, state) -> bool:
        takes = self._cube.take(position, state)
        self.session._on_cube_answer("engine", takes, state.value * 2)
        return takes

    def beaver(self, position, state) -> bool:
        """Having taken the person's double, whether the engine beavers (money play with
        beavers: :meth:`engine.play.match.DecisionCubePolicy.beaver`), logged."""
        if not self.session.beavers:
            return False
        beavers = self._cube.beaver(position, state)
        if beavers:
            self.session._on_beaver("engine", state.value * 4)
        return beavers

    def resign(self, position, state) -> int:
        """Before the engine's roll: the level it resigns at where it is sure to lose
        (:func:`engine.cli._decide.resignation_offer`), not one the person declined in
        this game; logged, and answered by the person (``accept``). In a backgammon
        match without the cube, at the score (:func:`engine.cli._decide.without_cube`)."""
        session = self.session
        if position.is_over():
            return 0
        if state is None and session.mode == "match" and position.variant == "backgammon":
            state = without_cube(session.length, (session.score[1], session.score[0]))
        with session.lock:
            level = resignation_offer(session.search_of(position.variant), position, state)
        if not level or level <= session._declined:
            return 0
        lost = resign_points(level, state)
        session._note(None, "engine", f"resigns {resign_words(level, position.variant)} "
                                      f"({lost} point{'s' if lost != 1 else ''})")
        return level


class GameSession:
    """One game or match against the engine. ``search_of(variant)`` gives the
    :class:`engine.search.nply.Search` of a game; ``lock`` serialises the searches of
    every session and request of a server."""

    def __init__(self, variant: str | None = None, mode: str = "game",
                 length: int | None = None, ply: int = 0, cube: bool = False,
                 seed: int | None = None, beavers: bool = False, *, search_of: Callable,
                 lock: threading.Lock | None = None):
        if mode not in MODES:
            raise SessionError(f"mode = {quote(mode)}: expected one of {list(MODES)}")
        if mode == "tavli":
            if variant not in (None, "portes"):
                raise SessionError(f"variant = {quote(variant)}: a tavli match plays "
                                   f"portes, plakoto and fevga in turn; give none or "
                                   f"'portes'")
            variant = "portes"
        if variant is None:
            variant = "backgammon"
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise SessionError(f"variant = {quote(variant)}: expected one of {list(VARIANTS)}")
        if mode == "game":
            if length is not None and (type(length) is not int or length != 0):
                raise SessionError(f"length = {quote(length)}: a single game has no "
                                   f"length (mode 'match' plays to a length)")
            length = 0
        elif isinstance(length, bool) or not isinstance(length, int) or not (
                1 <= length <= MAX_LENGTH):
            raise SessionError(f"length = {quote(length)}: expected an integer "
                               f"1..{MAX_LENGTH} for a {mode}")
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_PLY:
            raise SessionError(f"ply = {quote(ply)}: expected an integer 0..{MAX_PLY}")
        if not isinstance(cube, bool):
            raise SessionError(f"cube = {quote(cube)}: expected true or false")
        if cube and variant != "backgammon":
            raise SessionError(f"cube: {'a tavli match' if mode == 'tavli' else variant} "
                               f"has no doubling cube (backgammon only)")
        if not isinstance(beavers, bool):
            raise SessionError(f"beavers = {quote(beavers)}: expected true or false")
        if beavers and not (cube and mode == "game"):
            raise SessionError("beavers: a money game's option (mode 'game' with the "
                               "cube)")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or not 0 <= seed < 2 ** 63):
            raise SessionError(f"seed = {quote(seed)}: expected an integer 0..2^63-1")
        for v in TAVLI_GAMES if mode == "tavli" else (variant,):
            search_of(v)       # a game without a model: refused now (no_model), not mid-game
        self.id = secrets.token_hex(8)
        self.variant, self.mode, self.length, self.ply = variant, mode, length, ply
        self.cube_on = cube
        self.beavers = beavers
        """Money play with beavers: a side that takes may redouble at once, keeping the
        cube."""
        self.search_of = search_of
        self.lock = lock or threading.Lock()
        self._rng = np.random.default_rng(seed)
        self._cond = threading.Condition()
        self._need: Need | None = None
        self._answer: Any = None
        self._serial = 0
        self._closed = False
        self.board = Position.start(variant)
        """The position now, seen from the person."""
        self.cube_value, self.cube_owner = 1, "centre"
        self.score = [0, 0]
        self.crawford = False
        """This game is a match's Crawford game."""
        self._crawford_done = False
        self.game = 1
        self.log: list[dict] = []
        self._writer = MatchWriter()
        """The backgammon games as a match file has them (under ``_cond``)."""
        self._declined = 0
        """The level of the engine's resignation the person declined in this game (it
        offers only a higher one again)."""
        self._refused = 0
        """The level of the person's resignation the engine declined in this game (only
        a higher one may be offered again, as GNU Backgammon has it)."""
        self.finished = False
        self.result: str | None = None
        self.winner: str | None = None
        self.error: str | None = None
        # the engine may think first (it can win the opening roll)
        self._thread = threading.Thread(target=self._run, name=f"session-{self.id}",
                                        daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ the game thread
    def _run(self) -> None:
        person, engine = _Person(self), _Engine(self)
        players = (person, engine)
        try:
            if self.mode == "game":
                rec = play_cube_game(players, self._rng, self.variant,
                                     cube_policies=players if self.cube_on else None,
                                     beavers=self.beavers, on_turn=self._on_turn)
                self._on_result(rec)
            elif self.mode == "match":
                match = play_match(self.length, players, self._rng, self.variant,
                                   cube_policies=players if self.cube_on else None,
                                   on_turn=self._on_turn, on_game=self._on_game)
                self._on_match(match)
            else:
                match = play_tavli_match(self.length, players, self._rng,
                                         on_turn=self._on_turn, on_game=self._on_game)
                self._on_match(match)
        except _Closed:
            pass
        except NardyError as exc:          # e.g. a model file gone since the start
            self.error = f"the game stopped: {exc}"
        except Exception as exc:           # a bug: the session ends, the server goes on
            traceback.print_exc(file=sys.stderr)
            self.error = f"the game stopped on an internal error: {describe(exc)}"
        finally:
            with self._cond:
                self.finished = True
                self._need = None
                self._cond.notify_all()

    def _ask(self, need: Need):
        with self._cond:
            self._serial += 1
            need.serial = self._serial
            # the game's name too: a tavli game the person starts asks before any turn
            # of it is played (it stayed the last game's; helper 135)
            self.board, self.variant = need.position, need.position.variant
            self._need, self._answer = need, None
            self._cond.notify_all()
            while self._answer is None and not self._closed:
                self._cond.wait()
            if self._closed:
                raise _Closed()
            answer, self._answer, self._need = self._answer, None, None
            self._cond.notify_all()
        assert answer is not None
        if isinstance(answer[0], _Resign):
            raise Resigned(0, answer[0].level)      # the game ends where it waited
        return answer[0]

    def _note(self, dice, who: str, text: str, double: int = 0) -> None:
        with self._cond:
            self.log.append({"game": self.game, "who": who, "dice": dice, "move": text})
            if double:
                self._writer.double(int(who == "engine"), double)

    def _on_turn(self, mover: int, before: Position, dice, after: Position) -> None:
        text = format_move(before, after, dice)
        roll = list(dice) if dice is not None else list(before.pending)
        # a roll's successor is seen from the other side, a pending segment's from the mover
        seen = after.flip() if (mover == 0) == (dice is not None) else after
        with self._cond:
            self.variant = before.variant
            self.board = seen
            if before.variant == "backgammon" and dice is not None:
                self._writer.roll(mover, before, after, dice)
            self.log.append({"game": self.game, "variant": before.variant,
                             "who": "you" if mover == 0 else "engine",
                             "dice": roll, "pending": dice is None,
                             "move": text if text else NO_MOVE})

    def _on_cube_answer(self, who: str, takes: bool, value: int) -> None:
        with self._cond:
            if takes:
                self.cube_value, self.cube_owner = value, who
            self._writer.answer(int(who == "engine"), takes)
            self.log.append({"game": self.game, "who": who, "dice": None,
                             "move": "takes" if takes else "passes"})

    def _on_beaver(self, who: str, value: int) -> None:
        with self._cond:
            self.cube_value, self.cube_owner = value, who
            self._writer.beaver(int(who == "engine"), value)
            self.log.append({"game": self.game, "who": who, "dice": None,
                             "move": f"beavers to {value}"})

    def _result_text(self, rec) -> str:
        if rec.winner is None:
            return "a draw"
        who = "you win" if rec.winner == 0 else "the engine wins"
        loser = "the engine" if rec.winner == 0 else "you"
        how = ("the double passed" if rec.passed else
               f"{loser} resigned {resign_words(rec.resigned, rec.variant)}" if rec.resigned
               else kind_words(rec.variant, rec.kind) if rec.kind is not None else "")
        if (not rec.passed and rec.cube_value == 1 and rec.points == 1
                and rec.kind in (Kind.GAMMON, Kind.BACKGAMMON) and self.cube_on
                and self.mode == "game"):
            how += ", a single by the Jacoby rule: the cube was not turned"
        return f"{who} {rec.points} point{'s' if rec.points != 1 else ''}" + (
            f" ({how})" if how else "")

    def _on_result(self, rec) -> None:
        with self._cond:
            if rec.variant == "backgammon":
                self._writer.end(self.game, tuple(self.score), rec.winner, rec.points)
            if rec.winner is not None:
                self.score[rec.winner] += rec.points
            self.result = self._result_text(rec)
            self.winner = None if rec.winner is None else ("you", "engine")[rec.winner]
            self.log.append({"game": self.game, "who": "result", "dice": None,
                             "move": self.result})

    def _on_game(self, game) -> None:
        self._on_result(game.record)
        with self._cond:
            if max(self.score) >= self.length:
                return          # the match is over: no next game, its cube stays shown
            self.game += 1
            self._declined = self._refused = 0
            self.cube_value, self.cube_owner = 1, "centre"
            # the next game's Crawford flag, for the cube advice the page asks for
            self.crawford = self.cube_on and crawford_game(self.score, self.length,
                                                           self._crawford_done)
            self._crawford_done |= self.crawford

    def _on_match(self, match) -> None:
        with self._cond:
            self.game = max(1, len(match.games))
            self.score = list(match.score)
            self.winner = ("you", "engine")[match.winner]
            self.result = (f"{'you win' if match.winner == 0 else 'the engine wins'} the "
                           f"match {match.score[0]}-{match.score[1]}")

    # ------------------------------------------------------------ requests
    def wait(self, serial: int | None = None, timeout: float = 120.0) -> None:
        """Wait until the game asks the person something new (a need other than
        ``serial``) or ends, at most ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: self._moved_on(serial), timeout)

    def moved_on(self, serial: int | None) -> bool:
        """Whether the game asks something other than the question ``serial`` (None:
        anything at all) or has ended: what :meth:`wait` waits for, asked without
        waiting (the web server waits on its event loop, not on a thread)."""
        with self._cond:
            return self._moved_on(serial)

    def _moved_on(self, serial: int | None) -> bool:
        return self.finished or (self._need is not None and self._need.serial != serial)

    def _current(self, kind: str) -> Need:
        need = self._need
        if need is None:
            raise SessionError("the game is not waiting for you now"
                               + (" (it is over)" if self.finished else
                                  " (the engine is playing)"))
        if need.kind != kind:
            raise SessionError(f"the game waits for {quote(need.kind)}, not {quote(kind)}")
        return need

    def walk(self, played) -> dict:
        """The person's turn after the steps ``played`` (:meth:`TurnWalk.walk`)."""
        with self._cond:
            need = self._current("move")
        assert need.walk is not None
        return need.walk.walk(_steps(played, "steps")).to_json()

    def act(self, action: Any, timeout: float = 120.0) -> dict:
        """Answer what the game asks: ``{"move": [[from, to, die], ...]}`` for a play,
        ``{"double": true|false}`` before a roll, ``{"take": true|false}`` after the
        engine's double, ``{"accept": true|false}`` after the engine's resignation;
        or, on the person's turn (a play or a cube decision asked), ``{"resign": 1|2|3}``
        (a single game, a gammon, a backgammon: :mod:`engine.play.resign`), which the
        engine accepts, ending the game, or declines (the log says which; the game
        waits on). Returns :meth:`state` once the game asks again or ends."""
        self.wait(self.answer(action), timeout)
        return self.state()

    def answer(self, action: Any) -> int | None:
        """:meth:`act` without the wait: the answer is given to the game, and the serial
        of the question it answers is returned (the game moves on from it), None for a
        resignation the engine declined (the game waits on). An optional
        ``"serial"`` beside the answer names the question it answers (the state's
        ``serial``): an answer sent again (a retried request) after the game has moved
        on is then refused instead of being read as the next question's answer."""
        serial = action.get("serial") if isinstance(action, dict) else None
        fields = set(action) - {"serial"} if isinstance(action, dict) else set()
        if not isinstance(action, dict) or len(fields) != 1 or not fields <= set(ACTIONS):
            raise SessionError(f"action {quote(action)}: expected an object with one field, "
                               f"'move', 'double', 'take', 'beaver', 'resign' or 'accept' "
                               f"(and optionally 'serial', the question it answers)")
        if "serial" in action and (type(serial) is not int or serial < 1):
            raise SessionError(f"serial = {quote(serial)}: expected the serial of the "
                               f"question answered (a whole number from 1, the state's "
                               f"'serial')")
        kind = next(k for k in ACTIONS if k in action)
        with self._cond:
            if serial is not None and (self._need is None or self._need.serial != serial):
                raise SessionError(f"the game has moved on from question {serial}"
                                   + ("" if self._need is None else
                                      f" (it asks question {self._need.serial} now)")
                                   + "; reload its state")
            if kind == "resign":
                need = self._need
                if need is None or need.kind not in ("move", "double"):
                    if need is None:
                        self._current(kind)         # over, or the engine is playing
                    # (not _current("move"): it named 'move' as the answer sent)
                    raise SessionError(f"a resignation is offered on your turn (the game "
                                       f"waits for {quote(need and need.kind)}, not "
                                       f"'resign')")
            else:
                need = self._current(kind)
        if kind == "resign":
            return self._resign(need, action["resign"])
        if kind == "move":
            assert need.walk is not None
            turn = need.walk.walk(_steps(action["move"], "move"))
            end = turn.end
            if end is None or turn.steps:
                raise SessionError(f"move {quote(action['move'])} does not finish the turn"
                                   + ("; steps are still open" if turn.steps else ""))
            answer: Any = end
        else:
            value = action[kind]
            if not isinstance(value, bool):
                raise SessionError(f"{kind} = {quote(value)}: expected true or false")
            answer = value
        with self._cond:
            if self._need is not need or self._answer is not None:
                # another request answered this question first (its answer may not
                # have been taken up yet): one answer a question
                raise SessionError("the game has moved on (this question was answered "
                                   "already); reload its state")
            if kind == "double" and answer:
                self.log.append({"game": self.game, "who": "you", "dice": None,
                                 "move": f"double to {need.cube.value * 2}"})
                self._writer.double(0, need.cube.value * 2)
            if kind == "beaver":
                if answer:
                    value = need.cube.value * 4
                    self.cube_value, self.cube_owner = value, "you"
                    self._writer.beaver(0, value)
                self.log.append({"game": self.game, "who": "you", "dice": None,
                                 "move": f"beavers to {need.cube.value * 4}" if answer
                                 else "no beaver"})
            if kind == "accept":
                self.log.append({"game": self.game, "who": "you", "dice": None,
                                 "move": "accept" if answer else "reject"})
                if not answer:
                    self._declined = need.level
            if kind == "take":
                self.log.append({"game": self.game, "who": "you", "dice": None,
                                 "move": "take" if answer else "pass"})
                self._writer.answer(0, bool(answer))
                if answer:
                    self.cube_value, self.cube_owner = need.cube.value * 2, "you"
            self._answer = (answer,)
            self._cond.notify_all()
        return need.serial

    def _resign(self, need: Need, level: Any) -> int | None:
        """The person's resignation at ``level`` on the turn ``need`` asks about: the
        engine accepts when resigning is worth no more to the person than playing on
        (his cubeless chances at the score, at the session's ply, or after his best play
        of the dice he rolled: :func:`engine.cli._decide.accepts_resignation`, GNU
        Backgammon's rule), and the game ends where it waited (the serial answered);
        declined, the game goes on waiting (None), and a level at or below it is refused
        for the rest of the game."""
        variant = need.position.variant
        level = check_level(level, get_rules(variant))
        state = need.cube
        if state is None and self.mode == "match" and variant == "backgammon":
            state = without_cube(self.length, tuple(self.score))
        if level <= self._refused:
            raise SessionError(f"the engine declined a resignation of "
                               f"{resign_words(self._refused, variant)} in this game: offer "
                               f"more, or play on")
        with self.lock:
            accepted = accepts_resignation(
                self.search_of(variant), need.position, state, level, self.ply,
                need.dice if need.kind == "move" else None)
        lost = resign_points(level, state)
        with self._cond:
            if self._need is not need or self._answer is not None:
                raise SessionError("the game has moved on (this question was answered "
                                   "already); reload its state")
            self.log.append({"game": self.game, "who": "you", "dice": None,
                             "move": f"resign {resign_words(level, variant)} ({lost} "
                                     f"point{'s' if lost != 1 else ''}): the engine "
                                     f"{'accepts' if accepted else 'declines'}"})
            if not accepted:
                self._refused = level
                return None
            if need.kind == "move" and need.dice is not None and variant == "backgammon":
                self._writer.rolled(0, need.dice)        # the roll, not played
            self._answer = (_Resign(level),)
            self._cond.notify_all()
        return need.serial

    def match_file(self, kind: str = "mat") -> str:
        """The games played so far (the one under way too) as a match file: the
        Jellyfish ``.mat`` text GNU Backgammon and eXtreme Gammon read
        (:func:`engine.notation.matfile.format_mat`), or with ``kind`` ``"sgf"`` GNU
        Backgammon's own SGF (:func:`engine.notation.sgf.format_sgf`); backgammon
        only."""
        if self.variant != "backgammon" or self.mode == "tavli":
            raise SessionError(f"a match file holds backgammon; this session plays "
                               f"{'a tavli match' if self.mode == 'tavli' else self.variant}")
        players = ("you", "nardy")
        length = self.length if self.mode == "match" else 0
        with self._cond:
            record = self._writer.record(length, players,
                                         match_header(players, length, self.cube_on,
                                                      beavers=self.beavers),
                                         self.game, tuple(self.score))
        return format_sgf(record) if kind == "sgf" else format_mat(record)

    def close(self, why: str = "deleted") -> None:
        """End the session; its thread stops at the game's next question. A game not
        over says why it ended (``why``), which a board still waiting on it shows
        (it read ``finished`` with no result and no reason)."""
        with self._cond:
            self._closed = True
            if not self.finished and self.error is None:
                self.error = f"this session was ended ({why}) before its game was over"
            self._cond.notify_all()

    def state(self) -> dict:
        """The session as JSON: the board (seen from the person), what the game waits
        for, the score, the cube and the game log. While the game waits for a cube
        decision (``double`` or ``take``), ``cube_state`` describes it from the side
        that may double (``doubler``, ``"you"`` or ``"engine"``): that side's
        ``position``, the cube's ``value`` and ``owner`` (``"me"`` being the doubler),
        the ``match`` length and ``score`` (the doubler's first) and ``crawford``,
        which is what the protocol's ``cube`` command takes.

        The turn's legal steps (``turn``) are found after the session's lock is let
        go: a gul bara cascade's first walk can take seconds, and the server's event
        loop takes that lock too (:meth:`moved_on`), so that a second request on the
        session held up every session's requests while it ran."""
        with self._cond:
            need = self._need
            out: dict = {
                "id": self.id, "variant": self.variant, "mode": self.mode,
                "length": self.length, "ply": self.ply, "game": self.game,
                "score": {"you": self.score[0], "engine": self.score[1]},
                "cube": ({"value": self.cube_value, "owner": self.cube_owner,
                          "crawford": self.crawford} if self.cube_on else None),
                "board": self.board.to_json(), "log": list(self.log),
                "finished": self.finished, "result": self.result, "winner": self.winner,
                "error": self.error,
                "waiting": None if need is None else need.kind,
            }
            if need is not None:
                out["serial"] = need.serial
                out["board"] = need.position.to_json()
                if need.kind == "move":
                    assert need.walk is not None
                    out["dice"] = None if need.dice is None else list(need.dice)
                    out["pending"] = need.dice is None
                if need.kind == "accept":
                    lost = resign_points(need.level, need.cube)
                    out["resignation"] = {
                        "level": need.level, "points": lost,
                        "words": resign_words(need.level, need.position.variant)}
                elif need.cube is not None and need.kind in ("double", "take", "beaver"):
                    assert need.doubler is not None
                    out["cube_state"] = {"doubler": "you" if need.kind == "double"
                                         else "engine",
                                         "beavers": self.beavers,
                                         "position": need.doubler.to_json(),
                                         "value": need.cube.value, "owner": need.cube.owner,
                                         "match": need.cube.match_length,
                                         "score": list(need.cube.score),
                                         "crawford": need.cube.crawford}
        if need is not None and need.kind == "move":
            assert need.walk is not None
            out["turn"] = need.walk.walk().to_json()       # a need never changes
        return out


def _steps(played: Any, name: str) -> list:
    if not isinstance(played, list):
        raise SessionError(f"{name} = {quote(played)}: expected a list of [from, to, die]")
    return played
