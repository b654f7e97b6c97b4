"""Tesauro's PubEval: the public-domain linear evaluator used as a benchmark opponent.

``pubeval.c`` (Gerald Tesauro, IBM Research) scores a backgammon board *after* a move as
``W . x``: ``x`` has 122 inputs (five per board location for 24 locations, the
opponent's checkers on the bar, the mover's checkers off) and ``W`` is one of two weight
sets, *contact* or *race*, picked from the position **before** the move. Its move choice
(the highest score among the legal results) plays a weak but honest game and has been the
field's yardstick since TD-Gammon; a new network is measured by how much it beats it.

The weights live in ``engine/eval/data/pubeval_weights.txt`` (source named in its header).
The encoding below is a line-for-line transcription of the C function ``setx``, on the
C program's 28-int board ``pos``:

- ``pos[1..24]``: board locations from the mover's ("computer's") point of view; the
  mover moves 24 -> 1 and his checkers are positive; the opponent's checkers are
  negative, the opponent's own point ``q`` being location ``25 - q``;
- ``pos[0]``: the opponent's checkers on the bar, **negative**; ``pos[25]``: the mover's
  checkers on the bar (not an input of the evaluator); ``pos[26]``: the mover's checkers
  off; ``pos[27]``: the opponent's checkers off, negative (not an input either).

``setx`` reads location ``25 - j`` into inputs ``5*(j-1) .. 5*(j-1)+4``, so inputs 0..4
describe location 24 (the mover's furthest point) and 115..119 location 1. Arithmetic is
in ``float32`` as in the C code, so scores agree with it to the last bit.

PubEval knows only backgammon's board (opposite directions, hitting to the bar), which
portes shares; the other games raise :class:`~engine.errors.VariantError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from engine._jit import njit
from engine.errors import NardyError, PositionError, VariantError, quote
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.states import check_states, position_state
from engine.rules.variants import HIT, OPPOSITE, Rules, get_rules

NUM_INPUTS = 122
"""Length of PubEval's input vector ``x``."""
CONTACT = 0
"""Row of the contact weights (``wc``) in :func:`weights`."""
RACE = 1
"""Row of the race weights (``wr``) in :func:`weights`."""
WIN_SCORE = np.float32(99999999.0)
"""The score ``pubeval()`` gives a board where the mover has borne off all 15."""

WEIGHTS_FILE = Path(__file__).with_name("data") / "pubeval_weights.txt"


def _load_weights(path: Path = WEIGHTS_FILE) -> np.ndarray:
    rows: dict[str, list[float]] = {}
    section = None
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            rows[section] = []
        elif section is None:
            raise ValueError(f"{path}:{lineno}: number before a [contact]/[race] header")
        else:
            rows[section].extend(float(v) for v in line.split())
    w = np.zeros((2, NUM_INPUTS), dtype=np.float32)
    for name, row in (("contact", CONTACT), ("race", RACE)):
        if len(rows.get(name, ())) != NUM_INPUTS:
            raise ValueError(f"{path}: section [{name}] has {len(rows.get(name, ()))} "
                             f"weights; expected {NUM_INPUTS}")
        w[row] = rows[name]
    w.setflags(write=False)
    return w


_WEIGHTS = _load_weights()


def weights() -> np.ndarray:
    """PubEval's weights as a read-only ``float32`` array of shape (2, 122):
    row :data:`CONTACT` is ``wc``, row :data:`RACE` is ``wr``."""
    return _WEIGHTS


# --------------------------------------------------------------------- numba kernels
@njit(cache=True)
def _board28(s, mover, pos):
    """Fill ``pos`` (28 ints) with pubeval.c's board for the side whose block in state
    ``s`` starts at ``mover`` (``L.ME`` or ``L.THEM``); the other block is the opponent.
    Opposite-direction geometry: the opponent's point q is the mover's location 25 - q."""
    opp = L.THEM if mover == L.ME else L.ME
    for p in range(1, 25):
        pos[p] = s[mover + p]
    for q in range(1, 25):
        n = s[opp + q]
        if n:
            pos[25 - q] = -n
    pos[0] = -s[opp + L.BAR]
    pos[25] = s[mover + L.BAR]
    pos[26] = s[mover + L.OFF]
    pos[27] = -s[opp + L.OFF]


@njit(cache=True)
def _setx(pos, x):
    """pubeval.c's ``setx``: the 122 inputs of board ``pos``."""
    for j in range(NUM_INPUTS):
        x[j] = 0.0
    for j in range(1, 25):
        jm1 = j - 1
        n = pos[25 - j]
        if n != 0:
            if n == -1:
                x[5 * jm1 + 0] = 1.0
            if n == 1:
                x[5 * jm1 + 1] = 1.0
            if n >= 2:
                x[5 * jm1 + 2] = 1.0
            if n == 3:
                x[5 * jm1 + 3] = 1.0
            if n >= 4:
                x[5 * jm1 + 4] = (n - 3) / 2.0
    x[120] = -pos[0] / 2.0
    x[121] = pos[26] / 15.0   # computed in double and stored as float, as in C


@njit(cache=True)
def _pubeval_pos(race, pos, w, x):
    """pubeval.c's ``pubeval(race, pos)``: float32 dot product of ``w[race]`` and ``x``."""
    if pos[26] == 15:
        return np.float32(99999999.0)
    _setx(pos, x)
    row = 1 if race else 0
    score = np.float32(0.0)
    for i in range(NUM_INPUTS):
        score += w[row, i] * x[i]
    return score


@njit(cache=True)
def _is_race(s):
    """Whether state ``s`` (opposite geometry) has no contact: every checker of the side
    to move lies below every opposing checker, in the mover's numbering (bar = 25)."""
    mine = 25 if s[L.ME + L.BAR] else 0
    if mine == 0:
        for p in range(24, 0, -1):
            if s[L.ME + p]:
                mine = p
                break
    theirs = 25 if s[L.THEM + L.BAR] else 0
    if theirs == 0:
        for q in range(24, 0, -1):
            if s[L.THEM + q]:
                theirs = q
                break
    # the opponent's point q is my 25 - q: contact iff my back checker is above theirs
    return mine + theirs <= 25


@njit(cache=True)
def _score_states(states, n, mover, race, w, scores):
    """PubEval of rows ``states[:n]`` for the side whose block starts at ``mover``."""
    pos = np.zeros(28, dtype=np.int32)
    x = np.zeros(NUM_INPUTS, dtype=np.float32)
    for i in range(n):
        pos[:] = 0
        _board28(states[i], mover, pos)
        scores[i] = _pubeval_pos(race, pos, w, x)


@njit(cache=True)
def _best_successor(out, n, race, w):
    """Index of the successor (rows ``out[:n]``, flipped: the mover is the ``THEM`` block)
    with the highest PubEval score for the mover; the first one on ties, as pubeval-based
    move choosers scan the list with ``>``."""
    pos = np.zeros(28, dtype=np.int32)
    x = np.zeros(NUM_INPUTS, dtype=np.float32)
    best = 0
    best_score = np.float32(-1e30)
    for i in range(n):
        pos[:] = 0
        _board28(out[i], L.THEM, pos)
        v = _pubeval_pos(race, pos, w, x)
        if v > best_score:
            best_score = v
            best = i
    return best


# --------------------------------------------------------------------- Python API
def check_supported(rules: Rules) -> None:
    """Raise :class:`VariantError` unless PubEval can read this game's board."""
    if rules.geometry != OPPOSITE or rules.meet != HIT:
        raise VariantError(f"PubEval evaluates backgammon boards (opposite directions, "
                           f"hitting); {rules.variant!r} is not one")


def _state(position: Position, what: str = "position") -> np.ndarray:
    """The checked state of ``position``: a legal backgammon-board position
    (:class:`~engine.errors.PositionError` / :class:`VariantError` otherwise)."""
    if not isinstance(position, Position):
        raise PositionError(f"{what} = {quote(position)}: expected a Position")
    rules = get_rules(position.variant)
    check_supported(rules)
    return position_state(position, rules)


def board28(position: Position) -> np.ndarray:
    """pubeval.c's 28-int board for ``position``, its side to move as the "computer"."""
    state = _state(position)
    pos = np.zeros(28, dtype=np.int32)
    _board28(state, L.ME, pos)
    return pos


def inputs(position: Position) -> np.ndarray:
    """The 122 PubEval inputs (``setx``) of ``position``, from its side to move."""
    x = np.zeros(NUM_INPUTS, dtype=np.float32)
    _setx(board28(position), x)
    return x


def is_race(position: Position) -> bool:
    """Whether ``position`` is a race (no contact), which picks the race weights."""
    return bool(_is_race(_state(position)))


def pubeval(position: Position, race: bool | None = None) -> float:
    """PubEval score of ``position`` for its **side to move**, as if that side had just
    moved into it (pubeval scores boards after the move). ``race`` picks the weight set;
    by default it is taken from ``position`` itself, though pubeval.c means it to come
    from the position *before* the move (as :class:`engine.play.players.PubEvalPlayer` does)."""
    if race is not None and not isinstance(race, (bool, np.bool_)):
        raise NardyError(f"race = {quote(race)}: expected None, True or False")
    pos = board28(position)
    if race is None:
        race = bool(_is_race(position.to_array()))
    x = np.zeros(NUM_INPUTS, dtype=np.float32)
    return float(_pubeval_pos(bool(race), pos, _WEIGHTS, x))


def score_successors(before: Position, successors: Sequence[Position]) -> np.ndarray:
    """PubEval scores (``float32``) of a turn's successors for the player who moved.

    Successors come flipped (the opponent to move), so each is read from its ``them``
    side; the weight set is chosen from ``before``, the position before the move, as
    pubeval.c prescribes. Batch-first: one kernel call for the whole list."""
    race = bool(_is_race(_state(before, "before")))
    variant = before.variant
    n = len(successors)
    states = np.zeros((max(n, 1), L.STATE_LEN), dtype=np.int16)
    for i, p in enumerate(successors):
        if not isinstance(p, Position) or p.variant != variant:
            raise PositionError(f"successors[{i}] = {quote(p)}: expected a {variant} "
                                f"Position (the game of before)")
        states[i] = p.to_array()
    if n:
        check_states(states[:n], get_rules(variant), "successors")
    scores = np.zeros(n, dtype=np.float32)
    _score_states(states, n, L.THEM, race, _WEIGHTS, scores)
    return scores
