"""Rollouts: a position's value, or each candidate play's, as the average result of
many games played on from it, as GNU Backgammon and eXtreme Gammon do.

A *trial* plays the game on from the position with the network's checker play (0-ply
by default, or 1-/2-ply as XG's Roller+), until the game ends, a home race reaches the
one-sided bear-off tables (their value ends the trial), or, in a truncated rollout,
``truncate`` rolls have been played (the network's evaluation ends the trial). Its
result is the five outputs (:data:`engine.rules.scoring.OUTPUTS`) for the side to move
of the position rolled out.

**Dice.** Trial ``t`` draws its ``k``-th roll as a pure function of ``(seed, t, k)``,
so a rollout is bit-for-bit the same for a seed whichever trials run together, on
however many threads. The first two rolls are quasi-random (stratified, as GNU
Backgammon's rollouts): the first roll of trial ``t`` is ``perm0[t mod 36]`` and the
second ``perm1[(t + t div 36) mod 36]`` of two permutations of the 36 ordered rolls
drawn from the seed, so 1296 trials see every pair of opening rolls exactly once, and
each 36 trials from a multiple of 36 see every first roll once and every second roll
once. The standard errors are computed within those strata (:func:`_se`). (The second roll was ``perm1[(t div 36) mod 36]``: fewer than 1296 trials then
shared a handful of second rolls, 36 trials one, and the standard errors, which take
the trials as independent, understated the spread over seeds of the plain mean of a
rollout truncated after 2 to 4 rolls 3 to 5.5 times, of 72 trials played out 1.3 times.)
Every candidate of a roll is rolled out on the same dice.

**Variance reduction** (GNU Backgammon's luck adjustment): before each roll the
mover's best play of each of the 21 rolls is rated at 0-ply; the *luck* of the roll
that came is the rating of its best play less the average over the 21 (a control
variate of mean zero whatever the checker play), and the trial's result less the sum of
its luck is the adjusted result. The adjusted mean estimates the same value with a
much smaller standard error; both standard errors are reported.

**Cubeful** (backgammon, money and match): see the ``cube`` argument of
:meth:`Rollout.position` and :meth:`Rollout.candidates`.

The trials of a rollout (all candidates together) advance in lockstep, one roll a
step, through the search's kernel :func:`engine.search.nply.expand` (one call plays a
roll for every live trial; large calls are split over the search's threads).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple

import numpy as np

from engine.cube.decision import (
    CubeDecision,
    CubeError,
    CubeState,
    classify,
    cube_decision,
    cube_efficiency,
    cubeful_value,
    match_cubeful_mwc,
    money_cubeful_equity,
)
from engine.cube.met import MatchEquityTable, MatchError, default_table
from engine.errors import NardyError, quote
from engine.eval.evaluator import S_STATIC
from engine.rules import _layout as L
from engine.rules._rng import GAMMA, MIX2, mix
from engine.rules.position import Position
from engine.rules.scoring import OUTPUTS, equities, flip_probs
from engine.search.bearoff_cube import cube_efficiencies, exact_cube
from engine.search.nply import _ROLLS, Search, SearchSettings, exact_batch

TRIALS = 1296
"""Trials of a rollout unless told otherwise (36 x 36: every pair of first rolls once)."""
MAX_TRIALS = 1_000_000
"""The most trials one rollout may ask for."""
MAX_TRIAL_TOTAL = 10_000_000
"""The most trials of all candidates together: every trial's five outputs and luck are
kept until the end (80 bytes a trial, twice over while they are merged), so a
thousand candidates of a million trials would need some 160 GB."""
MAX_PLY_INSIDE = 2
"""The deepest checker play inside a rollout."""
BATCH = 1296
"""Trials of each root advanced together; a rollout with a stop rule checks it after
each batch."""
IN_FLIGHT = 64 * BATCH
"""The most trials advanced together over all roots: candidates beyond ``IN_FLIGHT //
BATCH`` are played in groups, one after another (a trial's results do not depend on
its company). The positions and expansions of a trial in flight take some 3 KB: 100
candidates of 1,296 trials at once took 402 MB more, so the 1,000 candidates allowed
would have taken some 4 GB."""
Z95 = 1.959964
"""Two-sided 95% normal quantile: a difference is *significant* beyond Z95 standard errors."""


class RolloutError(NardyError):
    """Bad rollout settings (which field, what was expected)."""


class RolloutPlyError(RolloutError):
    """The checker play's depth inside a rollout out of range (the code every ``ply``
    error has)."""

    code = "invalid_ply"


class RolloutCubeError(RolloutError, CubeError):
    """A cubeful rollout the cube rules do not allow (a game without a cube)."""

    code = "invalid_cube"


def _whole(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not lo <= value <= hi:
        raise RolloutError(f"{name} = {quote(value)}: expected an integer {lo}..{hi:,}")
    return int(value)


@dataclass(frozen=True)
class RolloutSettings:
    """How a rollout is played."""

    trials: int = TRIALS
    """Trials per position (per candidate)."""
    truncate: int = 0
    """Rolls after which the network's 0-ply evaluation ends a trial; 0: play to the end."""
    ply: int = 0
    """Checker play inside the rollout: 0-ply (the network's best play) .. 2-ply."""
    seed: int = 1
    """The dice's seed (0 .. 2**63 - 1)."""
    variance_reduction: bool = True
    """Luck adjustment (module docstring)."""
    bearoff: bool = True
    """End a trial at a home race the one-sided bear-off tables value (where the game
    has them), with their value; False: play every race out."""
    stop_sigmas: float | None = None
    """Candidates only (cubeless): stop once the best is ahead of every other by this many
    standard errors of the difference (checked every :data:`BATCH` trials); None: all trials."""
    root_double: bool = True
    """Cubeful rollouts of a position: the side to move may double before his first
    roll. False rolls out his no-double line (:meth:`Rollout.cube_decision`): that first
    cube decision is no double, wherever the trial ends."""
    prune: bool = True
    """The trials' 0-ply plays (and the luck of each roll) as the search picks a play
    inside its tree (:attr:`engine.search.nply.SearchSettings.prune`): where the
    evaluator has a pruning network (backgammon's released model), each roll's best few
    by it rated again by the network, the best of them played; False: every play rated
    by the network. The same choice serves the luck and the trial, so the luck keeps
    its mean of zero either way."""

    def __post_init__(self) -> None:
        _whole("trials", self.trials, 1, MAX_TRIALS)
        _whole("truncate", self.truncate, 0, 10_000)
        try:
            _whole("ply", self.ply, 0, MAX_PLY_INSIDE)
        except RolloutError as exc:
            raise RolloutPlyError(str(exc)) from None
        _whole("seed", self.seed, 0, 2**63 - 1)
        for name in ("variance_reduction", "bearoff", "prune", "root_double"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise RolloutError(f"{name} = {quote(getattr(self, name))}: expected true "
                                   f"or false")
        if self.stop_sigmas is not None and (
                isinstance(self.stop_sigmas, bool)
                or not isinstance(self.stop_sigmas, (int, float, np.integer, np.floating))
                or not 0 < self.stop_sigmas < 100):
            raise RolloutError(f"stop_sigmas = {quote(self.stop_sigmas)}: expected a number "
                               f"between 0 and 100, or none")
        if self.stop_sigmas is not None:
            object.__setattr__(self, "stop_sigmas", float(self.stop_sigmas))


@dataclass(frozen=True)
class RolloutResult:
    """A rollout's estimate for the side to move of the position rolled out (for a
    candidate: for the player who made the play)."""

    probabilities: tuple[float, ...]
    """Mean of the five outputs (luck-adjusted with variance reduction), held to
    chances (:func:`bounded`)."""
    equity: float
    """Cubeless money equity of :attr:`probabilities`."""
    se: dict
    """Standard errors of the mean: ``equity`` and each output (adjusted with
    variance reduction)."""
    se_plain: dict
    """The same without the luck adjustment (the plain mean's standard errors)."""
    equity_plain: float
    """The plain (unadjusted) mean equity."""
    trials: int
    """Trials played."""
    evaluated: int = 0
    """Positions rated statically on the way."""
    cubeful_equity: float | None = None
    """Cubeful rollouts: the mean cubeful equity per unit of the starting cube (match
    play: the match winning chance on GNU Backgammon's normalised scale); its standard
    error is ``se["cubeful_equity"]``."""
    mwc: float | None = None
    """Cubeful match play: the mean match winning chance (standard error ``se["mwc"]``)."""
    results: np.ndarray | None = field(default=None, repr=False, compare=False)
    """Each trial's five outputs (``trials x 5``, adjusted with variance reduction)."""
    cubeful_results: np.ndarray | None = field(default=None, repr=False, compare=False)
    """Cubeful rollouts: each trial's cubeful equity (units of :attr:`cubeful_equity`,
    adjusted with variance reduction)."""

    def to_json(self) -> dict:
        out = {"probabilities": dict(zip(OUTPUTS, (round(p, 6) for p in self.probabilities))),
               "equity": round(self.equity, 6),
               "se": {k: _se_json(v) for k, v in self.se.items()},
               "se_plain": {k: _se_json(v) for k, v in self.se_plain.items()},
               "trials": self.trials}
        if self.cubeful_equity is not None:
            out["cubeful_equity"] = round(self.cubeful_equity, 6)
        if self.mwc is not None:
            out["mwc"] = round(self.mwc, 6)
        return out


def _se_json(v: float) -> float | None:
    """A standard error for JSON: rounded, or None (``null``) where it is undefined
    (one trial)."""
    return None if math.isnan(v) else round(v, 6)


@dataclass(frozen=True)
class RolloutCandidate:
    """One play of the roll, rolled out."""

    position: Position
    """The position after the play (the opponent to move)."""
    move: str
    """The play's move text."""
    result: RolloutResult
    """Its rollout, for the player who made the play."""
    behind: float
    """Equity behind the best candidate (0 for the best)."""
    se_behind: float
    """Standard error of that difference (same dice: the trials are paired)."""

    @property
    def significant(self) -> bool:
        """Whether the best candidate is ahead by more than :data:`Z95` standard errors."""
        return self.behind > Z95 * self.se_behind

    def to_json(self) -> dict:
        return {"position": self.position.to_json(), "move": self.move,
                "equity": round(self.result.equity, 6),
                "se": {k: _se_json(v) for k, v in self.result.se.items()},
                "probabilities": dict(zip(OUTPUTS, (round(p, 6)
                                                    for p in self.result.probabilities))),
                **({"cubeful_equity": round(self.result.cubeful_equity, 6)}
                   if self.result.cubeful_equity is not None else {}),
                **({"mwc": round(self.result.mwc, 6)} if self.result.mwc is not None else {}),
                "behind": round(self.behind, 6), "se_behind": _se_json(self.se_behind),
                "significant": self.significant, "trials": self.result.trials}


# --------------------------------------------------------------------- dice
def _roll_index(d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """Row of :data:`engine.search.nply._ROLLS` (a >= b) of each roll."""
    a = np.maximum(d1, d2)
    b = np.minimum(d1, d2)
    return a * (a - 1) // 2 + b - 1


def trial_dice(seed: int, trials: np.ndarray, k: int) -> np.ndarray:
    """``(n, 2)`` dice: the ``k``-th roll (0 first) of each trial of ``trials``
    (module docstring: stratified for ``k`` 0 and 1, then splitmix64 of ``(seed, t, k)``)."""
    trials = np.asarray(trials, np.int64)
    if k < 2:
        perm = np.random.default_rng([seed, k]).permutation(36)
        combo = perm[(trials + k * (trials // 36)) % 36]     # a Latin square for k = 1
    else:
        with np.errstate(over="ignore"):
            base = mix(np.array([np.uint64(seed) * MIX2 ^ (np.uint64(k) * GAMMA)], np.uint64))
            v = mix(base + (trials.astype(np.uint64) + np.uint64(1)) * GAMMA)
        combo = (v % np.uint64(36)).astype(np.int64)
    return np.stack([combo // 6 + 1, combo % 6 + 1], axis=1)


def _flip_delta(d: np.ndarray) -> np.ndarray:
    """A difference of outputs seen from the other side (``flip_probs`` is affine)."""
    return np.stack([-d[..., 0], d[..., 3], d[..., 4], d[..., 1], d[..., 2]], axis=-1)


# --------------------------------------------------------------------- the trial loop
def _choose(tree, states, dice, ply: int, filters) -> np.ndarray:
    """The play of each state's own roll (``dice`` rows; 0, 0 a pending segment) at
    ``ply``: the plays kept by the root filters rated ``ply`` deep, best for the mover."""
    n = states.shape[0]
    rolls = np.ones((n, 3), np.int64)
    rolls[:, :2] = dice
    fkeep, fwithin = filters
    keep = 1 if ply == 0 else int(fkeep[0])
    within = 0.0 if ply == 0 else float(fwithin[0])
    # at 0-ply the play is picked as inside the search (pruned where it prunes); a
    # deeper choice rates the root's plays with the network, as the search's root does
    kids, probs, eq, pair = tree.expand(states, rolls, False, keep, within,
                                        tree.rank if ply == 0 else tree.net,
                                        paired=True)
    if ply > 0:
        segment = dice[:, 0] == 0
        for depth in range(1, ply + 1):
            v = tree.values(kids, depth)
            e = equities(v)
            eq = np.where(segment[pair], e, -e)       # the mover's equity of each play
            if depth < ply and fkeep[depth] >= 0:
                keep_d, within_d = int(fkeep[depth]), float(fwithin[depth])
                order = np.lexsort((-eq, pair))
                p_sorted = pair[order]
                first = np.searchsorted(p_sorted, p_sorted, side="left")
                rank = np.arange(len(order)) - first
                top = eq[order][first]
                ok = (rank < keep_d) & (eq[order] >= top - within_d)
                sel = np.sort(order[ok])
                kids, eq, pair = kids[sel], eq[sel], pair[sel]
    best = np.full(n, -1, np.int64)
    order = np.lexsort((-eq, pair))
    p_sorted = pair[order]
    starts = np.flatnonzero(np.r_[True, p_sorted[1:] != p_sorted[:-1]])
    best[p_sorted[starts]] = order[starts]
    if (best < 0).any():
        raise RuntimeError("a roll without a play: the move generator broke its promise "
                           "of at least one successor")
    return kids[best]


class _Cubes:
    """The cube of every trial of a cubeful rollout (backgammon): value and owner
    (0 centred, 1 the root's side to move, 2 the other side), each trial's cubeful
    result and the luck in its units (money: points; match: match winning chances,
    both for the root's side to move)."""

    def __init__(self, root: CubeState, n: int, table: MatchEquityTable | None):
        self.root = root
        self.table: MatchEquityTable = table if table is not None else default_table()
        own = {"centre": 0, "me": 1, "them": 2}[root.owner]
        self.value = np.full(n, root.value, np.int64)
        self.owner = np.full(n, own, np.int8)
        self.result = np.zeros(n)
        self.ended = np.zeros(n, bool)
        self.luck = np.zeros(n)

    def state(self, i: int, me: bool) -> CubeState:
        """Trial ``i``'s cube seen from its side to move (``me``: the root's side)."""
        r = self.root
        own = int(self.owner[i])
        rel = "centre" if own == 0 else ("me" if (own == 1) == me else "them")
        score = r.score if me else r.score[::-1]
        return CubeState(int(self.value[i]), rel, r.match_length, tuple(score), r.crawford,
                         r.jacoby, False, r.max_value)

    def scale(self, i: int) -> float:
        """What one point of cubeless equity at trial ``i``'s cube is worth in its units
        (a factor fixed before the roll, so luck times it keeps mean zero)."""
        c = int(self.value[i])
        if self.root.money:
            return float(c)
        a, b = self.root.away
        return 0.5 * (self.table.after(a, b, c) - self.table.after(a, b, -c))

    def cubeful(self, i: int, me: bool, probs: np.ndarray, position: Position,
                may_double: bool = True) -> float:
        """The cubeful value (units above) of trial ``i`` ending at ``position`` with
        cubeless ``probs`` for its side to move (``me``: the root's side). A finished
        game: its exact score (Janowski's interpolation gives it). A game the bear-off
        tables or the truncation end: the value of the side to move's proper cube
        action there (:func:`~engine.cube.decision.cube_decision` at 0-ply, as inside
        the trial, at :func:`~engine.search.bearoff_cube.cube_efficiencies`, a short
        bear-off's in money play exact, :func:`~engine.search.bearoff_cube.exact_cube`:
        he may double, the other take or pass; a cube at its maximum is
        dead; ``may_double`` False: the no-double value, the root's first decision in
        the no-double line of :meth:`Rollout.cube_decision`)."""
        st = self.state(i, me)
        if not position.is_over():
            d = self._decision(position, st, probs)
            equity, mwc = cubeful_value(d)
            if not may_double:
                equity = d.no_double
                mwc = None if d.mwc is None else d.mwc["no_double"]
            if mwc is None:                   # money play
                v = st.value * equity
                return v if me else -v
            return mwc if me else 1.0 - mwc
        eff = cube_efficiency(position)
        if self.root.money:
            v = st.value * money_cubeful_equity(probs, st.owner, eff, st.jacoby)
            return v if me else -v
        a, b = st.away
        m = match_cubeful_mwc(probs, self.table, a, b, st.value, st.owner, st.crawford, eff)
        return m if me else 1.0 - m

    def _decision(self, position: Position, st: CubeState, probs) -> CubeDecision:
        """The proper cube action of ``position``'s side to move at cube ``st`` from its
        0-ply ``probs``, as a trial decides it: at
        :func:`~engine.search.bearoff_cube.cube_efficiencies`, a short bear-off in money
        play exact (:func:`~engine.search.bearoff_cube.exact_cube`), no take point."""
        x, taken = cube_efficiencies(position, st)
        return exact_cube(position, st, cube_decision(probs, st, x, self.table,
                                                      take_point=False,
                                                      double_efficiency=taken))

    def passed(self, i: int, me: bool) -> float:
        """The value of trial ``i`` ended by a double its opponent passed (the side to
        move, ``me`` or not, won the cube's value)."""
        c = int(self.value[i])
        if self.root.money:
            return float(c if me else -c)
        a, b = self.root.away
        return float(self.table.after(a, b, c if me else -c))

    def decide(self, tree, states, idx, me) -> np.ndarray:
        """Cube actions before the roll for the trials ``idx`` (their ``states``): each
        side to move that may double asks :func:`engine.cube.decision.cube_decision` at
        0-ply, at :func:`~engine.search.bearoff_cube.cube_efficiencies` (a short
        bear-off in money play, the exact table:
        :func:`~engine.search.bearoff_cube.exact_cube`); a take turns the cube, a pass
        ends the trial. Returns which passed."""
        passed = np.zeros(len(idx), bool)
        may = []
        for j, i in enumerate(idx.tolist()):
            if not self.ended[i] and self.state(i, bool(me[i])).can_double():
                may.append(j)
        if not may:
            return passed
        probs = tree.static(states[may])
        for j, p in zip(may, probs):
            i = int(idx[j])
            st = self.state(i, bool(me[i]))
            pos = Position.from_array(states[j], "backgammon")
            d = self._decision(pos, st, p)
            if d.action in ("double_take", "double_beaver"):
                self.value[i] *= 2
                self.owner[i] = 2 if me[i] else 1       # the taker holds it
            elif d.action == "double_pass":
                passed[j] = True
        return passed


_ROW_MIX = np.random.default_rng(20261203).integers(1, 2**63, L.STATE_LEN // 4,
                                                    dtype=np.int64) | 1
"""Odd multipliers of the 64-bit words of a state row for :func:`distinct_rows`."""


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(uniq, inverse)`` of the state rows ``rows`` as ``np.unique(rows, axis=0,
    return_inverse=True)`` gives them, but in an order of its own (by a 64-bit hash of
    each row) and about twenty times faster: numpy compares whole rows as one opaque
    value in its sort, which was a tenth of a rollout's time. Rows are grouped by
    hash and the rows of a group compared in full, so two rows are merged only when
    they are equal; a group that holds different rows (a hash collision) sends the
    whole call to ``np.unique``."""
    words = np.ascontiguousarray(rows).view(np.int64)
    h = (words * _ROW_MIX).sum(axis=1)           # wraps around: a hash, not a number
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same_hash = hs[1:] == hs[:-1]
    at = np.flatnonzero(same_hash)               # neighbours by hash: equal rows?
    if not (rows[order[at + 1]] == rows[order[at]]).all():
        uniq, inv = np.unique(rows, axis=0, return_inverse=True)
        return uniq, inv.reshape(-1)
    group = np.concatenate(([0], np.cumsum(~same_hash)))
    inv = np.empty(rows.shape[0], np.int64)
    inv[order] = group
    first = order[np.concatenate(([True], ~same_hash))]
    return rows[first], inv


def _play_trials(tree, roots: np.ndarray, trials: np.ndarray, settings: RolloutSettings,
                 filters, cube: CubeState | None = None,
                 table: MatchEquityTable | None = None):
    """``(plain, luck, cubes)``: ``(len(roots), len(trials), 5)`` results of each trial
    for the side to move of its root, the sum of its luck (zeros without variance
    reduction), and with ``cube`` (the cube seen from each root's side to move) the
    trials' :class:`_Cubes`."""
    m, nt = roots.shape[0], trials.shape[0]
    states = np.repeat(roots, nt, axis=0)
    trial = np.tile(trials, m)
    b = states.shape[0]
    cubes = _Cubes(cube, b, table) if cube is not None else None
    result = np.zeros((b, 5))
    luck = np.zeros((b, 5))
    me = np.ones(b, bool)                    # the root's side to move is to move
    rolls_done = np.zeros(b, np.int64)
    live = np.arange(b)
    while live.size:
        s = states[live]
        vals = np.zeros((live.size, 5))
        done = exact_batch(s, tree.ctx, vals)
        if settings.truncate:
            cut = ~done & (rolls_done[live] >= settings.truncate)
            if cut.any():
                vals[cut] = tree.static(s[cut])
                done |= cut
        held = (np.zeros(live.size, bool) if settings.root_double
                else (rolls_done[live] == 0) & me[live])     # the root's no-double line
        if cubes is not None and (~done).any():
            ask = np.flatnonzero(~done & (s[:, L.NPEND] == 0) & ~held)
            if ask.size:
                gone = cubes.decide(tree, s[ask], live[ask], me)
                # a pass ends the trial's cubeful result; its checkers play on, so that
                # the cubeless results are those of the cubeless rollout
                for i in live[ask[gone]].tolist():
                    cubes.result[i] = cubes.passed(i, bool(me[i]))
                    cubes.ended[i] = True
        if done.any():
            v = vals[done]
            idx = live[done]
            result[idx] = np.where(me[idx, None], v, flip_probs(v))
            if cubes is not None:
                for j, i in zip(np.flatnonzero(done).tolist(), idx.tolist()):
                    if not cubes.ended[i]:
                        cubes.ended[i] = True
                        cubes.result[i] = cubes.cubeful(
                            i, bool(me[i]), vals[j], Position.from_array(s[j], "backgammon"),
                            not held[j])
            live, s = live[~done], s[~done]
        if not live.size:
            break
        pending = s[:, L.NPEND] != 0
        dice = np.zeros((live.size, 2), np.int64)
        rolled = ~pending
        if rolled.any():
            k_rolled = rolls_done[live[rolled]]
            for k in np.unique(k_rolled):
                at = np.flatnonzero(rolled)[k_rolled == k]
                dice[at] = trial_dice(settings.seed, trial[live[at]], int(k))
        nxt = np.empty_like(s)
        if settings.variance_reduction and rolled.any():
            r_idx = np.flatnonzero(rolled)
            sr = s[r_idx]
            # trials that stand on one position (all of them at the root, a few
            # hundred after the stratified first rolls) share its 21 rolls' plays
            uniq, inv = distinct_rows(sr)
            kids, probs, _, pair = tree.expand(uniq, _ROLLS, False, 1, 0.0, tree.rank)
            if len(pair) != uniq.shape[0] * _ROLLS.shape[0]:
                raise RuntimeError("a roll without a play: the move generator broke its "
                                   "promise of at least one successor")
            after = flip_probs(probs).reshape(uniq.shape[0], _ROLLS.shape[0], 5)[inv]
            before = np.einsum("srk,r->sk", after, _ROLLS[:, 2] / 36.0)
            ri = _roll_index(dice[r_idx, 0], dice[r_idx, 1])
            got = after[np.arange(sr.shape[0]), ri]
            d = got - before
            who = live[r_idx]
            luck[who] += np.where(me[who, None], d, _flip_delta(d))
            if cubes is not None:
                de = equities(got) - equities(before)
                for j, i in enumerate(who.tolist()):
                    if not cubes.ended[i]:      # after a pass the cubeful result stands
                        cubes.luck[i] += cubes.scale(i) * (de[j] if me[i] else -de[j])
            if settings.ply == 0:
                nxt[r_idx] = kids.reshape(uniq.shape[0], _ROLLS.shape[0], -1)[inv, ri]
                rest = pending
            else:
                rest = np.ones(live.size, bool)
        else:
            rest = np.ones(live.size, bool)
        if rest.any():
            at = np.flatnonzero(rest)
            nxt[at] = _choose(tree, s[at], dice[at], settings.ply, filters)
        states[live] = nxt
        me[live[rolled]] ^= True
        rolls_done[live[rolled]] += 1
    shape = (m, nt, 5)
    return result.reshape(shape), luck.reshape(shape), cubes


def _se(x: np.ndarray) -> float:
    """Standard error of the mean of ``x``, the results of trials 0, 1, ... in order,
    by the design of their stratified rolls (module docstring) where it is complete:

    - a multiple of 1,296 trials from 2,592: within the strata of the pairs of first
      rolls (every pair has as many trials);
    - 1,296 trials (every pair of first rolls once): from what is left of each trial
      once the means of its first roll and of its second roll are taken out, on 1,225
      degrees of freedom (with fewer blocks of 36 the two rolls' means do not take
      both effects out: helper 137);
    - a multiple of 36 from 72: within the strata of the first rolls (the second roll's
      balance within them left in: an error somewhat overstated);
    - else the trials taken as independent (which overstates the error; with strata of
      unequal trials the mean also moves with which rolls got a trial more, an error
      no stratum's spread holds).

    Taken as independent throughout, the trials overstated the error of a truncated
    rollout up to tenfold (helper 134: over 30 seeds of a rollout truncated after 2
    rolls, the means' spread was 0.09 of the error reported), and reported one where
    1,296 trials truncated after a roll have none."""
    n = x.shape[0]
    if n < 2:
        return math.nan
    t = np.arange(n)
    if n >= 2 * 1296 and n % 1296 == 0:
        return _within(x, t % 1296, 1296)
    if n == 1296:
        first, second = t % 36, (t + t // 36) % 36
        left = (x - _means(x, first)[first] - _means(x, second)[second] + x.mean())
        return float(math.sqrt((left ** 2).sum() / (n - 71) / n))
    if n >= 72 and n % 36 == 0:
        return _within(x, t % 36, 36)
    return float(x.std(ddof=1) / math.sqrt(n))


def _means(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    return np.bincount(h, weights=x) / np.bincount(h)


def _within(x: np.ndarray, h: np.ndarray, strata: int) -> float:
    """The standard error of the mean of ``x`` stratified by ``h`` (equal strata): each
    stratum's variance, weighted ``n_h / n**2``."""
    counts = np.bincount(h, minlength=strata)
    within = np.bincount(h, weights=(x - _means(x, h)[h]) ** 2, minlength=strata)
    return float(math.sqrt((counts * within / (counts - 1)).sum()) / x.shape[0])


def _summary(plain: np.ndarray, luck: np.ndarray, vr: bool, evaluated: int,
             cubeful: tuple | None = None) -> RolloutResult:
    """The statistics of one root's trials; ``cubeful``: ``(values, luck, cube, table)``
    of its cubeful results (units of :class:`_Cubes`, for the same side)."""
    adjusted = plain - luck if vr else plain

    def se(x):
        return {"equity": _se(equities(x)), **{k: _se(x[:, j]) for j, k in enumerate(OUTPUTS)}}

    mean = adjusted.mean(axis=0)
    s, s_plain = se(adjusted), se(plain)
    cf = mwc = None
    cf_results = None
    if cubeful is not None:
        values, cluck, cube, table = cubeful
        x = values - cluck if vr else values
        if cube.money:
            cf_results = x / cube.value
            s_plain["cubeful_equity"] = _se(values / cube.value)
        else:
            a, b = cube.away
            lo, hi = table.after(a, b, -cube.value), table.after(a, b, cube.value)
            mwc = float(x.mean())
            s["mwc"], s_plain["mwc"] = _se(x), _se(values)
            cf_results = 2.0 * (x - lo) / (hi - lo) - 1.0 if hi > lo else np.zeros_like(x)
            s_plain["cubeful_equity"] = (_se(2.0 * values / (hi - lo)) if hi > lo else 0.0)
        cf = float(cf_results.mean())
        s["cubeful_equity"] = _se(cf_results)
    mean = bounded(mean)
    return RolloutResult(tuple(float(v) for v in mean), float(equities(mean)), s, s_plain,
                         float(equities(plain.mean(axis=0))), plain.shape[0], evaluated,
                         cf, mwc, adjusted, cf_results)


def bounded(mean: np.ndarray) -> np.ndarray:
    """Five mean outputs held to chances: each within 0..1 and in the cumulative order
    (``win_gammon <= win``, ``win_backgammon <= win_gammon``, ``lose_gammon <= 1 -
    win``, ``lose_backgammon <= lose_gammon``). Luck-adjusted means stray outside them
    by their noise where a chance is near 0 or 1 (a 2-trial rollout gave a backgammon
    loss of -0.0026: helper 96); the equity is that of the bounded chances."""
    o = np.clip(np.asarray(mean, np.float64), 0.0, 1.0)
    o[1] = min(o[1], o[0])
    o[2] = min(o[2], o[1])
    o[3] = min(o[3], 1.0 - o[0])
    o[4] = min(o[4], o[3])
    return o


class TrialChunk(NamedTuple):
    """The trials ``lo .. hi - 1`` of every root of a rollout, played: what
    :func:`play_chunk` returns and a backend gathers (a pure function of the roots, the
    trial range, the settings and the model, so chunks played anywhere merge exactly)."""

    lo: int
    hi: int
    plain: np.ndarray
    """``(roots, hi - lo, 5)`` results for each root's side to move."""
    luck: np.ndarray
    """The same shape: each trial's summed luck (zeros without variance reduction)."""
    cube_result: np.ndarray | None
    """Cubeful: ``(roots, hi - lo)`` cubeful results (units of :class:`_Cubes`)."""
    cube_luck: np.ndarray | None
    """Cubeful: their luck in the same units."""
    evaluated: int
    """Positions rated statically while playing them."""


def play_chunk(search: Search, roots: np.ndarray, lo: int, hi: int,
               settings: RolloutSettings, cube: CubeState | None = None,
               table: MatchEquityTable | None = None) -> TrialChunk:
    """Play trials ``lo .. hi - 1`` of the rollout of ``roots`` (state rows) with
    ``search``: the unit of work every backend hands out."""
    return play_chunks(search, roots, [(lo, hi)], settings, cube, table)[0]


def play_chunks(search: Search, roots: np.ndarray, ranges, settings: RolloutSettings,
                cube: CubeState | None = None, table: MatchEquityTable | None = None,
                on_trials: Callable[[int], None] | None = None) -> list[TrialChunk]:
    """:func:`play_chunk` of each ``(lo, hi)`` of ``ranges`` in turn, on one search
    tree; ``on_trials(n)`` after each with the trials it played."""
    inside = SearchSettings(ply=settings.ply, bearoff=settings.bearoff, prune=settings.prune)
    tree = search._tree(inside)
    filters = inside.packed()[:2]
    m = roots.shape[0]
    out = []

    def rated() -> int:                  # every thread's context counts its own
        return sum(int(c.stats[S_STATIC]) for c in tree.ctxs)

    try:
        for lo, hi in ranges:
            before = rated()
            p, lk, cubes = _play_trials(tree, roots, np.arange(lo, hi), settings, filters,
                                        cube, table)
            cr = cl = None
            if cubes is not None:
                cr, cl = cubes.result.reshape(m, -1), cubes.luck.reshape(m, -1)
            out.append(TrialChunk(lo, hi, p, lk, cr, cl,
                                  rated() - before))
            if on_trials is not None:
                on_trials(hi - lo)
    finally:
        tree.close()
    return out


class LocalBackend:
    """Chunks played in this process, one after the other; the search's own threads
    share each roll's work (the default backend)."""

    def play(self, search: Search, roots: np.ndarray, ranges, settings: RolloutSettings,
             cube: CubeState | None, table: MatchEquityTable | None,
             on_trials: Callable[[int], None]) -> list[TrialChunk]:
        """The chunks of ``ranges``, in their order."""
        return play_chunks(search, roots, ranges, settings, cube, table, on_trials)


def _merged(parts: list[TrialChunk]) -> TrialChunk:
    """The chunks of one trial range played for groups of roots, as one chunk of all the
    roots in order."""
    if len(parts) == 1:
        return parts[0]
    if len({(c.lo, c.hi) for c in parts}) != 1:
        raise RuntimeError("a rollout backend returned its trials out of order")
    results = [c.cube_result for c in parts if c.cube_result is not None]
    lucks = [c.cube_luck for c in parts if c.cube_luck is not None]
    return TrialChunk(parts[0].lo, parts[0].hi,
                      np.concatenate([c.plain for c in parts]),
                      np.concatenate([c.luck for c in parts]),
                      np.concatenate(results) if results else None,
                      np.concatenate(lucks) if lucks else None,
                      sum(c.evaluated for c in parts))


class Rollout:
    """Rollouts with one :class:`~engine.search.nply.Search` (its evaluator and threads).

    ``backend`` plays the trials: :class:`LocalBackend` (default) or
    :class:`engine.cluster.RayBackend`; a rollout's numbers do not depend on it."""

    def __init__(self, search: Search, settings: RolloutSettings = RolloutSettings(),
                 backend=None):
        if not isinstance(search, Search):
            raise RolloutError(f"search {quote(search)}: expected a Search "
                               f"(Search.load(variant))")
        self.search = search
        self.settings = RolloutSettings()
        self.settings = self._settings(settings)
        if backend is not None and not callable(getattr(backend, "play", None)):
            raise RolloutError(f"backend {quote(backend)}: expected None (this process) or "
                               f"a backend with a play method (engine.cluster.RayBackend)")
        self.backend = backend if backend is not None else LocalBackend()

    def _settings(self, settings) -> RolloutSettings:
        """``settings``, or the rollout's own for None; anything else is refused."""
        if settings is None:
            return self.settings
        if not isinstance(settings, RolloutSettings):
            raise RolloutError(f"settings {quote(settings)}: expected a RolloutSettings")
        return settings

    @staticmethod
    def _progress(progress):
        if progress is not None and not callable(progress):
            raise RolloutError(f"progress {quote(progress)}: expected None or a function "
                               f"of the trials done")

    def _run(self, roots: np.ndarray, settings: RolloutSettings,
             progress: Callable[[int], None] | None = None,
             stop: Callable[[np.ndarray, np.ndarray], bool] | None = None,
             cube: CubeState | None = None, table: MatchEquityTable | None = None):
        if cube is not None and table is None:
            table = default_table()
        ranges = [(lo, min(settings.trials, lo + BATCH))
                  for lo in range(0, settings.trials, BATCH)]
        # with a stop rule, one batch at a time (checked after each); else all at once
        rounds = [[r] for r in ranges] if stop is not None else [ranges]
        m = roots.shape[0]
        size = max(1, IN_FLIGHT // min(settings.trials, BATCH))
        groups = [(g, min(m, g + size)) for g in range(0, m, size)]
        chunks: list[TrialChunk] = []
        done = 0.0                      # trials of every root, groups counted by their share

        def counter(share: float) -> Callable[[int], None]:
            """``on_trials`` of a group holding ``share`` of the roots."""
            def on_trials(n: int) -> None:
                nonlocal done
                done += n * share
                if progress is not None:
                    progress(int(round(done)))
            return on_trials

        for batch in rounds:
            parts = [self.backend.play(self.search, roots[a:b], batch, settings, cube, table,
                                       counter((b - a) / m))
                     for a, b in groups]
            chunks += [_merged([p[k] for p in parts]) for k in range(len(batch))]
            if stop is not None and chunks[-1].hi < settings.trials and stop(
                    np.concatenate([c.plain for c in chunks], axis=1),
                    np.concatenate([c.luck for c in chunks], axis=1)):
                break
        if [(c.lo, c.hi) for c in chunks] != ranges[:len(chunks)]:
            raise RuntimeError("a rollout backend returned its trials out of order")
        cubeful = None
        if cube is not None:
            cubeful = (np.concatenate([c.cube_result for c in chunks], axis=1),
                       np.concatenate([c.cube_luck for c in chunks], axis=1), table)
        return (np.concatenate([c.plain for c in chunks], axis=1),
                np.concatenate([c.luck for c in chunks], axis=1),
                sum(c.evaluated for c in chunks), cubeful)

    def _check_cube(self, position: Position, cube: CubeState | None,
                    table: MatchEquityTable | None = None) -> None:
        if cube is None:
            return
        if position.variant != "backgammon":
            raise RolloutCubeError(f"a cubeful rollout of {position.variant}: only "
                                   f"backgammon has a cube")
        if not isinstance(cube, CubeState):
            raise RolloutError(f"cube = {quote(cube)}: expected a CubeState")
        table = table if table is not None else default_table()
        if not cube.money and max(cube.away) > table.length:    # before any trial
            raise MatchError(f"match to {cube.match_length}: the table {table.name!r} "
                             f"covers matches to {table.length}")

    def position(self, position: Position, settings: RolloutSettings | None = None,
                 progress: Callable[[int], None] | None = None, *,
                 cube: CubeState | None = None,
                 table: MatchEquityTable | None = None) -> RolloutResult:
        """The rollout of ``position`` before its side to move rolls, for that side.

        ``cube`` (backgammon): a cubeful rollout with the cube as the side to move sees
        it (money or match, :class:`~engine.cube.decision.CubeState`); inside each
        trial the side to move doubles, and the other takes or passes, as
        :func:`~engine.cube.decision.cube_decision` advises at 0-ply (a beaver is a
        take); a pass fixes the trial's cubeful result while its checkers play on, so
        the cubeless results are the cubeless rollout's; where the bear-off tables or
        the truncation end a trial, the cubeful value is that of the proper cube
        action there. ``table`` the match equity table (default Kazaross-XG2)."""
        settings = self._settings(settings)
        self._progress(progress)
        self.search._check(position)
        self._check_cube(position, cube, table)
        if settings.stop_sigmas is not None:
            raise RolloutError("stop_sigmas stops a rollout of a roll's candidates when the "
                               "best leads; a position's rollout has none to compare")
        if position.pending:
            raise RolloutError(f"position has pending dice "
                               f"{'-'.join(map(str, position.pending))}: no roll comes "
                               f"before them; roll out the plays of its segment instead "
                               f"(protocol: \"dice\": null; Python: "
                               f"Rollout(search).candidates(position, None))")
        plain, luck, evaluated, cf = self._run(position.to_array()[None, :], settings,
                                               progress, None, cube, table)
        cubeful = (cf[0][0], cf[1][0], cube, cf[2]) if cf is not None else None
        return _summary(plain[0], luck[0], settings.variance_reduction, evaluated, cubeful)

    def cube_decision(self, position: Position, cube: CubeState,
                      settings: RolloutSettings | None = None,
                      progress: Callable[[int], None] | None = None, *,
                      table: MatchEquityTable | None = None) -> CubeRollout:
        """The cube decision of ``position``'s side to move (backgammon, before his
        roll, ``cube`` as he sees it), rolled out as GNU Backgammon rolls out a cube
        decision: the no-double line (the cube as it is, his first decision no double)
        and the double/take line (the cube doubled, the taker holding it), each a
        cubeful rollout of ``settings`` on the same dice; then the action from the two
        equities and double/pass. ``progress`` hears the trials of both lines together
        (up to twice ``trials``)."""
        settings = self._settings(settings)
        self._progress(progress)
        self.search._check(position)
        if cube is None:
            raise RolloutError("cube = None: a cube decision needs the cube (a CubeState)")
        self._check_cube(position, cube, table)
        if position.is_over():
            raise RolloutCubeError("the game is over: no cube decision in a finished "
                                   "position")
        if not cube.can_double():
            raise RolloutCubeError("the side to move may not double (the opponent holds the "
                                   "cube, the Crawford game, a dead cube or one at its "
                                   "maximum): no cube decision to roll out")
        if settings.stop_sigmas is not None:
            raise RolloutError("stop_sigmas stops a rollout of a roll's candidates; a cube "
                               "decision's rollout has none")
        table = table if table is not None else default_table()

        def part(offset: int):
            if progress is None:
                return None
            return lambda n: progress(offset + n)

        nd = self.position(position, replace(settings, root_double=False), part(0),
                           cube=cube, table=table)
        dt = self.position(position, replace(settings, root_double=True),
                           part(settings.trials), cube=cube.doubled(), table=table)
        return _cube_rollout(cube, table, nd, dt)

    def candidates(self, position: Position, dice, count: int = 5,
                   settings: RolloutSettings | None = None,
                   progress: Callable[[int], None] | None = None, *,
                   cube: CubeState | None = None,
                   table: MatchEquityTable | None = None) -> list[RolloutCandidate]:
        """The best ``count`` plays of ``dice`` at 0-ply, each rolled out on the same
        dice, ranked best first by their rollout equity (cubeful equity when ``cube``
        is given: the cube as the mover sees it before his play)."""
        settings = self._settings(settings)
        self._progress(progress)
        count = _whole("candidates", count, 1, 1000)
        if count * settings.trials > MAX_TRIAL_TOTAL:
            raise RolloutError(f"candidates = {count} of {settings.trials:,} trials each: at "
                               f"most {MAX_TRIAL_TOTAL:,} trials in all, candidates times "
                               f"trials")
        self.search._check(position)
        self._check_cube(position, cube, table)
        if cube is not None and settings.stop_sigmas is not None:
            raise RolloutError("stop_sigmas with a cube: the early stop compares cubeless "
                               "equities")
        analysis = self.search.analyse(position, dice, 0, top=count)
        cands = analysis.candidates[:count]
        roots = np.stack([c.position.to_array() for c in cands])
        vr = settings.variance_reduction
        segment = analysis.dice is None

        def view(x):                   # the mover's view: flipped unless a segment
            return x if segment else flip_probs(x)

        def ahead(plain, luck) -> bool:
            if settings.stop_sigmas is None or len(cands) < 2:
                return False
            adj = view(plain - luck if vr else plain)
            e = equities(adj)                         # (candidates, trials)
            best = int(np.argmax(e.mean(axis=1)))
            diff = e[best] - e
            sd = np.array([_se(row) for row in diff])
            others = np.arange(len(cands)) != best
            return bool(np.all(diff.mean(axis=1)[others] > settings.stop_sigmas * sd[others]))

        root_cube = cube if (cube is None or segment) else cube.flip()
        plain, luck, evaluated, cf = self._run(roots, settings, progress,
                                               None if cube is not None else ahead,
                                               root_cube, table)
        results = []
        for j in range(len(cands)):
            # the mover's view; luck is a difference, flipped as one
            lk = luck[j] if segment else _flip_delta(luck[j])
            cubeful = None
            if cf is not None:
                values, cluck = cf[0][j], cf[1][j]
                if not segment:
                    assert cube is not None
                    values = -values if cube.money else 1.0 - values
                    cluck = -cluck
                cubeful = (values, cluck, cube, cf[2])
            results.append(_summary(view(plain[j]), lk, vr, evaluated, cubeful))
        key = "cubeful_results" if cube is not None else "results"
        eqs = np.array([r.cubeful_equity if cube is not None else r.equity for r in results])
        order = np.argsort(-eqs, kind="stable")
        best = results[order[0]]

        def per_trial(r):
            return getattr(r, key) if cube is not None else equities(r.results)

        out = []
        for j in order.tolist():
            r = results[j]
            diff = per_trial(best) - per_trial(r)
            out.append(RolloutCandidate(cands[j].position, cands[j].move, r,
                                        float(eqs[order[0]] - eqs[j]),
                                        _se(diff) if j != order[0] else 0.0))
        return out


@dataclass(frozen=True)
class CubeRollout:
    """A cube decision rolled out, as GNU Backgammon rolls one out: the no-double line
    and the double/take line of the side to move, on the same dice. Equities are his,
    cubeful, on the normalised scale of the current cube (double/pass +1.0; in match
    play converted from match winning chances as
    :func:`engine.cube.decision.cube_decision` converts them)."""

    no_double: RolloutResult
    """The rollout with the cube as it is, the first cube decision no double."""
    double_take: RolloutResult
    """The rollout with the cube doubled and held by the taker."""
    equities: dict
    """``no_double``, ``double_take``, ``double_pass``."""
    se: dict
    """Standard errors of ``no_double``, ``double_take`` and of ``difference``
    (double/take less no double; the trials are paired, on the same dice)."""
    action: str
    """The proper action from these equities (:func:`engine.cube.decision.classify`)."""
    mwc: dict | None = None
    """Match play: the three as match winning chances."""

    def to_json(self) -> dict:
        out = {"action": self.action,
               "equities": {k: round(v, 6) for k, v in self.equities.items()},
               "se": {k: _se_json(v) for k, v in self.se.items()},
               "trials": self.no_double.trials}
        if self.mwc is not None:
            out["mwc"] = {k: round(v, 6) for k, v in self.mwc.items()}
        return out


def _cube_rollout(cube: CubeState, table: MatchEquityTable, nd: RolloutResult,
                  dt: RolloutResult) -> CubeRollout:
    """The two lines' results on the current cube's scale, and the action."""
    c = cube.value
    assert nd.cubeful_results is not None and dt.cubeful_results is not None
    nd_x = np.asarray(nd.cubeful_results, np.float64)
    dt_c = np.asarray(dt.cubeful_results, np.float64)
    mwc = None
    if cube.money:
        dt_x = 2.0 * dt_c
    else:
        a, b = cube.away
        lo, hi = table.after(a, b, -c), table.after(a, b, c)
        lo2, hi2 = table.after(a, b, -2 * c), table.after(a, b, 2 * c)
        dt_m = lo2 + (dt_c + 1.0) * (hi2 - lo2) / 2.0                  # back to MWC
        dt_x = 2.0 * (dt_m - lo) / (hi - lo) - 1.0 if hi > lo else np.zeros_like(dt_m)
        mwc = {"no_double": float(nd.mwc if nd.mwc is not None else np.nan),
               "double_take": float(dt_m.mean()), "double_pass": float(hi)}
    eq = {"no_double": float(nd_x.mean()), "double_take": float(dt_x.mean()),
          "double_pass": 1.0}
    se = {"no_double": _se(nd_x), "double_take": _se(dt_x), "difference": _se(dt_x - nd_x)}
    # too good only where the doubler can win a gammon (GNU Backgammon reads the no
    # double line's gammon chance): luck adjusted, the mean can pass the cash without one
    action = classify(eq["no_double"], eq["double_take"], 1.0, cube.beavers,
                      nd.probabilities[1] > 0.0)
    return CubeRollout(nd, dt, eq, se, action, mwc)


def rollout(search: Search, position: Position, dice=None, *, candidates: int = 5,
            backend=None, **settings) -> RolloutResult | list[RolloutCandidate]:
    """One call: the rollout of ``position`` (``dice`` None) or of the best
    ``candidates`` plays of ``dice``; ``settings`` are :class:`RolloutSettings` fields.

    >>> from engine import Position
    >>> from engine.search.nply import Search
    >>> r = rollout(Search.load("backgammon"), Position.start(), trials=36, truncate=2)
    >>> r.trials, round(r.probabilities[0], 1)
    (36, 0.5)
    """
    ro = Rollout(search, RolloutSettings(**settings), backend)
    if dice is None:
        return ro.position(position)
    return ro.candidates(position, dice, candidates)
