"""Static evaluation: the trained network, exact results and the bear-off tables.

An :class:`Evaluator` rates a position for its side to move, before that side rolls, as
the five outputs of :data:`engine.rules.scoring.OUTPUTS`:

* a finished game gets its exact result (single, gammon, backgammon; the plakoto mother);
* a race with both sides home gets the one-sided bear-off tables
  (:mod:`engine.eval.bearoff`), where the game allows them (inside a search, a roll's
  plays that mix such races with plays the network must rate are all rated by the
  network, so that one choice is made on one scale: :mod:`engine.search.nply`);
* any other race (no contact left; backgammon geometry) gets the game's *race network*
  where it has one (``models/<variant>.race.npz``), trained on races alone against the
  engine's own search over the bear-off tables (training/README.md);
* anything else gets the network.

A network's outputs are then made chances the position can have
(:func:`engine.eval.network.sane`, after GNU Backgammon's sanity check): cumulative
order, no backgammons in a game without them, no gammon lost by a side that has borne
off, and in backgammon no backgammon lost by a side clear of the opponent's home board
once contact is over. In a race of backgammon's geometry (backgammon, portes), the
results the turns left make certain are set (:func:`engine.eval.crossings.race_certain`),
and where one side is home, its exact bear-off distribution bounds the win and gammon
chances from below (:func:`engine.eval.bearoff.race_bounds`; with the tables on).

It also finds a game's released model: ``models/<variant>.npz`` (:func:`model_path`),
and raises :class:`NoModelError` ("no trained model for long_nardy yet") for a game
that has none. The numba search (:mod:`engine.search.nply`) reads the same pieces as
named tuples of plain arrays, :class:`NetArrays` and :class:`Context`, through
:meth:`Evaluator.kernel_args`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from engine._jit import FAST, njit
from engine.errors import NardyError, quote
from engine.eval import bearoff as _bo
from engine.eval.network import (
    NetArrays,
    Network,
    helper_beside,
    hidden_full,
    output_probs,
    rows_of,
    sane,
)
from engine.eval.pubeval import _is_race
from engine.movegen._core import AnyWalk, DirectWalk, new_scratch, walk_for
from engine.rules.position import Position
from engine.rules.scoring import N_OUTPUTS, S_RACES, equities, points_probs, result_k, score_table
from engine.rules.states import check_states
from engine.rules.variants import Rules, get_rules, race_geometry

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
"""Where released models live: ``models/<variant>.npz`` with a ``.json`` card."""

BY_RESULT = 1          # exact_probs: a finished game, valued by its result
BY_TABLES = 2          # exact_probs: a home race, valued by the bear-off tables
S_STATIC = 0           # Context.stats: positions rated statically (network, tables or exact result)
N_STATS = 2


class Context(NamedTuple):
    """Everything the evaluation and search kernels read besides the network rating
    the positions, by name. One context serves one thread at a time: ``stats`` and
    ``scratch`` are written."""

    table: np.ndarray
    """The rules table (:meth:`Rules.table`) the move generator reads."""
    scores: np.ndarray
    """The score table (:func:`engine.rules.scoring.score_table`)."""
    off: np.ndarray
    """The bear-off tables' arrays (:meth:`engine.eval.bearoff.BearoffDB.arrays`), or
    placeholders when ``bearoff`` is off."""
    off_tail: np.ndarray
    first_tail: np.ndarray
    two: np.ndarray
    """The two-sided table and each board's row there
    (:meth:`engine.eval.bearoff.BearoffDB.two_arrays`), or placeholders."""
    small: np.ndarray
    bearoff: bool
    """Whether home races are valued by the bear-off tables."""
    pruning: bool
    """Whether ``rank`` is a pruning network (each roll's play picked by it, then rated
    by the network), not the network itself."""
    stats: np.ndarray
    """``int64[N_STATS]`` counters (``S_STATIC``: positions rated statically)."""
    scratch: np.ndarray
    """The move generator's work space (:func:`engine.movegen._core.new_scratch`)."""
    reply_keep: np.ndarray
    """The search's reply filter by depth: plays kept at most ..."""
    reply_within: np.ndarray
    """... and each within this equity of the best."""
    rank: NetArrays
    """The network that ranks plays inside a search."""
    race: NetArrays
    """The race network (the network itself when ``racing`` is off)."""
    racing: bool
    """Whether races (no contact, not a home race the tables value) get ``race``."""
    walk: AnyWalk | DirectWalk
    """The move generator's marker (:func:`engine.movegen._core.walk_for`): a search of
    backgammon compiles the direct walk alone."""

    def for_thread(self) -> "Context":
        """The same context with statistics and scratch of its own, for another thread."""
        return self._replace(stats=np.zeros_like(self.stats), scratch=new_scratch())


class NoModelError(NardyError):
    """A game without a trained model (or a model file that is not there)."""

    code = "no_model"


ROLES = ("prune", "race")
"""Networks a game may have beside its main one (:func:`model_path`)."""


def model_path(variant: str, role: str = "") -> Path:
    """``models/<variant>.npz`` of the project (``$NARDY_MODELS`` overrides the folder);
    with ``role="prune"`` the game's pruning network, ``models/<variant>.prune.npz``;
    with ``role="race"`` its race network, ``models/<variant>.race.npz``."""
    get_rules(variant)
    folder = Path(os.environ.get("NARDY_MODELS") or MODELS_DIR)
    return folder / (f"{variant}.{role}.npz" if role else f"{variant}.npz")


def load_network(variant: str, path: str | os.PathLike | None = None) -> Network:
    """The network of ``variant``: ``path`` if given, else :func:`model_path`.

    Raises :class:`NoModelError` when the file is missing, and
    :class:`engine.eval.network.NetworkFileError` when it is not a model of ``variant``.
    """
    p = Path(path) if path is not None else model_path(variant)
    if not p.exists():
        if path is None:
            raise NoModelError(f"no trained model for {variant} yet (expected {p})")
        raise NoModelError(f"model file {str(p)!r} does not exist")
    net = Network.load(p)
    if net.variant != variant:
        raise NoModelError(f"model file {str(p)!r} is for {net.variant}, not {variant}")
    return net


# --------------------------------------------------------------------- kernels
# counted even when called from a kernel compiled without reference counts (the
# tables' lookup allocates; engine/_jit.py)
@njit(cache=True, _nrt=True)
def exact_probs(s, ctx, o):
    """The outputs of ``s`` into ``o`` when they need no network: a finished game, or
    a home race the bear-off tables value. Returns what valued it: :data:`BY_RESULT`,
    :data:`BY_TABLES`, or 0 (nothing: the network must)."""
    winner, points, kind = result_k(s, ctx.scores)
    if winner >= 0:
        points_probs(winner, points, o)
        return BY_RESULT
    if ctx.bearoff and _bo._home_race(s, ctx.scores):
        _bo.race_probs(s, ctx.off, ctx.off_tail, ctx.first_tail, ctx.two, ctx.small, o)
        return BY_TABLES
    return 0


@njit(cache=True, _nrt=False)
def may_be_exact(s, scores, tables):
    """Whether :func:`exact_probs` might value ``s`` (a finished game by the score table
    ``scores``, or, with ``tables``, a home race): the test the hot loops make first.
    A call that passes the whole context costs about 0.3 us (its tuple holds some 27
    arrays), a fifth of a play's rating inside the search; this one, given two arrays
    and a flag, about 0.05 us."""
    return result_k(s, scores)[0] >= 0 or (tables and _bo._home_race(s, scores))


@njit(inline="always", **FAST)
def counted_race(s, scores):
    """Whether ``s`` is a race of backgammon's geometry (backgammon, portes: the score
    table ``scores`` says so), whose network outputs the bear-off tables can bound
    (:func:`engine.eval.bearoff.race_bounds`)."""
    return scores[S_RACES] != 0 and _is_race(s)


@njit(cache=True)
def races(s, ctx):
    """Whether ``ctx``'s race network rates ``s`` (a race, with a race network on;
    ``s`` not valued exactly, :func:`exact_probs`)."""
    return ctx.racing and _is_race(s)


@njit(**FAST)
def static_probs(states, n, net, ctx, probs):
    """Outputs of rows ``states[:n]`` for each one's side to move, into ``probs``: the
    exact result, the bear-off tables, the race network (:func:`races`) or ``net``."""
    h_net = np.empty(net.b1.shape[0], np.float32)
    h_race = np.empty(ctx.race.b1.shape[0], np.float32)
    o32 = np.empty(N_OUTPUTS, np.float32)
    o = np.empty(N_OUTPUTS)
    scores = ctx.scores
    tables = ctx.bearoff
    for r in range(n):
        if not (may_be_exact(states[r], scores, tables) and exact_probs(states[r], ctx, o)):
            raced = races(states[r], ctx)
            w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = ctx.race if raced else net
            h = h_race if raced else h_net
            hidden_full(states[r], w1t, b1, uidx, uval, cidx, cval, fidx, h)
            output_probs(h, w2, b2, o32)
            sane(o32, scores, states[r])
            if tables and counted_race(states[r], scores):
                _bo.race_bounds(states[r], ctx.off, o32)
            for k in range(N_OUTPUTS):
                o[k] = o32[k]
        for k in range(N_OUTPUTS):
            probs[r, k] = o[k]
    ctx.stats[S_STATIC] += n


# --------------------------------------------------------------------- the evaluator
_NO_TABLE = np.zeros((1, _bo.MAX_ROLLS + 1))
_NO_TWO = _bo._NO_TWO
_NO_SMALL = np.full(1, -1, np.int64)


class Evaluator:
    """Network + exact results + bear-off tables for one game's rules, and optionally a
    smaller *pruning network* that the search can pick plays deep inside its tree with
    (:attr:`engine.search.nply.SearchSettings.prune`), and a race network."""

    def __init__(self, network: Network, rules: Rules | None = None,
                 bearoff: "_bo.BearoffDB | bool | None" = True,
                 prune: Network | None = None, race: Network | None = None):
        for role, net in (("network", network), ("prune", prune), ("race", race)):
            if (net is not None or role == "network") and not isinstance(net, Network):
                raise NoModelError(f"{role} = {quote(net)}: expected a Network "
                                   f"(Network.load(path)){'' if role == 'network' else ' or None'}")
        if rules is not None and not isinstance(rules, Rules):
            raise NoModelError(f"rules = {quote(rules)}: expected None or a Rules "
                               f"(engine.get_rules(variant))")
        self.network = network
        """The value network (its ``variant`` names the game)."""
        self.rules = rules or get_rules(network.variant)
        """The rules (scoring, move generation); the game's defaults unless given."""
        if self.rules.variant != network.variant:
            raise NoModelError(f"network for {network.variant} cannot rate "
                               f"{self.rules.variant}")
        for role, other in (("pruning", prune), ("race", race)):
            if other is not None and other.variant != network.variant:
                raise NoModelError(f"{role} network for {other.variant} cannot serve a "
                                   f"{network.variant} network")
        if race is not None and not race_geometry(self.rules):
            raise NoModelError(f"a race network needs backgammon's geometry (sides moving "
                               f"in opposite directions, hitting); {self.rules.variant} "
                               f"has none")
        cascade = _bo.uses_cascade(self.rules)
        if isinstance(bearoff, (bool, np.bool_)):
            bearoff = (_bo.load(cascade=cascade) if bearoff and _bo.covers(self.rules)
                       else None)
        elif isinstance(bearoff, _bo.BearoffDB) and bearoff.cascade != cascade:
            raise NoModelError(f"bearoff: the {'cascade' if bearoff.cascade else 'plain'} "
                               f"tables given for {self.rules.variant}, which needs the "
                               f"{'cascade' if cascade else 'plain'} ones "
                               f"(engine.eval.bearoff.load(cascade={cascade}))")
        elif bearoff is not None and not isinstance(bearoff, _bo.BearoffDB):
            raise NoModelError(f"bearoff = {quote(bearoff)}: expected true, false, None or "
                               f"a BearoffDB")
        self.bearoff = bearoff if (bearoff is not None and _bo.covers(self.rules)) else None
        """The bear-off tables, or None where they are off or do not apply."""
        # the kernels take networks of one kind of feature inputs (helper_beside)
        prune, prune_arrays = (None, None) if prune is None else helper_beside(prune, network)
        race, race_arrays = (None, None) if race is None else helper_beside(race, network)
        self.prune = prune
        """A cheaper network that picks the plays inside an n-ply search (GNU
        Backgammon's pruning nets): each roll's plays are ranked by it and only the one
        picked is rated by :attr:`network`, where the search's settings ask for it
        (``SearchSettings.prune``). None: the search ranks with the network."""
        self.race = race
        """The race network that rates races (no contact; home races excepted, which
        the bear-off tables value) in place of :attr:`network`, or None."""
        self._net = NetArrays.of(network)
        self._prune_net = self._net if prune is None else prune_arrays
        self._race_net = self._net if race is None else race_arrays
        self._ctx: dict[tuple, Context] = {}

    @classmethod
    def load(cls, variant: str, path: str | os.PathLike | None = None,
             bearoff: bool = True, rules: Rules | None = None,
             prune: str | os.PathLike | bool | None = None,
             race: str | os.PathLike | bool | None = None) -> "Evaluator":
        """The evaluator of ``variant`` from ``models/<variant>.npz`` (or ``path``);
        raises :class:`NoModelError` for a game without a trained model.

        ``prune``, ``race``: a pruning network's file, a race network's file; True or
        None (the default) take the game's released one, ``models/<variant>.prune.npz``
        or ``models/<variant>.race.npz``, when the released model is loaded and that
        file exists; False: none."""
        for role, given in (("path", path), ("prune", prune), ("race", race)):
            if not (given is None or isinstance(given, (str, os.PathLike))
                    or (role != "path" and isinstance(given, bool))):
                raise NoModelError(f"{role} = {quote(given)}: expected a model file's path"
                                   f"{', true, false' if role != 'path' else ''} or None")
        extra = {}
        for role, given in (("prune", prune), ("race", race)):
            if given is None or given is True:
                released = model_path(variant, role)
                wanted = given is True or path is None
                given = released if wanted and released.exists() else None
            elif given is False:
                given = None
            extra[role] = load_network(variant, given) if given is not None else None
        return cls(load_network(variant, path), rules, bearoff, extra["prune"], extra["race"])

    @property
    def variant(self) -> str:
        """The game."""
        return self.rules.variant

    def kernel_args(self, reply_keep=None, reply_within=None, bearoff: bool = True,
                    prune: bool = False) -> tuple[NetArrays, Context]:
        """``(net, ctx)``: the network and the :class:`Context` the numba kernels take,
        with the reply filters of :mod:`engine.search.nply` (by depth) and, as the
        context's ``rank``, the pruning network when ``prune`` and there is one, else
        the network.

        Cached per argument set, statistics reset at each call: one evaluator serves one
        thread at a time."""
        rkeep = np.ones(4, np.int64) if reply_keep is None else np.asarray(reply_keep, np.int64)
        rwithin = (np.zeros(4) if reply_within is None
                   else np.asarray(reply_within, np.float64))
        pruning = bool(prune) and self.prune is not None
        key = (tuple(rkeep.tolist()), tuple(rwithin.tolist()), bool(bearoff), pruning)
        cached = self._ctx.get(key)
        if cached is not None:
            cached.stats[:] = 0
            return self._net, cached
        db = self.bearoff if bearoff else None
        if db is not None:
            off, off_tail, first_tail = db.arrays()
            two, small = db.two_arrays()
        else:
            off, off_tail, first_tail = _NO_TABLE, _NO_TABLE, _NO_TABLE
            two, small = _NO_TWO, _NO_SMALL
        ctx = Context(self.rules.table(), score_table(self.rules), off, off_tail, first_tail,
                      two, small,
                      db is not None, pruning, np.zeros(N_STATS, np.int64), new_scratch(),
                      rkeep, rwithin, self._prune_net if pruning else self._net,
                      self._race_net, self.race is not None, walk_for(self.rules.table()))
        self._ctx[key] = ctx
        return self._net, ctx

    def probabilities_of_arrays(self, states: np.ndarray) -> np.ndarray:
        """Outputs (n x 5, float64) of ``int16`` state rows for each one's side to move;
        a row that is not a legal position raises :class:`~engine.errors.PositionError`
        (:func:`engine.rules.states.check_states`)."""
        states = check_states(states, self.rules, "states")
        probs = np.zeros((states.shape[0], N_OUTPUTS))
        net, ctx = self.kernel_args()
        static_probs(states, states.shape[0], net, ctx, probs)
        return probs

    def probabilities(self, positions: Sequence[Position]) -> np.ndarray:
        """Outputs (n x 5) of ``positions`` (a list or tuple of Positions), each for its
        side to move, in one batch."""
        if not isinstance(positions, (list, tuple)):
            raise NoModelError(f"positions = {quote(positions)}: expected a list or tuple "
                               f"of Positions (probabilities_of_arrays takes state rows)")
        if not positions:
            return np.zeros((0, N_OUTPUTS))
        return self.probabilities_of_arrays(rows_of(positions, self.variant, "evaluator"))

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        """Cubeless equities for each position's side to move (the
        :class:`engine.play.players.Evaluator` interface)."""
        return equities(self.probabilities(positions))

    def __repr__(self) -> str:
        db = "bear-off tables" if self.bearoff is not None else "no bear-off tables"
        pr = f", pruning {self.prune.sizes}" if self.prune is not None else ""
        rc = f", race {self.race.sizes}" if self.race is not None else ""
        return f"<Evaluator {self.variant} {self.network.sizes}, {db}{pr}{rc}>"
