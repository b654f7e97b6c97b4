"""A hand-written evaluator and player for all six games: the floor a network must beat.

:func:`value` scores a position for its **side to move** (call it X; the other side
is Y) as a weighted sum of a few features, each computed the same way for both sides
from the flat ``int16`` state and the packed rules table (:meth:`Rules.table`), so one
kernel serves every game; only the weights differ per game (:data:`WEIGHTS`). Units
are pips: one pip of race is worth 1.

========================  ==============================================================
feature                   what it counts, for each side
========================  ==============================================================
pips                      pip count (the bar is point 25): ``W_PIPS * (pips Y - pips X)``
off, home                 checkers borne off, checkers in the home (points 1-6)
exposure (hitting games   each lone checker within direct reach (1-6 pips) of a free
and plakoto)              opposing checker or the opposing bar: the share of rolls
                          that hit it directly (``min(1, distances * 11/36)``) times
                          what losing it costs: ``LOSS_BASE + LOSS_BACK * (25-p)/24``
                          (pips a hit checker loses) ``+ LOSS_DEEP * (p-1)/23`` (a
                          plakoto pin far from home) ``+ LOSS_MOTHER`` on the mother
                          (point 24, when pinning it ends the game). The side to move
                          rolls first and can still cover or run, so its own exposure
                          weighs ``BLOT_MOVER``, the waiting side's ``BLOT_WAIT``.
pinned (plakoto)          own checkers held under a pin: ``PINNED`` each, plus
                          ``PINNED_DEEP`` when in the pinner's home (own points 19-24)
held, prime               points held (2+ checkers where hitting or pinning, 1 where a
                          single checker holds; a point where the side pins one counts)
                          that lie in front of an opposing checker: ``HELD`` each, and
                          ``PRIME * length**2`` per run of consecutive such points,
                          counted along the opponent's path (so the same code serves
                          opposite and same direction games)
closed board (hitting)    checkers on the bar times the opponent's held home points / 6
head                      checkers still on the start point 24 (head / start rules)
========================  ==============================================================

A finished position (:func:`engine.rules.scoring.result_k`) scores ``+-1000 * points`` exactly.

:class:`HeuristicPlayer` plays the successor the heuristic likes best (the
:class:`~engine.play.players.Player` protocol); :func:`best_successor` is its kernel, which
the game loop (:mod:`engine.play.loop`) calls for a heuristic player: in duels, in
:func:`engine.play.duel.heuristic_duel` (against a random mover, for tests and tuning)
and in the strength figure of networks of games PubEval cannot play.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from engine._jit import njit
from engine.errors import NardyError, PositionError, VariantError, quote
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.scoring import result_k, score_table
from engine.rules.states import check_states, position_state
from engine.rules.variants import (
    HIT,
    HOLD,
    MOTHER_NONE,
    PIN,
    T_MEET,
    T_MOTHER,
    T_OPP,
    Rules,
    get_rules,
)

# indices of a weight vector
(W_PIPS, W_OFF, W_HOME, W_BLOT_MOVER, W_BLOT_WAIT, W_LOSS_BASE, W_LOSS_BACK, W_LOSS_DEEP,
 W_LOSS_MOTHER, W_PINNED, W_PINNED_DEEP, W_HELD, W_PRIME, W_CLOSED, W_HEAD) = range(15)
N_WEIGHTS = 15
WEIGHT_NAMES = ("pips", "off", "home", "blot_mover", "blot_wait", "loss_base", "loss_back",
                "loss_deep", "loss_mother", "pinned", "pinned_deep", "held", "prime",
                "closed", "head")
"""Names of the weights, in vector order."""

TERMINAL = 1000.0
"""Value of a finished game per point won (far beyond any board feature)."""

_HITTING = dict(pips=1.0, off=0.5, home=0.0, blot_mover=0.3, blot_wait=1.0, loss_base=6.0,
                loss_back=18.0, loss_deep=0.0, loss_mother=0.0, pinned=0.0, pinned_deep=0.0,
                held=2.0, prime=1.0, closed=6.0, head=0.0)
_PLAKOTO = dict(pips=1.0, off=0.5, home=0.0, blot_mover=0.3, blot_wait=1.0, loss_base=14.0,
                loss_back=0.0, loss_deep=14.0, loss_mother=300.0, pinned=14.0,
                pinned_deep=14.0, held=2.0, prime=1.0, closed=0.0, head=0.0)
_HOLDING = dict(pips=1.0, off=0.5, home=0.0, blot_mover=0.0, blot_wait=0.0, loss_base=0.0,
                loss_back=0.0, loss_deep=0.0, loss_mother=0.0, pinned=0.0, pinned_deep=0.0,
                held=1.5, prime=1.0, closed=0.0, head=2.0)

WEIGHTS = {"backgammon": _HITTING, "portes": _HITTING, "plakoto": _PLAKOTO,
           "fevga": _HOLDING, "long_nardy": _HOLDING, "gul_bara": _HOLDING}
"""Per-game weights by name (see the module docstring for each feature)."""


def weights(rules_or_variant: Rules | str, **changes: float) -> np.ndarray:
    """The weight vector (``float64[N_WEIGHTS]``) of a game, with ``changes`` applied."""
    variant = (rules_or_variant.variant if isinstance(rules_or_variant, Rules)
               else get_rules(rules_or_variant).variant)
    table = dict(WEIGHTS[variant])
    for key, v in changes.items():
        if key not in table:
            raise ValueError(f"unknown heuristic weight {key!r}; expected one of "
                             f"{list(WEIGHT_NAMES)}")
        table[key] = float(v)
    return np.array([table[k] for k in WEIGHT_NAMES], dtype=np.float64)


class HeuristicError(NardyError):
    """Heuristic weights the kernel cannot read (not :data:`N_WEIGHTS` finite numbers)."""

    code = "invalid_heuristic"


def check_weights(w, rules: Rules) -> np.ndarray:
    """``w`` as a contiguous ``float64[N_WEIGHTS]`` (None: the game's :func:`weights`);
    anything else (another length or shape, not numbers, NaN or infinite) raises
    :class:`HeuristicError`: the kernel reads 15 weights and checks nothing."""
    if w is None:
        return weights(rules)
    try:
        a = np.asarray(w)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.shape != (N_WEIGHTS,) or a.dtype.kind not in "iuf" or not np.isfinite(a).all():
        raise HeuristicError(f"w = {quote(w)}: expected {N_WEIGHTS} finite numbers "
                             f"(engine.eval.heuristic.WEIGHT_NAMES), got "
                             f"{a.dtype} of shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _rules(rules, variant: str) -> Rules:
    """``rules`` (None: ``variant``'s) checked to be a :class:`Rules` of ``variant``."""
    if rules is None:
        return get_rules(variant)
    if not isinstance(rules, Rules):
        raise VariantError(f"rules = {quote(rules)}: expected None or a Rules")
    if rules.variant != variant:
        raise VariantError(f"rules of {rules.variant} given for a {variant} position")
    return rules


# --------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _held(s, t, meet, own, pins_other, p):
    """Whether the side in block ``own`` holds its point ``p`` against the other side
    (``pins_other``: the other side's pin flags, in its numbering)."""
    n = s[own + p]
    if meet == HOLD:
        return n >= 1
    if n >= 2:
        return True
    return meet == PIN and n == 1 and s[pins_other + t[T_OPP + p]] != 0


@njit(cache=True)
def _side(s, t, w, own, other, pins_own, pins_other, mover):
    """Feature sum of the side in block ``own`` (its good things positive), against the
    side in block ``other``. ``mover``: whether it is the side to move."""
    meet = t[T_MEET]
    v = 0.0
    pips = 0
    home = 0
    for p in range(1, 26):
        n = s[own + p]
        pips += p * n
        if p <= 6:
            home += n
    v -= w[W_PIPS] * pips
    v += w[W_OFF] * s[own + L.OFF] + w[W_HOME] * home
    v -= w[W_HEAD] * s[own + 24]
    # the other side's rearmost checker, in its own numbering (25: the bar)
    rear = 0
    for r in range(25, 0, -1):
        if s[other + r] > 0:
            rear = r
            break
    # held points and primes along the other side's path
    run = 0
    for r in range(1, 25):
        p = t[T_OPP + r]
        if r < rear and _held(s, t, meet, own, pins_other, p):
            run += 1
            v += w[W_HELD]
        else:
            v += w[W_PRIME] * run * run
            run = 0
    v += w[W_PRIME] * run * run
    if meet == HOLD:
        return v
    # lone checkers within direct reach of the other side
    blot = w[W_BLOT_MOVER] if mover else w[W_BLOT_WAIT]
    for p in range(1, 25):
        if s[own + p] != 1 or s[pins_own + p] != 0:
            continue
        r0 = t[T_OPP + p]
        if meet == PIN and s[pins_other + r0] != 0:
            continue                    # it pins an opposing checker: safe while it stays
        dists = 0
        for d in range(1, 7):
            r = r0 + d
            if r > 25:
                break
            if s[other + r] > 0 and (r == 25 or s[pins_other + r] == 0):
                dists += 1
        if dists == 0:
            continue
        share = min(1.0, dists * 11.0 / 36.0)
        loss = (w[W_LOSS_BASE] + w[W_LOSS_BACK] * (25 - p) / 24.0
                + w[W_LOSS_DEEP] * (p - 1) / 23.0)
        if p == 24 and t[T_MOTHER] != MOTHER_NONE:
            loss += w[W_LOSS_MOTHER]
        v -= blot * share * loss
    if meet == PIN:
        for p in range(1, 25):
            if s[pins_own + p] != 0:
                v -= w[W_PINNED]
                if p >= 19:
                    v -= w[W_PINNED_DEEP]
    if meet == HIT and s[own + L.BAR] > 0:
        closed = 0
        for r in range(1, 7):
            if _held(s, t, meet, other, pins_own, r):
                closed += 1
        v -= w[W_CLOSED] * s[own + L.BAR] * closed / 6.0
    return v


@njit(cache=True)
def value_k(s, t, sc, w):
    """Heuristic value of state ``s`` for its side to move (exact when finished)."""
    winner, points, kind = result_k(s, sc)
    if winner == 0:
        return TERMINAL * points
    if winner == 1:
        return -TERMINAL * points
    if winner == 2:
        return 0.0
    return (_side(s, t, w, L.ME, L.THEM, L.PIN_ME, L.PIN_THEM, True)
            - _side(s, t, w, L.THEM, L.ME, L.PIN_THEM, L.PIN_ME, False))


@njit(cache=True)
def values_k(states, n, t, sc, w, v):
    """:func:`value_k` of rows ``states[:n]`` into ``v``."""
    for i in range(n):
        v[i] = value_k(states[i], t, sc, w)


@njit(cache=True)
def best_successor(out, n, segment, t, sc, w):
    """Index of the successor (rows ``out[:n]``) the heuristic prefers for the mover.

    After a roll the successors are seen from the opponent, so the lowest value wins;
    after a gul bara pending segment (``segment``) the same side moves on: the highest.
    The first of equal values wins."""
    best = 0
    best_v = 1e18
    for i in range(n):
        v = value_k(out[i], t, sc, w)
        if segment:
            v = -v
        if v < best_v:
            best_v = v
            best = i
    return best


# --------------------------------------------------------------------- Python API
def value(position: Position, rules: Rules | None = None,
          w: np.ndarray | None = None) -> float:
    """Heuristic value of ``position`` for its side to move (pip units; a finished game
    is worth ``±1000`` per point). Raises :class:`~engine.errors.PositionError` for an
    illegal position or one of another game than ``rules``, :class:`HeuristicError` for
    bad weights."""
    if not isinstance(position, Position):
        raise PositionError(f"position {quote(position)}: expected a Position")
    rules = _rules(rules, position.variant)
    w = check_weights(w, rules)
    state = position_state(position, rules)
    return float(value_k(state, rules.table(), score_table(rules), w))


def values(positions: Sequence[Position], rules: Rules | None = None,
           w: np.ndarray | None = None) -> np.ndarray:
    """:func:`value` of each position, in one kernel call; all of one game (``rules``'s
    when given) and legal, else :class:`~engine.errors.PositionError`."""
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Sequence):
        raise PositionError(f"positions = {quote(positions)}: expected a sequence of "
                            f"Positions")
    if not positions:
        return np.zeros(0)
    first = positions[0]
    if not isinstance(first, Position):
        raise PositionError(f"positions[0] = {quote(first)}: expected a Position")
    rules = _rules(rules, first.variant)
    w = check_weights(w, rules)
    for i, p in enumerate(positions):
        if not isinstance(p, Position) or p.variant != rules.variant:
            raise PositionError(f"positions[{i}] = {quote(p)}: expected a "
                                f"{rules.variant} Position (one game per call)")
    states = check_states(np.stack([p.to_array() for p in positions]), rules, "positions")
    v = np.empty(len(positions))
    values_k(states, len(positions), rules.table(), score_table(rules), w, v)
    return v


class HeuristicPlayer:
    """Plays the successor :func:`value` rates best (a :class:`~engine.play.players.Player`).

    Deterministic: the first of equally rated successors wins."""

    def __init__(self, rules: Rules | str, w: np.ndarray | None = None):
        if not isinstance(rules, (str, Rules)):
            raise VariantError(f"rules = {quote(rules)}: expected a game's name or its "
                               f"Rules")
        self.rules = get_rules(rules) if isinstance(rules, str) else rules
        """The game's rules (scoring of finished successors, rules table)."""
        self.w = check_weights(w, self.rules)
        """The weight vector (see :data:`WEIGHT_NAMES`)."""
        self._t = self.rules.table()
        self._sc = score_table(self.rules)

    def values(self, successors: Sequence[Position]) -> np.ndarray:
        """Heuristic values of ``successors``, each for its own side to move."""
        return values(successors, self.rules, self.w)

    def choose(self, position, dice, successors) -> int:
        if getattr(position, "variant", None) != self.rules.variant:
            raise VariantError(f"{self!r} asked to move in {quote(position)}: it plays "
                               f"{self.rules.variant} only")
        if not len(successors):
            raise PositionError("successors = []: expected at least one position to "
                                "choose among")
        states = np.stack([p.to_array() for p in successors])
        return int(best_successor(states, len(successors), dice is None, self._t,
                                  self._sc, self.w))

    def __repr__(self) -> str:
        return f"HeuristicPlayer({self.rules.variant!r})"
