"""Players: whatever picks one of a roll's successors.

A player is any object with ``choose(position, dice, successors) -> index`` (the
:class:`Player` protocol); :func:`engine.play.game.play_game` pits two against each other.
The engine has no move type, so a player chooses among resulting *positions*:
``successors`` come from :func:`engine.movegen.generate.successors`, already flipped to the
opponent (the next side to move), except after a gul bara pending segment
(``dice is None``), where the same side is still to move. In a game with the cube a
player may also have ``choose_with_cube(position, dice, successors, cube)``, asked instead
with the cube (and score) as the mover sees them (:func:`engine.play.game.play_turn`).

Here: :class:`RandomPlayer` (the floor), :class:`PubEvalPlayer` (Tesauro's benchmark,
backgammon boards only) and :class:`GreedyPlayer`, the slot for the network to come:
it plays the successor an :class:`Evaluator` rates best, evaluating the whole list in
one batch.
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from engine.errors import NardyError, quote
from engine.eval.pubeval import is_race, score_successors
from engine.rules.dice import Dice
from engine.rules.position import Position
from engine.rules.scoring import result
from engine.rules.variants import Rules


class PlayerError(NardyError):
    """A player, a random generator or a choice that cannot be played with."""

    code = "invalid_player"


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """``rng`` if it is a :class:`numpy.random.Generator` (``np.random.default_rng``);
    else :class:`PlayerError` naming ``name`` (a legacy ``RandomState`` has no
    ``integers``)."""
    if not isinstance(rng, np.random.Generator):
        raise PlayerError(f"{name} = {quote(rng)}: expected a numpy.random.Generator "
                          f"(numpy.random.default_rng(seed))")
    return rng


def player_variant(player) -> str | None:
    """The game ``player`` was built for, when it says (a ``variant`` name, or
    ``rules`` that are a :class:`Rules`); None when it plays any game."""
    variant = getattr(player, "variant", None)
    if isinstance(variant, str):
        return variant
    rules = getattr(player, "rules", None)
    return rules.variant if isinstance(rules, Rules) else None


def check_player(player, name: str, variant: str | None = None,
                 error: type[NardyError] = PlayerError) -> None:
    """Raise ``error`` naming ``name`` unless ``player`` has a ``choose`` method and,
    when it knows its game, that game is ``variant``. Once per game or match, never per
    move."""
    if not callable(getattr(player, "choose", None)):
        raise error(f"{name} = {quote(player)}: expected a player (an object with a "
                    f"choose(position, dice, successors) method)")
    own = player_variant(player)
    if variant is not None and own is not None and own != variant:
        raise error(f"{name} = {player!r} plays {own}, not {variant}")


def check_players(players, name: str, variant: str | None = None,
                  error: type[NardyError] = PlayerError) -> tuple:
    """``players`` as a pair, each checked by :func:`check_player`."""
    if isinstance(players, (str, bytes)) or not isinstance(players, Sequence) \
            or len(players) != 2:
        raise error(f"{name} = {quote(players)}: expected a sequence of two players "
                    f"(A and B)")
    for i, p in enumerate(players):
        check_player(p, f"{name}[{i}]", variant, error)
    return tuple(players)


@runtime_checkable
class Player(Protocol):
    """Chooses a successor for a roll."""

    def choose(self, position: Position, dice: Dice | None,
               successors: Sequence[Position]) -> int:
        """Index into ``successors`` of the position to play.

        ``position`` is the position before the turn, from the chooser's side; ``dice``
        the roll, or None for a gul bara pending segment; ``successors`` every distinct
        legal result (at least two: a forced or lost turn is not asked about).
        """
        ...


@runtime_checkable
class Evaluator(Protocol):
    """The interface a value network implements to become a :class:`GreedyPlayer`.

    ``evaluate`` takes a batch of positions and returns, for each, the expected points
    (equity, cube value 1) for **its side to move**, before that side rolls; finished
    positions need not be passed (the player scores them with
    :func:`engine.rules.scoring.result`). Batch-first: one call per turn, never one per move.
    """

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        """Equities, one per position, from each position's side to move."""
        ...


class RandomPlayer:
    """Plays a uniformly random successor, drawn from the generator it was given."""

    def __init__(self, rng: np.random.Generator):
        self.rng = check_rng(rng)
        """Source of the choices; shared with nothing else unless the caller wants it."""

    def choose(self, position, dice, successors) -> int:
        return int(self.rng.integers(len(successors)))

    def __repr__(self) -> str:
        return "RandomPlayer()"


class PubEvalPlayer:
    """Plays the successor with the highest PubEval score for the mover.

    Backgammon and portes only. The weight set (contact or race) is chosen from the
    position before the move, as pubeval.c prescribes; the first of equal scores wins,
    as in the C move choosers. A pending segment cannot occur in these games.
    """

    def choose(self, position, dice, successors) -> int:
        if not len(successors):
            raise PlayerError("successors = []: expected at least one position to choose "
                              "among")
        return int(np.argmax(score_successors(position, successors)))

    def __repr__(self) -> str:
        return "PubEvalPlayer()"


class GreedyPlayer:
    """One-ply greedy play with an :class:`Evaluator`: the slot for the network player.

    After a roll the successors are seen from the opponent, so the best one is the one
    whose equity *for the opponent* is lowest; after a pending segment the same side is
    still to move and the highest equity is best. A successor that ends the game is
    scored exactly by :func:`engine.rules.scoring.result` instead of by the evaluator.
    """

    def __init__(self, evaluator: Evaluator, rules: Rules | None = None,
                 race: Evaluator | None = None):
        for name, ev in (("evaluator", evaluator), ("race", race)):
            if (ev is not None or name == "evaluator") and not callable(
                    getattr(ev, "evaluate", None)):
                raise PlayerError(f"{name} = {quote(ev)}: expected an Evaluator (an "
                                  f"object with an evaluate(positions) method)")
        if rules is not None and not isinstance(rules, Rules):
            raise PlayerError(f"rules = {quote(rules)}: expected None or a Rules")
        self.evaluator = evaluator
        """Rates positions for their side to move; a network, or a hand-made heuristic."""
        self.rules = rules
        """Rules that score finished successors (None: the game's defaults)."""
        self.race = race
        """Rates the plays of a race (no contact; backgammon's geometry) in place of
        :attr:`evaluator`, as the game loop's race networks do; None: it rates all."""

    def choose(self, position, dice, successors) -> int:
        values = np.empty(len(successors), dtype=np.float64)
        live = []
        for i, succ in enumerate(successors):
            over = result(succ, self.rules)
            if over is None:
                live.append(i)
            else:
                values[i] = over.points_for(0)
        if live:
            rater = self.evaluator
            if self.race is not None and is_race(position):
                rater = self.race
            values[live] = np.asarray(rater.evaluate([successors[i] for i in live]),
                                      dtype=np.float64)
        # values are for each successor's side to move: the opponent after a roll
        return int(np.argmax(values) if dice is None else np.argmin(values))

    def __repr__(self) -> str:
        return f"GreedyPlayer({self.evaluator!r})"
