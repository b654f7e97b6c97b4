"""``python -m engine.play``: play a game or a match against the engine in a terminal.

    python -m engine.play --variant backgammon
    python -m engine.play --variant long_nardy --match 5 --seed 7
    python -m engine.play --variant tavli --match 5          # portes, plakoto, fevga in turn
    python -m engine.play --variant plakoto --engine heuristic
    python -m engine.play --variant backgammon --engine runs/bg80/model.npz

You are X and the board is always drawn from your side: you move from your point 24
toward 1. The program rolls the dice (``--seed`` makes a session repeatable). At your
prompt type a move in the usual notation (``24/18 13/11``, ``bar/22*``, ``6/off``,
``8/5(2)``), or one of:

=============  =================================================================
``moves``      list the legal plays, numbered
``<n>``        play the legal play numbered ``n`` in that list
``hint [k]``   the engine's top ``k`` plays (default 5) with their values
``board``      draw the board again
``resign [l]`` resign: ``single`` (default), ``gammon`` or ``backgammon`` (tavli:
               ``double``; nardy: ``oyn``, ``mars``, ``koks`` where the rules
               score one; or 1, 2, 3; ``help`` names the game's), the engine
               accepting or declining
``help``       this list
``quit``       leave (also at the end of the input)
=============  =================================================================

The engine is ``--engine auto`` (default: the released network ``models/<variant>.npz``
when there is one, else the heuristic of :mod:`engine.eval.heuristic`), ``heuristic``,
``model`` (the released network, required) or the path of a model file. It plays
greedily (one ply); ``hint`` ranks your plays with the same engine. Lost turns and
forced plays are announced; gul bara dice passed on by a cascade are played as their
own segment before the roll.

Scoring: a single game shows its result; ``--match N`` plays to N points. Backgammon
and portes open every game with the opening roll; in the other games the winner of a
game starts the next one, rolling both dice. ``--variant tavli`` is a tavli match
(:data:`engine.play.match.TAVLI_GAMES` in rotation, to ``--match`` points, default 5).

``--cube`` (backgammon, with a network engine) plays with the doubling cube: before
each of your rolls, when you may double, type ``double`` or ``roll`` (``cube`` for the
engine's advice); when the engine doubles, ``take`` or ``pass``. The engine doubles and
answers as :func:`engine.cube.decision.cube_decision` advises at 0-ply, and ranks its
plays (and your hints) by cubeful equity, as GNU Backgammon does where the cube is in
play. A single game is a money game (the Jacoby rule: a gammon counts for nothing while
the cube is centred); a match has its Crawford game. ``--beavers`` (a money game with
the cube): having taken a double, a side may beaver, redoubling at once and keeping the
cube; you are asked, and the engine beavers as its cube decision says.

Resignations (:mod:`engine.play.resign`), as GNU Backgammon has them: ``resign`` at
your move or cube prompt offers the game for a single game, a gammon or a backgammon
(that many times the cube; ``norm``, ``gam``, ``back`` and the like name them too); the
engine accepts when that gives it at least what it expects from playing on, by your
cubeless chances at the score (after your best play of the dice you rolled), by the
released network: GNU Backgammon's rule. A level it declined is not offered again in
that game. The engine resigns before its roll where it is sure to lose (GNU
Backgammon's rule: playing on is worth exactly a loss, e.g. a lost race by the bear-off
tables); ``accept`` or ``reject`` it. Declined, it does not offer the same again in
that game.

``--save FILE.mat`` (backgammon) writes the games to a match file after each game and at
quit (:func:`engine.notation.matfile.format_mat`), which GNU Backgammon, eXtreme Gammon
and ``python -m engine.review`` read; a name ending ``.sgf`` gets GNU Backgammon's own
SGF (:func:`engine.notation.sgf.format_sgf`). Its folder must exist and take a file: a
small file is written into it and removed before play begins, so a folder that cannot
be written into is refused at once rather than after the first game. A write that
fails later (a full disk, the folder removed) is reported on standard error and play
goes on: the games stay in memory and are all written again after the next game and at
quit; a write that fails at quit puts them in a file in the temporary folder
(:func:`tempfile.gettempdir`), named in the error, and the exit status is 1.

:func:`main` takes ``argv``, ``stdin`` and ``stdout``, so tests drive it with scripted
input; it reads one line per prompt.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence, TextIO

import numpy as np

from engine.cli._common import (
    OutputError,
    WriteError,
    integer,
    is_whole,
    non_negative_int,
    output_file,
    parse_args,
    writing,
)
from engine.cli._decide import (
    accepts_resignation,
    cubeful,
    resignation_offer,
    without_cube,
)
from engine.cube.decision import CubeState
from engine.cube.met import default_table
from engine.errors import NardyError, clip, quote
from engine.eval.heuristic import HeuristicPlayer
from engine.eval.network import atomic_write_bytes
from engine.movegen.generate import successors
from engine.notation.board import render
from engine.notation.matfile import MatchWriter, format_mat, match_header
from engine.notation.movetext import NO_MOVE, format_move, parse_move
from engine.notation.sgf import format_sgf
from engine.play.game import CubeRules, play
from engine.play.match import TAVLI_GAMES, DecisionCubePolicy, crawford_game
from engine.play.resign import (
    Resigned,
    check_level,
    most,
    points as resign_points,
    words as resign_words,
)
from engine.rules.dice import Dice, roll_one
from engine.rules.position import Position
from engine.rules.scoring import Kind, flip_probs, kind_words
from engine.rules.variants import VARIANTS, Rules, get_rules
from engine.search import precompile
from engine.search.bearoff_cube import cubeful_play_values

MATCH_CUBE_LIMIT_LENGTH = default_table().length
"""The longest match ``--cube`` plays (the match equity table's reach)."""
HUMAN, ENGINE = 0, 1
"""Player numbers: you are 0, the engine 1."""
TAVLI = "tavli"
"""The ``--variant`` that plays a tavli match."""
HINTS = 5
"""Plays ``hint`` shows by default."""

_HELP = ("Type a move (e.g. 24/18 13/11, bar/22*, 6/off, 8/5(2), or GNU Backgammon's "
         "'move 24 18 13 11'), or: moves (list the legal plays; the first 1,000 of a gul "
         "bara cascade, 'moves all' for every one), <n> (play number n of that list), hint "
         "[k], board (or 'show board'), show pipcount, resign [{levels}], "
         "help, quit. At the cube prompts, GNU Backgammon's words: hint, accept, reject, "
         "agree, decline, beaver.")
_LEVEL_WORDS = {"backgammon": "single|gammon|backgammon", "portes": "single|double",
                "plakoto": "single|double", "fevga": "single|double",
                "long_nardy": "oyn|mars", "gul_bara": "oyn|mars"}
"""The words of each game's resignation levels that :data:`RESIGN_WORDS` reads, for the
help (long nardy's ``koks`` added where its rules score one)."""


def help_text(rules) -> str:
    """The commands at a move prompt, the resignation levels in ``rules``' game's words."""
    levels = _LEVEL_WORDS[rules.variant] + ("|koks" if most(rules) == 3
                                            and rules.variant != "backgammon" else "")
    return _HELP.format(levels=levels)


RESIGN_WORDS = {"single": 1, "normal": 1, "oyn": 1, "gammon": 2, "double": 2, "mars": 2,
                "backgammon": 3, "koks": 3}
"""What ``resign`` takes, by level: these words or any start of one (GNU Backgammon's
``norm``, ``gam``, ``back``; FIBS' ``n``, ``g``, ``b``), or 1, 2, 3; nothing is a
single game."""


def resign_level(word: str) -> int | None:
    """The level ``resign <word>`` names (:data:`RESIGN_WORDS`), None for none."""
    if word in ("", "1", "2", "3"):
        return int(word or 1)
    found = {level for name, level in RESIGN_WORDS.items() if name.startswith(word)}
    return found.pop() if len(found) == 1 else None

LISTED = 1000
"""Plays ``moves`` lists (``moves all``: every one); only a gul bara cascade has more."""

MOVE_WORDS = ("m", "mo", "mov", "move")
"""GNU Backgammon's ``move`` (and the starts of it it reads) before a play's text."""
_NOT_NOW = {
    **dict.fromkeys(("roll", "r"), "the dice are rolled already: you rolled {dice}"),
    **dict.fromkeys(("double", "redouble", "beaver"),
                    "a double is offered before your roll, at the 'cube>' prompt{cube}"),
    **dict.fromkeys(("take", "accept", "agree", "drop", "pass", "reject", "decline"),
                    "no double or resignation is offered now"),
    "new": "no new game or match from here: 'quit', then start python -m engine.play "
           "again (--match N for a match)",
    "undo": "a play cannot be taken back once typed",
}
"""What GNU Backgammon's commands that do nothing at your move prompt are told."""


class Quit(Exception):
    """The player typed ``quit`` or the input ended."""


# --------------------------------------------------------------------- engines
class Engine:
    """The engine's side of one game: a player that can also rank plays for hints."""

    def __init__(self, rules: Rules, name: str, network=None):
        self.rules = rules
        """The game's rules."""
        self.name = name
        """What plays, for people: ``heuristic`` or the model file."""
        self.network = network
        """The :class:`engine.eval.evaluator.Evaluator` of a model, or None (heuristic)."""
        self._heuristic = HeuristicPlayer(rules) if network is None else None

    def scores(self, dice, succ: Sequence[Position],
               cube: CubeState | None = None) -> np.ndarray:
        """Value of each successor for the player choosing it (higher is better):
        cubeless equity for a network, heuristic pips for the heuristic; with the
        ``cube`` of backgammon (money play, or a match the match equity table covers),
        the mover's cubeful equity on the cube's normalised scale
        (:func:`engine.search.bearoff_cube.cubeful_play_values`: exact into a short
        bear-off in money play), as the other engines rank there."""
        if self.network is not None and self.cubeful(cube) and dice is not None:
            mover = flip_probs(np.asarray(self.network.probabilities(list(succ)),
                                          dtype=np.float64))
            return cubeful_play_values(mover, succ, cube)[0]
        if self.network is not None:
            v = np.asarray(self.network.evaluate(list(succ)), dtype=np.float64)
        else:
            v = self._heuristic.values(succ)
        # successors after a roll are seen from the opponent; after a pending segment
        # the same side is still to move
        return v if dice is None else -v

    def cubeful(self, cube: CubeState | None) -> bool:
        """Whether plays are ranked by cubeful equity here: backgammon with the cube,
        money play or a match the match equity table covers."""
        return cubeful(cube, self.rules.variant)

    def choose(self, position: Position, dice, succ: Sequence[Position],
               cube: CubeState | None = None) -> int:
        """Index of the play the engine makes (the first of equal values)."""
        return int(np.argmax(self.scores(dice, succ, cube)))

    @property
    def unit(self) -> str:
        """What :meth:`scores` measures."""
        return "equity" if self.network is not None else "score"


def make_engine(spec: str, variant: str) -> Engine:
    """The engine ``spec`` names (``auto``, ``heuristic``, ``model`` or a model path)
    for ``variant``; raises :class:`NardyError` when the model is missing or is for
    another game."""
    from engine.eval.evaluator import Evaluator, NoModelError, model_path
    rules = get_rules(variant)
    if spec == "heuristic":
        return Engine(rules, "heuristic")
    if spec in ("auto", "model"):
        path = model_path(variant)
        if not path.exists():
            if spec == "model":
                raise NoModelError(f"no trained model for {variant} yet (expected {path})")
            return Engine(rules, "heuristic")
    else:
        path = Path(spec)
    return Engine(rules, str(path), Evaluator.load(variant, path, bearoff=False))


# --------------------------------------------------------------------- the cube
def _cube_words(state: CubeState, engine: bool = False) -> str:
    """The cube, for you; ``state`` seen from the engine when ``engine``."""
    mine, theirs = ("the engine's", "yours") if engine else ("yours", "the engine's")
    holder = {"centre": "in the middle", "me": mine, "them": theirs}[state.owner]
    return f"the cube is at {state.value}, {holder}"


class _HumanCube:
    """Your cube decisions, asked at the prompt (a :class:`engine.play.match.CubePolicy`)."""

    def __init__(self, session: "Session"):
        self.session = session
        self.answer = ""
        """The last answer typed at a cube prompt."""
        self.beaver_now = False
        """``beaver`` was typed at the take prompt (GNU Backgammon's take and beaver)."""

    def double(self, position: Position, state: CubeState) -> bool:
        self.session.say()
        self.session.say(render(position))
        self.session.shown = position           # the turn that follows draws it no more
        doubles = self._ask(f"Before your roll: {_cube_words(state)}. Double or roll? "
                            f"('double', 'roll' or enter; 'cube' for the engine's advice)",
                            "cube> ", ("double", "d"), ("roll", "r", "", "no"),
                            lambda: self._advice(position, state), position,
                            lambda word: self.session.resign(word, position, state))
        if doubles:
            self.session.say(f"you double to {state.value * 2}.")
            self.session.writer.double(HUMAN, state.value * 2)
        return doubles

    def take(self, position: Position, state: CubeState) -> bool:
        self.session.say()
        self.session.say(render(position.flip()))
        self.session.say("(the engine is on roll)")
        takes = self._ask(f"The engine doubles to {state.value * 2}. Take or pass? ('take' "
                          f"or 'pass'; 'cube' for the engine's advice)", "take> ",
                          ("take", "t", "accept", "yes",    # GNU Backgammon's accept,
                           # reject and (with beavers) beaver, redouble: take and beaver
                           *(("beaver", "redouble") if self.session.beavers else ())),
                          ("pass", "p", "drop", "reject", "no"),
                          lambda: self._advice(position, state, answer=True),
                          position.flip())
        self.beaver_now = takes and self.answer in ("beaver", "redouble")
        self.session.say("you take." if takes else "you pass.")
        self.session.writer.answer(HUMAN, takes)
        return takes

    def _ask(self, question: str, prompt: str, yes: tuple, no: tuple,
             advice: Callable[[], str], board: Position,
             resign: Callable[[str], None] | None = None) -> bool:
        """A yes-or-no cube question at ``prompt`` (``cube`` or GNU Backgammon's
        ``hint``: the engine's advice; ``board``: ``board`` drawn again; ``resign``,
        where given: your resignation, before your roll); the answer typed is kept in
        :attr:`answer`."""
        s = self.session
        s.say(question)
        while True:
            word = s.ask(prompt).lower()
            if word in ("quit", "q", "exit"):
                raise Quit
            if word in yes or word in no:
                self.answer = word
                return word in yes
            if word in ("cube", "hint"):        # GNU Backgammon's hint: the cube's
                s.say(advice())
                continue
            if word in ("board", "show board"):
                s.say(render(board))
                continue
            if word in ("help", "?"):
                s.say(question)
                continue
            if word.split()[:1] == ["resign"] and resign is not None:
                resign(word)                    # raises Resigned when accepted
                continue
            note = ""
            if word in ("beaver", "redouble") and prompt == "take> ":
                note = ("beavers are off (a money game with --cube --beavers); "
                        if not s.beavers else "")
            elif word in ("roll", "r") and prompt != "cube> ":
                note = "the dice are rolled after this answer; "
            s.say(f"{quote(word)}: {note}type '{yes[0]}' or '{no[0]}' (or 'cube', "
                  f"{'resign, ' if resign is not None else ''}'board', 'quit')")

    def beaver(self, position: Position, state: CubeState) -> bool:
        """Having taken the engine's double (``--beavers``), whether you beaver: redouble
        at once to four times the cube, keeping it."""
        if not self.session.beavers:
            return False
        if self.beaver_now:                 # 'beaver' typed at the take prompt
            self.beaver_now = False
            beavers = True
        else:
            beavers = self._ask(f"You own the cube at {state.value * 2}. Beaver (redouble "
                                f"to {state.value * 4}, keeping the cube)? ('beaver' or "
                                f"'no'; 'cube' for the engine's advice)", "beaver> ",
                                ("beaver", "b", "redouble", "yes"), ("no", "n", ""),
                                lambda: self._advice(position, state, answer=True),
                                position.flip())
        if beavers:
            self.session.say(f"you beaver to {state.value * 4}.")
            self.session.writer.beaver(HUMAN, state.value * 4)
        return beavers

    def _advice(self, position: Position, state: CubeState, answer: bool = False) -> str:
        """The engine's cube advice for the side on roll of ``position``."""
        engine = self.session.engine(position.variant)
        assert engine.network is not None              # --cube needs a network
        d = _EngineCube.policy(engine).decide(position, state)
        if answer:
            return (f"the engine would {'take' if d.takes else 'pass'} (doubler's equity: "
                    f"take {d.double_take:+.3f}, pass {d.double_pass:+.3f})")
        options = f"no double {d.no_double:+.3f}"
        if d.double_take is not None:
            options += f", double/take {d.double_take:+.3f}, double/pass {d.double_pass:+.3f}"
        return f"the engine's advice: {d.action.replace('_', ' ')} ({options})"


class _EngineCube:
    """The engine's cube decisions (:class:`engine.play.match.DecisionCubePolicy` on its
    network at 0-ply), announced."""

    def __init__(self, session: "Session", engine: Engine):
        self.session = session
        self._policy = self.policy(engine)

    @staticmethod
    def policy(engine: Engine) -> DecisionCubePolicy:
        network = engine.network

        def probabilities(position: Position, ply: int = 0) -> np.ndarray:
            return np.asarray(network.probabilities([position])[0], np.float64)
        return DecisionCubePolicy(probabilities)

    def double(self, position: Position, state: CubeState) -> bool:
        doubles = self._policy.double(position, state)
        if doubles:
            self.session.say(f"The engine doubles ({_cube_words(state, engine=True)}).")
            self.session.writer.double(ENGINE, state.value * 2)
        return doubles

    def take(self, position: Position, state: CubeState) -> bool:
        takes = self._policy.take(position, state)
        self.session.say(f"The engine {'takes' if takes else 'passes'}.")
        self.session.writer.answer(ENGINE, takes)
        return takes

    def beaver(self, position: Position, state: CubeState) -> bool:
        """Having taken your double (``--beavers``), whether the engine beavers
        (:meth:`engine.play.match.DecisionCubePolicy.beaver`), announced."""
        if not self.session.beavers:
            return False
        beavers = self._policy.beaver(position, state)
        if beavers:
            self.session.say(f"The engine beavers to {state.value * 4}.")
            self.session.writer.beaver(ENGINE, state.value * 4)
        return beavers


# --------------------------------------------------------------------- the session
class Session:
    """One sitting at the terminal: the dice, the engines, the input and output."""

    def __init__(self, engine_spec: str, rng: np.random.Generator, stdin: TextIO,
                 stdout: TextIO, cube: bool = False, save: str | None = None,
                 beavers: bool = False):
        self.engine_spec = engine_spec
        self.save = save
        """A match file (``--save``) the backgammon games are written to after each."""
        self.writer = MatchWriter()
        """The backgammon games as a match file has them."""
        self.length = 0
        """The match's length (0: a single game), for the match file."""
        self.score: tuple = (0, 0)
        """The score before the game under way (you, the engine)."""
        self.number = 0
        """The backgammon games begun."""
        self.rng = rng
        self.stdin = stdin
        self.stdout = stdout
        self.cube = cube
        """Backgammon with the doubling cube."""
        self.beavers = beavers
        """Money play with beavers (``--beavers``)."""
        self.shown: Position | None = None
        """The board just drawn at a cube prompt (the turn after it does not draw it)."""
        self._engines: dict[str, Engine] = {}
        self._declined = 0
        """The level of the engine's resignation you declined in this game (it offers
        only a higher one again)."""
        self._refused = 0
        """The level of your resignation the engine declined in this game (you may offer
        only a higher one again, as GNU Backgammon has it)."""

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def ask(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.say()
            raise Quit
        return line.strip()

    def engine(self, variant: str) -> Engine:
        """The engine of ``variant`` (a model path given for another game of a tavli
        match falls back to ``auto`` there)."""
        if variant not in self._engines:
            spec = self.engine_spec
            if spec not in ("auto", "model", "heuristic"):
                from engine.eval.network import Network
                if Network.load(spec).variant != variant:
                    spec = "auto"
            self._engines[variant] = make_engine(spec, variant)
        return self._engines[variant]

    # ----------------------------------------------------------------- resignations
    def _judge(self, variant: str):
        """The search that judges resignations (the released network, with the
        bear-off tables), None where the game has no model."""
        from engine.cli._decide import search_for
        from engine.eval.evaluator import NoModelError
        try:
            return search_for(variant)
        except NoModelError:
            return None

    def resign(self, word: str, position: Position, cube: CubeState | None,
               dice=None) -> None:
        """Your ``resign [level]`` at a prompt, ``position`` yours, on roll (valued after
        your best play of ``dice`` where you have rolled, as GNU Backgammon values it),
        ``cube`` from your side: the engine accepts (raising
        :class:`engine.play.resign.Resigned`, which ends the game) or declines (play
        on); a level it declined already in this game is not offered again."""
        rules = get_rules(position.variant)
        how = word.split()[1] if len(word.split()) > 1 else ""
        named = resign_level(how)
        if len(word.split()) > 2 or named is None:
            self.say(f"resign {quote(word.split(maxsplit=1)[1])}: expected single, gammon "
                     f"or backgammon (or 1, 2, 3)")
            return
        try:
            level = check_level(named, rules)
        except NardyError as exc:
            self.say(str(exc))
            return
        if level <= self._refused:
            self.say(f"the engine declined your resignation of "
                     f"{resign_words(self._refused, position.variant)} in this game: offer "
                     f"more, or play on")
            return
        search = self._judge(position.variant)
        if search is None:                  # no network to judge: only the most
            accepted = level == most(rules)
        else:
            accepted = accepts_resignation(search, position, cube, level, dice=dice)
        lost = resign_points(level, cube)
        if accepted:
            self.say(f"You resign {resign_words(level, position.variant)}; the engine "
                     f"accepts ({lost} point{'s' if lost != 1 else ''}).")
            if dice is not None and position.variant == "backgammon":
                self.writer.rolled(HUMAN, dice)      # the roll, not played
            raise Resigned(HUMAN, level)
        self._refused = level
        self.say(f"The engine declines your resignation of "
                 f"{resign_words(level, position.variant)}; play on.")

    def _engine_resigns(self, mover: int, position: Position,
                        cube: CubeState | None) -> int:
        """:func:`engine.play.game.play`'s ``resign`` hook: before the engine's roll,
        whether it resigns (:func:`engine.cli._decide.resignation_offer`) and you
        accept; not the same level twice in a game."""
        if mover != ENGINE or position.is_over():
            return 0
        search = self._judge(position.variant)
        if search is None:
            return 0
        level = resignation_offer(search, position, cube)
        if not level or level <= self._declined:
            return 0
        self.say()
        self.say(render(position.flip()))
        lost = resign_points(level, cube)
        self.say(f"The engine resigns {resign_words(level, position.variant)} ({lost} "
                 f"point{'s' if lost != 1 else ''} to you). Accept or reject?")
        while True:
            word = self.ask("resign> ").lower()
            if word in ("quit", "q", "exit"):
                raise Quit
            if word in ("accept", "a", "agree", "yes", "y"):
                self.say("you accept.")
                return level
            if word in ("reject", "r", "no", "n", "decline"):
                self.say("you reject; play on.")
                self._declined = level
                return 0
            self.say(f"{quote(word)}: type 'accept' or 'reject' ('agree', 'decline' "
                     f"too), or 'quit'")

    # ----------------------------------------------------------------- one turn
    def _human_turn(self, pos: Position, roll: Dice | None, rules: Rules,
                    cube: CubeState | None = None) -> Position:
        dice = None if roll is None else (roll.high, roll.low)
        succ = successors(pos, dice, rules)
        if self.shown is not pos:
            self.say()
            self.say(render(pos))
        self.shown = None
        what = (f"pending dice {'-'.join(map(str, pos.pending))} (play them before your "
                f"roll)" if roll is None else f"you rolled {roll}")
        if len(succ) == 1:
            text = format_move(pos, succ[0], dice)
            self.say(f"X {what}: " + ("no legal move, the turn is lost." if text == NO_MOVE
                                      else f"the only legal play is {text}."))
            return succ[0]
        self.say(f"X {what}. Your move ({len(succ)} legal plays; 'help' for commands).")
        texts: dict[int, str] = {}          # move text by play, written when first shown

        def text(i: int) -> str:
            if i not in texts:
                texts[i] = format_move(pos, succ[i], dice)
            return texts[i]

        while True:
            line = self.ask("> ")
            word = " ".join(line.lower().split())       # 'moves  all' is 'moves all'
            if word in ("quit", "q", "exit"):
                raise Quit
            if word in ("help", "?", ""):
                self.say(help_text(get_rules(pos.variant)))
                continue
            if word in ("board", "show board"):
                self.say(render(pos))
                continue
            if word.split()[0] == "show" and word.split()[1:2] and \
                    "pipcount".startswith(word.split()[1]):
                self.say(render(pos).splitlines()[-1])  # GNU Backgammon's show pipcount
                continue
            if word.split()[0] == "show":
                self.say(f"{quote(line)}: 'show board' and 'show pipcount' are shown "
                         f"here (the board, 'board', has the pip counts)")
                continue
            if word.split()[0] in _NOT_NOW:
                cube_note = "" if self.cube else " (a game with the cube: --cube)"
                self.say(_NOT_NOW[word.split()[0]].format(dice=roll, cube=cube_note)
                         + "; type your move, or 'help'")
                continue
            if word.split()[0] in MOVE_WORDS and len(word.split()) > 1:
                line = line.split(maxsplit=1)[1]    # GNU Backgammon's 'move 24/18 13/11'
                word = line.lower()
            if word in ("moves", "moves all"):
                shown = len(succ) if word == "moves all" else min(len(succ), LISTED)
                for k in range(shown):
                    self.say(f"{k + 1:>4}. {text(k)}")
                if shown < len(succ):
                    self.say(f"(the first {shown:,} of {len(succ):,} plays; 'moves all' "
                             f"lists every one, or type a play)")
                continue
            if word.split()[0] == "hint":
                self._hint(word, dice, succ, text, rules, cube)
                continue
            if word.split()[0] == "resign":
                self.resign(word, pos, cube, dice)  # raises Resigned when accepted
                continue
            if is_whole(word):
                # Python reads at most 4,300 digits; no roll has a billion plays
                k = int(word) if len(word) <= 9 else 0
                if not 1 <= k <= len(succ):
                    self.say(f"no play numbered {clip(word, 40)}: there are {len(succ)} "
                             f"legal plays (type 'moves' to list them)")
                    continue
                chosen = succ[k - 1]
            else:
                try:
                    chosen = parse_move(line, pos, dice, succ)
                except NardyError as exc:
                    self.say(f"illegal input: {exc}")
                    self.say("type 'moves' to list the legal plays, or 'help'")
                    continue
            self.say(f"you play {format_move(pos, chosen, dice)}")
            return chosen

    def _hint(self, word: str, dice, succ, text, rules: Rules,
              cube: CubeState | None = None) -> None:
        parts = word.split()
        k = HINTS
        if len(parts) > 1:
            if not is_whole(parts[1]) or not parts[1].strip("0"):
                self.say(f"hint {quote(parts[1])}: expected a positive number of plays")
                return
            k = int(parts[1]) if len(parts[1]) <= 9 else len(succ)
        engine = self.engine(rules.variant)
        scores = engine.scores(dice, succ, cube)
        order = sorted(range(len(succ)), key=lambda i: -scores[i])[:k]
        self.say(f"the engine ({engine.name}) prefers:")
        for i in order:
            unit = ("cubeful equity" if cube is not None and cube.money else
                    "match equity") if engine.cubeful(cube) else engine.unit
            self.say(f"{i + 1:>4}. {text(i):<28} {unit} {scores[i]:+.3f}")

    def _engine_turn(self, pos: Position, roll: Dice | None, rules: Rules,
                     cube: CubeState | None = None) -> Position:
        dice = None if roll is None else (roll.high, roll.low)
        succ = successors(pos, dice, rules)
        what = (f"has the pending dice {'-'.join(map(str, pos.pending))}" if roll is None
                else f"rolls {roll}")
        i = 0 if len(succ) == 1 else self.engine(rules.variant).choose(pos, dice, succ, cube)
        text = format_move(pos, succ[i], dice)
        if text == NO_MOVE:
            self.say(f"O {what}: no legal move, the turn is lost.")
        else:
            self.say(f"O {what} and plays {text} (in its own numbering).")
        return succ[i]

    # ----------------------------------------------------------------- one game
    def _opening(self, rules: Rules) -> tuple[int, Dice | None]:
        while True:
            mine, theirs = roll_one(self.rng), roll_one(self.rng)
            self.say(f"Opening roll: you {mine}, the engine {theirs}.")
            if mine != theirs:
                break
        first = HUMAN if mine > theirs else ENGINE
        who = "You start" if first == HUMAN else "The engine starts"
        if rules.opening_rolls_both:
            self.say(f"{who} and {'roll' if first == HUMAN else 'rolls'} both dice.")
            return first, None
        self.say(f"{who} with {max(mine, theirs)}-{min(mine, theirs)}.")
        return first, Dice(mine, theirs)

    def play_game(self, variant: str, starter: int | None = None, match_length: int = 0,
                  score: tuple = (0, 0), crawford: bool = False):
        """Play one game: of a match to ``match_length`` at ``score`` (you, the engine)
        when it is one (0: a single game), with the cube when the session has it (the
        Crawford game when ``crawford``; a single game is then money play; a backgammon
        match without the cube is still played for the score, the cube dead at 1);
        returns ``(winner, points, kind)`` with winner HUMAN, ENGINE or None (a draw)."""
        rules = get_rules(variant)
        self.say(f"=== {variant} ===" + (" (the Crawford game: no cube)" if crawford
                                         and self.cube else ""))
        if starter is None:
            mover, dice = self._opening(rules)
        else:
            mover, dice = starter, None
            self.say(("You start" if starter == HUMAN else "The engine starts")
                     + " as the winner of the last game.")

        def turn(mover: int, pos: Position, dice, cube_state=None) -> Position:
            if cube_state is None and match_length and variant == "backgammon":
                # a match without the cube: the score still weighs the plays
                cube_state = without_cube(match_length, (score[mover], score[1 - mover]))
            return (self._human_turn if mover == HUMAN else self._engine_turn)(
                pos, dice, rules, cube_state)

        cube = None
        if self.cube and variant == "backgammon":
            cube = CubeRules([_HumanCube(self), _EngineCube(self, self.engine(variant))],
                             match_length, tuple(score), crawford, jacoby=not match_length,
                             beavers=self.beavers and not match_length)
        def heard(mover: int, before: Position, dice, after: Position) -> None:
            if variant == "backgammon" and dice is not None:
                self.writer.roll(mover, before, after, dice)

        if variant == "backgammon":
            self.number += 1
            self.score = tuple(score)
        self._declined = self._refused = 0

        def resign(mover: int, pos: Position, cube_state) -> int:
            if cube_state is None and match_length and variant == "backgammon":
                # a match without the cube: the engine resigns at the score
                cube_state = without_cube(match_length, (score[mover], score[1 - mover]))
            return self._engine_resigns(mover, pos, cube_state)

        game = play(turn, rules, opening=(mover, dice), roll=lambda: Dice.roll(self.rng),
                    cube=cube, on_turn=heard, resign=resign)
        if variant == "backgammon":
            self.writer.end(self.number, tuple(score), game.winner, game.points)
            self.save_games()
        if game.winner is None:
            self.say("The game is a draw.")
            return None, 0, game.kind
        winner = game.winner
        who = "You win" if winner == HUMAN else "The engine wins"
        plural = "s" if game.points != 1 else ""
        if game.passed:
            self.say(f"{who} {game.points} point{plural}: the double is passed.")
            return winner, game.points, game.kind
        if game.resigned:
            loser = "the engine" if winner == HUMAN else "you"
            self.say(f"{who} {game.points} point{plural}: {loser} resigned "
                     f"{resign_words(game.resigned, variant)}.")
            return winner, game.points, game.kind
        how = kind_words(variant, game.kind)
        cubed = f" with the cube at {game.cube_value}" if game.cube_value > 1 else ""
        jacoby = (" (the Jacoby rule: a single game while the cube was not turned)"
                  if cube is not None and not match_length and game.cube_value == 1
                  and game.kind in (Kind.GAMMON, Kind.BACKGAMMON) else "")
        self.say(f"{who} {how}{cubed}: {game.points} point{plural}{jacoby}.")
        return winner, game.points, game.kind

    def match_text(self) -> str | None:
        """The backgammon games so far as the ``--save`` file holds them (GNU
        Backgammon's SGF for a name ending ``.sgf``, else a ``.mat`` file); None before
        the first game has a roll."""
        assert self.save is not None
        players = ("you", "nardy")
        record = self.writer.record(self.length, players,
                                    match_header(players, self.length, self.cube,
                                                 beavers=self.beavers),
                                    self.number, self.score)
        if not record.games:
            return None
        return (format_sgf(record) if Path(self.save).suffix.lower() == ".sgf"
                else format_mat(record))

    def write_match(self) -> None:
        """Write the backgammon games so far to the ``--save`` file (atomically: a
        reader sees the last version or this one); a :class:`WriteError` naming the file
        when that fails, the file left as it was."""
        if self.save is None:
            return
        text = self.match_text()
        if text is not None:
            with writing(self.save):
                atomic_write_bytes(self.save, text.encode())

    def save_games(self) -> bool:
        """:meth:`write_match` after a game: a failure (a full disk, the folder removed
        since the start) is reported on standard error and play goes on, the games kept
        in memory and all written again after the next game and at quit; whether the
        file was written."""
        try:
            self.write_match()
            return True
        except WriteError as exc:
            sys.stderr.write(f"error: --save: {exc}; play goes on, and the games are "
                             f"written again after the next game and at quit\n")
            return False

    def save_at_quit(self) -> bool:
        """:meth:`write_match` as the session ends (the game under way too); where that
        fails, the games are written to a new file in the temporary folder instead
        (``nardy-<random>.mat``), so that they are not lost, and the error names it;
        whether they reached the ``--save`` file."""
        try:
            self.write_match()
            return True
        except WriteError as exc:
            problem = f"error: --save: {exc}"
        text, save = self.match_text(), self.save
        assert text is not None and save is not None    # else write_match wrote nothing
        try:
            fd, rescue = tempfile.mkstemp(prefix="nardy-", suffix=Path(save).suffix or ".mat")
            with os.fdopen(fd, "wb") as f:
                f.write(text.encode())
        except OSError as exc:
            sys.stderr.write(f"{problem}; nor into the temporary folder "
                             f"({exc.strerror or exc}): the games are lost\n")
            return False
        sys.stderr.write(f"{problem}; the games are in {rescue} instead\n")
        return False

    # ----------------------------------------------------------------- a match
    def play_match(self, games: Sequence[str], target: int) -> tuple[int, int]:
        """Play ``games`` in rotation until a side reaches ``target`` points."""
        score = [0, 0]
        starter = None
        k = 0
        self.length = target
        crawford_done = False
        while max(score) < target:
            variant = games[k % len(games)]
            k += 1
            crawford = (self.cube and variant == "backgammon"
                        and crawford_game(score, target, crawford_done))
            crawford_done = crawford_done or crawford
            winner, points, _ = self.play_game(
                variant, None if variant in ("backgammon", "portes") and len(games) == 1
                else starter, target, tuple(score), crawford)
            if winner is not None:
                score[winner] += points
            starter = winner
            self.say(f"Score: you {score[HUMAN]}, the engine {score[ENGINE]} "
                     f"(match to {target}).")
        self.say("You win the match." if score[HUMAN] > score[ENGINE]
                 else "The engine wins the match.")
        return score[HUMAN], score[ENGINE]


# --------------------------------------------------------------------- CLI
def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None,
         stdout: TextIO | None = None) -> int:
    precompile.allow()       # a cold start compiles on two cores
    ap = argparse.ArgumentParser(prog="python -m engine.play",
                                 description="Play a game or a match against the engine.")
    ap.add_argument("--variant", default="backgammon", choices=[*VARIANTS, TAVLI],
                    help="game to play (tavli: a tavli match)")
    ap.add_argument("--match", type=integer, metavar="N",
                    help="play a match to N points (tavli: default 5)")
    ap.add_argument("--engine", default="auto",
                    help="auto (default), heuristic, model, or a model file")
    ap.add_argument("--seed", type=non_negative_int,
                    help="seed of the dice, a whole number 0 or more (default: fresh)")
    ap.add_argument("--cube", action="store_true",
                    help="backgammon with the doubling cube (a network engine)")
    ap.add_argument("--beavers", action="store_true",
                    help="with --cube in a money game: a side that takes may beaver "
                         "(redouble at once, keeping the cube)")
    ap.add_argument("--save", metavar="FILE.mat",
                    help="backgammon: write the games to this match file after each "
                         "(and at quit, once a play is made), for GNU Backgammon, XG or "
                         "python -m engine.review "
                         "(a name ending .sgf: GNU Backgammon's own SGF). Its folder must "
                         "exist and be writable (checked before play); a later failed "
                         "write is reported and play goes on, the games written again "
                         "after the next game; one at quit puts them in a file in the "
                         "temporary folder, named in the error (exit status 1)")
    args = parse_args(ap, argv)
    if args.save is not None and args.variant != "backgammon":
        ap.error(f"--save: a match file holds backgammon games, not {args.variant}")
    if args.save is not None:
        save = Path(args.save)
        try:
            folder = save.resolve().parent
            blocked = any(up.exists() and not up.is_dir()
                          for up in (folder, *folder.parents))
            kind = ("a folder" if save.is_dir() else "not a regular file"
                    if save.exists() and not save.is_file() else None)
            found = folder.is_dir()
        except OSError as exc:                          # a folder above it not searchable
            ap.error(f"--save {quote(args.save)}: cannot look at the path "
                     f"({exc.strerror or exc})")
        if kind is not None:                            # /dev/null would be replaced
            ap.error(f"--save {quote(args.save)} is {kind}; expected a file (new, or a "
                     f"match file to replace)")
        if not blocked and not found:
            ap.error(f"--save {quote(args.save)}: expected a file in a folder that exists")
        try:                    # a file in the way, or a folder that takes no file
            output_file(save, "--save")     # (a small file written there and removed)
        except OutputError as exc:
            ap.error(str(exc))
    if args.cube and args.variant != "backgammon":
        ap.error(f"--cube: {args.variant} has no doubling cube (backgammon only)")
    if args.beavers and (not args.cube or args.match is not None):
        ap.error("--beavers: a money game's option (--cube without --match)")
    if args.cube and args.engine == "heuristic":
        ap.error("--cube with --engine heuristic: the cube decisions need a network")
    if args.cube and args.match is not None and args.match > MATCH_CUBE_LIMIT_LENGTH:
        ap.error(f"--match {args.match} with --cube: the match equity table covers matches "
                 f"to {MATCH_CUBE_LIMIT_LENGTH}")
    if stdin is None:
        stdin = sys.stdin
        if hasattr(stdin, "reconfigure"):      # a byte that is not text: bad input, no more
            stdin.reconfigure(errors="replace")
    stdout = stdout if stdout is not None else sys.stdout
    if args.match is not None and args.match < 1:
        ap.error("--match must be at least 1")
    session = Session(args.engine, np.random.default_rng(args.seed), stdin, stdout,
                      cube=args.cube, save=args.save, beavers=args.beavers)
    games = TAVLI_GAMES if args.variant == TAVLI else (args.variant,)
    try:
        if args.engine not in ("auto", "model", "heuristic"):
            from engine.errors import VariantError
            from engine.eval.network import Network
            if not Path(args.engine).is_file():
                what = ("not a regular file" if Path(args.engine).exists() else
                        "no such file")
                raise NardyError(f"--engine {quote(args.engine)}: expected auto, heuristic, "
                                 f"model or a model file ({what})")
            made_for = Network.load(args.engine).variant
            if made_for not in games:       # a tavli match takes a model of one game
                raise VariantError(f"--engine {args.engine}: a model of {made_for}, not of "
                                   f"{' or '.join(games)}")
        names = sorted({session.engine(g).name for g in games})
        if args.cube and session.engine("backgammon").network is None:
            raise NardyError("--cube: the engine is the heuristic (no backgammon model "
                             "here); the cube decisions need a network")
    except NardyError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    code = 0
    try:
        try:
            session.say(f"You are X, the engine ({', '.join(names)}) is O. "
                        f"{help_text(get_rules(games[0]))}")
            if args.variant == TAVLI or args.match is not None:
                session.play_match(games, args.match or 5)
            else:
                session.play_game(args.variant)
        except Quit:
            session.say("Bye.")
        except KeyboardInterrupt:            # Ctrl-C: as quit, without a traceback
            session.say("\nInterrupted. Bye.")
            code = 130
    finally:
        saved = session.save_at_quit()       # the game under way too
    return code if saved or code else 1


if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
