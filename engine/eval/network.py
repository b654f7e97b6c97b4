"""The value network: five sigmoid outputs over one sigmoid hidden layer, in numba.

The network rates a position for its **side to move, before that side rolls**, as five
probabilities (:data:`OUTPUTS`): win, win a gammon, win a backgammon, lose a gammon,
lose a backgammon (the gammon outputs include backgammons). Cubeless money equity is
``2 win - 1 + wg - lg + wbg - lbg`` (:func:`equity`). Seen from the other side the same
numbers are ``1 - win, lg, lbg, wg, wbg`` (:func:`flip_probs`).

Inference runs in numba on plain ``float32`` arrays (``w1t`` is ``inputs x hidden`` so
that one input's weights are a contiguous row); the kernels here are shared by
self-play training (:mod:`training.td`), the players and search. A successor's hidden
layer is computed from a reference state's by adding the weight rows of the few
inputs that changed (:func:`hidden_delta`).

Files: a ``.npz`` of plain arrays (``W1`` hidden x inputs, ``b1``, ``W2`` 5 x hidden,
``b2``) and a JSON card stored in it as bytes (``card``): format name and version,
variant, encoder, sizes, and whatever the trainer adds (games, config, strength).
:meth:`Network.load` reads only the arrays the format names (:func:`read_npz`: each
member's header and size checked before its data is read, nothing unpickled) and raises
:class:`NetworkFileError` naming the file and the problem for anything unexpected: a
corrupt file, whatever it holds, is that error and never another exception.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
import os
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from engine._jit import FAST, njit
from engine.errors import NardyError, VariantError, describe, quote
from engine.eval.crossings import race_certain
from engine.eval.encoding import (
    MAX_COUNT,
    MAX_UNITS,
    Encoder,
    EncodingError,
    encoder_problem,
    extends,
    get_encoder,
)
from engine.eval.features import N_EXTENDED, N_FAMILY, N_FEATURES, feature_values
from engine.eval.pubeval import _is_race
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.scoring import (
    N_OUTPUTS,
    OUTPUTS,
    S_HOME_MARS,
    S_KOKS,
    S_MOTHER,
    S_RACES,
    S_TRIPLE,
    equity,
    result_probs,
    score_table,
)
from engine.rules.states import check_states
from engine.rules.variants import MOTHER_NONE, VARIANTS, get_rules

FORMAT = "nardy-td-network"
"""The ``format`` field of every model card."""
FORMAT_VERSION = 1
"""The card / array layout this code reads and writes."""
MODEL_ARRAYS = ("W1", "b1", "W2", "b2", "card")
"""The arrays of a model file; :meth:`Network.load` reads these and nothing else."""
MAX_ARRAY_BYTES = 64 << 20
"""The largest array a model or checkpoint file may hold (64 MiB; the weights of a
255-input network with 1,024 hidden units take 1 MiB). A member claiming more is refused
before any of it is read."""


CARD_FACTS = {
    "outputs": list(OUTPUTS),
    "hidden_activation": "sigmoid",
    "output_activation": "sigmoid",
    "equity": "2*win - 1 + win_gammon - lose_gammon + win_backgammon - lose_backgammon",
    "arrays": {"W1": "hidden x inputs", "b1": "hidden", "W2": "5 x hidden", "b2": "5"},
}
"""What every model card says the network computes; a card that says otherwise is
refused on loading (it describes a network this code does not run)."""


def _no_constant(name: str):
    """``json.loads``' hook for ``NaN``, ``Infinity`` and ``-Infinity``, which Python
    reads but JSON does not have: a card holding one would be written back (a release,
    the web board's model info) as text no strict JSON reader takes."""
    raise ValueError(f"{name} is not a JSON value")


class NetworkFileError(NardyError):
    """A model file that is missing, not a model, of another version, or malformed."""

    code = "invalid_model"


# --------------------------------------------------------------------- numba kernels
@njit(inline="always", **FAST)
def sigmoid(v):
    """Logistic function in float32 via Eigen's rational tanh (|error| < 2e-7); it
    vectorises, where ``exp`` does not."""
    t = np.float32(0.5) * v
    c = np.float32(7.90531110763549805)
    t = t if t < c else c
    t = t if t > -c else -c
    t2 = t * t
    p = np.float32(-2.76076847742355e-16)
    p = p * t2 + np.float32(2.00018790482477e-13)
    p = p * t2 + np.float32(-8.60467152213735e-11)
    p = p * t2 + np.float32(5.12229709037114e-08)
    p = p * t2 + np.float32(1.48572235717979e-05)
    p = p * t2 + np.float32(6.37261928875436e-04)
    p = p * t2 + np.float32(4.89352455891786e-03)
    p = p * t
    q = np.float32(1.19825839466702e-06)
    q = q * t2 + np.float32(1.18534705686654e-04)
    q = q * t2 + np.float32(2.26843463243900e-03)
    q = q * t2 + np.float32(4.89352518554385e-03)
    return np.float32(0.5) + np.float32(0.5) * (p / q)


@njit(**FAST)
def _add_row(h, w1t, i, v):
    for j in range(h.shape[0]):
        h[j] += v * w1t[i, j]


@njit(**FAST)
def _add_row4(h, w1t, i0, v0, i1, v1, i2, v2, i3, v3):
    for j in range(h.shape[0]):
        h[j] += (v0 * w1t[i0, j] + v1 * w1t[i1, j]) + (v2 * w1t[i2, j] + v3 * w1t[i3, j])


@njit(**FAST)
def _add_features(h, w1t, fidx, s):
    """Add the hand-crafted features of state ``s`` (inputs ``fidx``, none when empty:
    their dtype tells which set, :func:`engine.eval.features.feature_values`) to ``h``,
    four rows a pass. The features come as a tuple, read at constant indices where
    they fill a pass of four (a tuple read at a variable index is spilled and
    switched on, which cost more than the rows); the last one or two (13 or 14
    features) are read at a variable index. The passes read ``f[0..11]``, which every
    feature set has (:data:`engine.eval.features.N_FEATURES`, ``N_FAMILY``); a shorter
    tuple would fail to compile, not run wrong."""
    n = fidx.shape[0]
    if n == 0:
        return
    f = feature_values(fidx, s)
    k = 0
    if n >= 4:
        _add_row4(h, w1t, fidx[0], f[0], fidx[1], f[1], fidx[2], f[2], fidx[3], f[3])
        k = 4
    if n >= 8:
        _add_row4(h, w1t, fidx[4], f[4], fidx[5], f[5], fidx[6], f[6], fidx[7], f[7])
        k = 8
    if n >= 12:
        _add_row4(h, w1t, fidx[8], f[8], fidx[9], f[9], fidx[10], f[10], fidx[11], f[11])
        k = 12
    for q in range(k, n):
        _add_row(h, w1t, fidx[q], f[q])


@njit(**FAST)
def hidden_full(s, w1t, b1, uidx, uval, cidx, cval, fidx, h):
    """Hidden pre-activations of state ``s`` into ``h``."""
    for j in range(h.shape[0]):       # a loop: numba's slice copy is ~10x slower here
        h[j] = b1[j]
    for k in range(cidx.shape[0]):
        if cval[k] != 0:
            _add_row(h, w1t, cidx[k], cval[k])
    _add_features(h, w1t, fidx, s)
    for slot in range(uidx.shape[0]):
        n = min(s[slot], MAX_COUNT - 1)
        for u in range(MAX_UNITS):
            i = uidx[slot, u]
            if i < 0:
                break
            v = uval[slot, n, u]
            if v != 0:
                _add_row(h, w1t, i, v)


MAX_DELTA_ROWS = L.STATE_LEN * MAX_UNITS + max(N_FEATURES, N_FAMILY, N_EXTENDED)
"""Most weight rows one :func:`hidden_delta` can add: every unit of every slot and
every hand-crafted feature."""


@njit(cache=True)
def delta_work():
    """Work space of :func:`hidden_ref` / :func:`hidden_delta` for a network of any
    encoder: the reference state's features, and the rows to add with their
    multipliers. One per thread; a kernel allocates it once, not per node."""
    return (np.zeros(max(N_FEATURES, N_FAMILY, N_EXTENDED), np.float32),
            np.empty(MAX_DELTA_ROWS, np.int64), np.empty(MAX_DELTA_ROWS, np.float32))


@njit(**FAST)
def hidden_ref(ref, w1t, b1, uidx, uval, cidx, cval, fidx, h_ref, work):
    """The hidden pre-activations of the reference state ``ref`` into ``h_ref``
    (:func:`hidden_full`) and its hand-crafted features into ``work[0]``: what
    :func:`hidden_delta` computes each successor's hidden layer from."""
    hidden_full(ref, w1t, b1, uidx, uval, cidx, cval, fidx[:0], h_ref)   # less the features
    n = fidx.shape[0]
    if n > 0:
        f = feature_values(fidx, ref)  # computed once, kept and added here
        f_ref = work[0]
        for k in range(n):             # once per node: a tuple read at a variable index
            f_ref[k] = f[k]
            _add_row(h_ref, w1t, fidx[k], f_ref[k])


@njit(inline="always", **FAST)
def _gather(rows, vals, m, i, d):
    """Append row ``i`` with multiplier ``d`` when ``d`` is not zero; the new count.
    Written without a branch (the slot is written either way, and kept only when
    ``d`` is not zero): which units change is not predictable from play to play."""
    rows[m] = i
    vals[m] = d
    return m + np.int64(d != 0)


@njit(inline="always", **FAST)
def _delta(ref, h_ref, c, w1t, uidx, uval, fidx, h, work):
    """:func:`hidden_delta`'s work, inlined into it and into :func:`hidden_deltas`.

    Hidden pre-activations of state ``c`` from those of ``ref`` (``h_ref`` and the
    features in ``work``, both from :func:`hidden_ref`): only the inputs that differ
    are touched, the units of slots whose counts differ and the features whose values
    differ (about 2.5 of the 13 between a position and a successor), and the parent's
    features are never computed again for each child.

    The rows to add are listed first and then added in one loop: written as one call
    per row, the adds were inlined a dozen times over with their alias checks, and the
    fewer rows took as long as all 13 feature rows had (benchmarks/README.md,
    "Only the inputs that changed, in one loop")."""
    f_ref, rows, vals = work
    m = 0
    n = fidx.shape[0]
    if n > 0:
        # the features at constant indices (a tuple read at a variable index is
        # spilled and switched on); every feature set has at least 12, a shorter
        # encoder stops early, and the 13th and 14th go by index
        f = feature_values(fidx, c)
        m = _gather(rows, vals, m, fidx[0], f[0] - f_ref[0])
        if n > 1:
            m = _gather(rows, vals, m, fidx[1], f[1] - f_ref[1])
        if n > 2:
            m = _gather(rows, vals, m, fidx[2], f[2] - f_ref[2])
        if n > 3:
            m = _gather(rows, vals, m, fidx[3], f[3] - f_ref[3])
        if n > 4:
            m = _gather(rows, vals, m, fidx[4], f[4] - f_ref[4])
        if n > 5:
            m = _gather(rows, vals, m, fidx[5], f[5] - f_ref[5])
        if n > 6:
            m = _gather(rows, vals, m, fidx[6], f[6] - f_ref[6])
        if n > 7:
            m = _gather(rows, vals, m, fidx[7], f[7] - f_ref[7])
        if n > 8:
            m = _gather(rows, vals, m, fidx[8], f[8] - f_ref[8])
        if n > 9:
            m = _gather(rows, vals, m, fidx[9], f[9] - f_ref[9])
        if n > 10:
            m = _gather(rows, vals, m, fidx[10], f[10] - f_ref[10])
        if n > 11:
            m = _gather(rows, vals, m, fidx[11], f[11] - f_ref[11])
        for q in range(12, n):
            m = _gather(rows, vals, m, fidx[q], f[q] - f_ref[q])
    for slot in range(uidx.shape[0]):
        # a plain test per slot: listing the rows by a bit mask of the slots that
        # differ (a variable shift per slot) took about twice as long over move
        # generation (benchmarks/README.md, "The slots that differ, and one call a roll")
        if ref[slot] != c[slot]:
            a = min(ref[slot], MAX_COUNT - 1)
            b = min(c[slot], MAX_COUNT - 1)
            for u in range(MAX_UNITS):
                i = uidx[slot, u]
                if i < 0:
                    break
                m = _gather(rows, vals, m, i, uval[slot, b, u] - uval[slot, a, u])
    # two rows a pass: ``h`` is read and written half as often (a quarter less time for
    # the adds, timed ad hoc); each sum is still made row after row, to the same bits
    nh = h.shape[0]
    q = 0
    if m >= 2:
        i0, v0, i1, v1 = rows[0], vals[0], rows[1], vals[1]
        for j in range(nh):
            h[j] = h_ref[j] + v0 * w1t[i0, j] + v1 * w1t[i1, j]
        q = 2
    else:
        for j in range(nh):
            h[j] = h_ref[j]
    while q + 1 < m:
        i0, v0, i1, v1 = rows[q], vals[q], rows[q + 1], vals[q + 1]
        for j in range(nh):
            h[j] = h[j] + v0 * w1t[i0, j] + v1 * w1t[i1, j]
        q += 2
    if q < m:
        i0, v0 = rows[q], vals[q]
        for j in range(nh):
            h[j] += v0 * w1t[i0, j]


@njit(_nrt=False, **FAST)
def hidden_delta(ref, h_ref, c, w1t, uidx, uval, fidx, h, work):
    """Hidden pre-activations of state ``c`` into ``h`` from those of ``ref``
    (``h_ref`` and the features in ``work``, both from :func:`hidden_ref`): only the
    inputs that differ are touched (:func:`_delta`)."""
    _delta(ref, h_ref, c, w1t, uidx, uval, fidx, h, work)


# no reference counts, and none in what it inlines (engine/_jit.py)
@njit(_nrt=False, **FAST)
def hidden_deltas(ref, h_ref, kids, idx, m, w1t, uidx, uval, fidx, hs, work):
    """:func:`hidden_delta` of the states ``kids[idx[j]]`` into ``hs[j]``, ``j < m``:
    one call for a roll's plays, where a call a play cost about a tenth of the hidden
    layer's time (benchmarks/README.md, "The slots that differ, and one call a
    roll")."""
    for j in range(m):
        _delta(ref, h_ref, kids[idx[j]], w1t, uidx, uval, fidx, hs[j], work)


@njit(**FAST)
def output_probs(h, w2, b2, o):
    """The five outputs ``o`` from hidden pre-activations ``h`` (left as they are), in
    one pass over ``h``: each activation goes into the five sums as it is made, and
    nothing is stored inside the loop (the activations are not kept; a caller that
    needs them calls :func:`outputs`)."""
    z0 = z1 = z2 = z3 = z4 = np.float32(0.0)
    for j in range(h.shape[0]):
        a = sigmoid(h[j])
        z0 += w2[0, j] * a
        z1 += w2[1, j] * a
        z2 += w2[2, j] * a
        z3 += w2[3, j] * a
        z4 += w2[4, j] * a
    o[0] = sigmoid(z0 + b2[0])
    o[1] = sigmoid(z1 + b2[1])
    o[2] = sigmoid(z2 + b2[2])
    o[3] = sigmoid(z3 + b2[3])
    o[4] = sigmoid(z4 + b2[4])


@njit(inline="always", **FAST)
def sane(o, sc, s):
    """The network's outputs ``o`` for state ``s`` made chances a game of score table
    ``sc`` can have there, as GNU Backgammon's sanity check makes them: the evaluator's
    and the search's values pass through it (the learning and the self-play loop read
    the network's own outputs). Five independent sigmoids need not be in order: a
    plakoto network gave win_gammon 0.94 above win 0.85."""
    in_order(o)
    no_triples(o, sc)
    ruled_out(o, sc, s)


@njit(inline="always", **FAST)
def in_order(o):
    """Put the five outputs ``o`` in the order cumulative chances have:
    ``win_gammon <= win``, ``win_backgammon <= win_gammon``, ``lose_gammon <= 1 -
    win``, ``lose_backgammon <= lose_gammon``."""
    if o[1] > o[0]:
        o[1] = o[0]
    if o[2] > o[1]:
        o[2] = o[1]
    lose = 1 - o[0]
    if o[3] > lose:
        o[3] = lose
    if o[4] > o[3]:
        o[4] = o[3]


@njit(inline="always", **FAST)
def ruled_out(o, sc, s):
    """Zero the chances in ``o`` of results state ``s`` rules out: a side that has borne
    off a checker loses no gammon (in the games whose only 2-point result is the
    gammon: not where pinning the mother checker wins 2); and in backgammon, with no
    contact left, a side with no checker on the bar or in the opponent's home board
    loses no backgammon. A race network gave a backgammon 0.0004 where none can
    happen, enough to refuse a resignation of a certain gammon. In a race of
    backgammon's geometry (backgammon, portes), the results the turns left make certain
    are set too (:func:`engine.eval.crossings.race_certain`)."""
    if sc[S_MOTHER] == MOTHER_NONE:
        if s[L.ME + L.OFF] > 0:
            o[3] = 0
            o[4] = 0
        if s[L.THEM + L.OFF] > 0:
            o[1] = 0
            o[2] = 0
    if sc[S_RACES] and _is_race(s):
        if not _back(s, L.ME):
            o[4] = 0
        if not _back(s, L.THEM):
            o[2] = 0
        race_certain(o, s, sc[S_TRIPLE] != 0)


@njit(inline="always", **FAST)
def _back(s, side):
    """Whether the side whose block of ``s`` starts at ``side`` has a checker on the bar
    or in the opponent's home board (its own points 19..24)."""
    for p in range(19, L.BAR + 1):
        if s[side + p]:
            return True
    return False


@njit(inline="always", **FAST)
def no_triples(o, sc):
    """Zero the backgammon outputs of ``o`` in a game whose score table ``sc`` has no
    3-point result (portes, plakoto, fevga; nardy without the koks option), where the
    network's are a little above zero."""
    if not (sc[S_TRIPLE] or sc[S_KOKS] or sc[S_HOME_MARS]):
        o[2] = 0
        o[4] = 0


@njit(**FAST)
def outputs(h, w2, b2, act, o):
    """The five outputs ``o`` from pre-activations ``h``; ``act`` gets the hidden
    activations, which learning needs (``act`` may be ``h`` itself)."""
    nh = h.shape[0]
    for j in range(nh):
        act[j] = sigmoid(h[j])
    for k in range(N_OUTPUTS):
        z = b2[k]
        for j in range(nh):
            z += w2[k, j] * act[j]
        o[k] = sigmoid(z)


@njit(**FAST)
def outputs_batch(hs, n, w2, b2, o):
    """:func:`outputs` of the rows ``hs[:n]`` (pre-activations; they become the hidden
    activations in place) into ``o[:n]``: one flat loop of sigmoids, then the five sums
    of each row, which vectorise better than one row at a time."""
    nh = hs.shape[1]
    for i in range(n):
        row = hs[i]
        for j in range(nh):
            row[j] = sigmoid(row[j])
    for i in range(n):
        row = hs[i]
        for k in range(N_OUTPUTS):
            z = b2[k]
            wk = w2[k]
            for j in range(nh):
                z += wk[j] * row[j]
            o[i, k] = sigmoid(z)


@njit(**FAST)
def evaluate_states(states, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, sc, probs):
    """Outputs of every row of ``states`` into ``probs`` (n x 5); finished states get
    their exact result (``sc``: the game's score table, :func:`engine.rules.scoring.score_table`),
    the others the network's own outputs (:func:`sane` is the evaluator's)."""
    nh = b1.shape[0]
    h = np.empty(nh, np.float32)
    o = np.empty(N_OUTPUTS, np.float32)
    for r in range(states.shape[0]):
        s = states[r]
        if not result_probs(s, sc, o):
            hidden_full(s, w1t, b1, uidx, uval, cidx, cval, fidx, h)
            output_probs(h, w2, b2, o)
        probs[r] = o


@njit(cache=True)
def kids_ref(s, segment, ref):
    """The parent ``s`` as its successors' side to move sees it, into ``ref``
    (``STATE_LEN`` long): the same state after a pending segment (``segment``), else
    flipped, with the turns advanced as a roll advances them and no pending dice. A
    successor differs from it in a few slots only, so its hidden layer is this one's
    plus a few weight rows (:func:`hidden_delta`)."""
    for i in range(ref.shape[0]):
        ref[i] = 0
    if segment:
        for i in range(L.KEY_LEN):
            ref[i] = s[i]
        return
    for i in range(L.SIDE):
        ref[L.ME + i] = s[L.THEM + i]
        ref[L.THEM + i] = s[L.ME + i]
        ref[L.PIN_ME + i] = s[L.PIN_THEM + i]
        ref[L.PIN_THEM + i] = s[L.PIN_ME + i]
    ref[L.TURNS_ME] = s[L.TURNS_THEM]
    ref[L.TURNS_THEM] = s[L.TURNS_ME] + 1


# no reference counts: the hot path of self-play and duels (engine/_jit.py)
@njit(_nrt=False, **FAST)
def choose_successor(s, out, n, segment, sc, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx,
                     ref, h_ref, h, work, o, o_best):
    """Index of the successor (rows ``out[:n]``) with the best cubeless equity for the
    side to move in ``s`` (greedy 0-ply play, as in training); its outputs, for *its*
    side to move, go to ``o_best``. Finished successors are scored exactly by the
    game's score table ``sc``.

    After a roll the successors are flipped, so the mover wants the lowest equity for
    the successor's side to move; after a gul bara pending segment, the highest. Each
    successor's hidden layer is the (flipped) parent's plus the inputs that changed
    (``work``: :func:`delta_work`)."""
    kids_ref(s, segment, ref)
    hidden_ref(ref, w1t, b1, uidx, uval, cidx, cval, fidx, h_ref, work)
    best = 0
    best_e = 1e9
    sign = -1.0 if segment else 1.0
    for i in range(n):
        c = out[i]
        if not result_probs(c, sc, o):
            hidden_delta(ref, h_ref, c, w1t, uidx, uval, fidx, h, work)
            output_probs(h, w2, b2, o)
        e = sign * equity(o)
        if e < best_e:
            best_e = e
            best = i
            for k in range(N_OUTPUTS):
                o_best[k] = o[k]
    return best


class NetArrays(NamedTuple):
    """One network as the kernels read it: its weights (:meth:`Network.arrays`) and its
    encoder's index tables (:meth:`Network.encoder_arrays`)."""

    w1t: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    uidx: np.ndarray
    uval: np.ndarray
    cidx: np.ndarray
    cval: np.ndarray
    fidx: np.ndarray

    @classmethod
    def of(cls, network: "Network") -> "NetArrays":
        """The arrays of ``network``."""
        return cls(*network.arrays(), *network.encoder_arrays())


def helper_beside(helper: "Network", main: "Network") -> tuple["Network", NetArrays]:
    """A helper network (pruning, race) as the kernels take it beside ``main``, whose
    kind of feature inputs every network of one kernel call must share: ``(network,
    arrays)``. One with feature inputs of another kind reads ``main``'s inputs, with
    zero weights on those it lacks (:meth:`Network.reencoded`; the same values;
    NetworkFileError where it cannot); one without feature inputs keeps its own, its
    empty feature index retyped to ``main``'s kind, so the kernels compute no features
    for it."""
    kind = main.encoder.feature_index.dtype
    fidx = helper.encoder.feature_index
    if fidx.size and fidx.dtype != kind:
        helper = helper.reencoded(main.encoder.name)
    arrays = NetArrays.of(helper)
    if arrays.fidx.dtype != kind:
        none = np.empty(0, kind)
        none.setflags(write=False)          # read-only as every encoder's: one type
        arrays = arrays._replace(fidx=none)
    return helper, arrays


# --------------------------------------------------------------------- the container
def describe_array(a: object) -> str:
    """``"<dtype> <shape>"`` of an array, else its type's name (for error messages)."""
    return f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__


def check_hidden(hidden: object, encoder: Encoder) -> int:
    """``hidden`` as a network's hidden units for ``encoder``'s inputs: a positive int
    whose hidden weights fit in a model file's array (:data:`MAX_ARRAY_BYTES`), else
    :class:`NetworkFileError` (a larger network would train, then save a file that no
    load accepts)."""
    if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
        raise NetworkFileError(f"hidden = {quote(hidden)}: expected a positive int")
    most = MAX_ARRAY_BYTES // (4 * encoder.n_inputs)
    if hidden > most:
        raise NetworkFileError(f"hidden = {hidden:,}: at most {most:,} with "
                               f"{encoder.name}'s {encoder.n_inputs} inputs (a model "
                               f"file's array holds at most {MAX_ARRAY_BYTES:,} bytes)")
    return hidden


def rows_of(positions: Sequence[Position], variant: str, what: str) -> np.ndarray:
    """The state rows of ``positions``, all of ``variant``: a :class:`NardyError` naming
    the first position of another game (a network rates its own game only; the rows of
    another would give numbers that mean nothing)."""
    for i, p in enumerate(positions):
        if not isinstance(p, Position):
            raise NardyError(f"positions[{i}] = {quote(p)}: expected a Position")
        if p.variant != variant:
            raise NardyError(f"positions[{i}] is a {p.variant} position; this {what} "
                             f"rates {variant}")
    return np.stack([p.to_array() for p in positions])


@dataclass(eq=False)
class Network:
    """Weights, encoder and card of one value network."""

    variant: str
    """Game the network was trained for."""
    encoder: Encoder
    """Input encoding (its name is stored in the card)."""
    w1t: np.ndarray
    """``float32[inputs, hidden]``: hidden weights, one row per input (``W1.T``)."""
    b1: np.ndarray
    """``float32[hidden]``: hidden biases."""
    w2: np.ndarray
    """``float32[5, hidden]``: output weights."""
    b2: np.ndarray
    """``float32[5]``: output biases."""
    info: dict = field(default_factory=dict)
    """Free metadata saved in the card under ``"info"`` (games trained, config, ...)."""

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise :class:`NetworkFileError` (:class:`~engine.errors.VariantError` for the
        game) unless this network is one :meth:`load` would accept: a known game, an
        :class:`Encoder`, ``float32`` weights of fitting shapes, all finite, and
        ``info`` a dict, and an encoder whose hand-crafted inputs read this game's board
        (:func:`engine.eval.encoding.encoder_problem`). Run on construction and again by
        :meth:`save`."""
        if not isinstance(self.variant, str) or self.variant not in VARIANTS:
            raise VariantError(f"variant = {quote(self.variant)}: expected one of "
                               f"{list(VARIANTS)}")
        # the kernels index these arrays by each other's sizes, unchecked: arrays that
        # do not fit read out of bounds (a network of 3 x 2 weights and 5,000,000
        # biases crashed the process)
        if not isinstance(self.encoder, Encoder):
            raise NetworkFileError(f"encoder {quote(self.encoder)}: expected an Encoder "
                                   f"(engine.eval.encoding.get_encoder)")
        problem = encoder_problem(self.variant, self.encoder.name)
        if problem is not None:
            raise NetworkFileError(problem)
        shape = getattr(self.b1, "shape", None)
        h = shape[0] if isinstance(shape, tuple) and len(shape) == 1 else None
        if h is None:
            raise NetworkFileError(f"b1 is {describe_array(self.b1)}; expected float32 "
                                   f"(hidden,): one axis, a bias per hidden unit")
        want = {"w1t": (self.encoder.n_inputs, h), "b1": (h,), "w2": (N_OUTPUTS, h),
                "b2": (N_OUTPUTS,)}
        for name, shape in want.items():
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.dtype != np.float32 or a.shape != shape:
                got = (f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray)
                       else type(a).__name__)
                raise NetworkFileError(f"{name} is {got}; expected float32 {shape} (a "
                                       f"{self.encoder.name} network of {h} hidden units)")
            if not np.isfinite(a).all():
                bad = int(np.count_nonzero(~np.isfinite(a)))
                raise NetworkFileError(f"{name} holds {bad:,} non-finite value(s) (NaN or "
                                       f"inf); expected finite weights (a model file "
                                       f"with them is refused)")
        if not isinstance(self.info, dict):
            raise NetworkFileError(f"info = {quote(self.info)}: expected a dict (saved in "
                                   f"the card as a JSON object)")

    @classmethod
    def create(cls, variant: str, hidden: int, encoder: str = "tesauro198",
               rng: np.random.Generator | None = None, scale: float = 0.1) -> "Network":
        """A fresh network with small random weights drawn from ``rng``."""
        get_rules(variant)
        enc = get_encoder(encoder)
        check_hidden(hidden, enc)
        if isinstance(scale, bool) or not isinstance(scale, (int, float, np.number)) \
                or not 0 < scale < float("inf"):
            raise NetworkFileError(f"scale = {quote(scale)}: expected a number above 0 "
                                   f"(the initial weights' standard deviation)")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise NetworkFileError(f"rng = {quote(rng)}: expected a numpy Generator "
                                   f"(numpy.random.default_rng)")
        rng = rng if rng is not None else np.random.default_rng(0)
        with np.errstate(over="ignore"):
            w1t = (rng.standard_normal((enc.n_inputs, hidden)) * scale).astype(np.float32)
            w2 = (rng.standard_normal((N_OUTPUTS, hidden)) * scale).astype(np.float32)
        if not (np.isfinite(w1t).all() and np.isfinite(w2).all()):
            raise NetworkFileError(f"scale = {quote(scale)}: the weights overflow float32 "
                                   f"(expected a number above 0 well below "
                                   f"{float(np.finfo(np.float32).max):.3g})")
        return cls(variant, enc, w1t, np.zeros(hidden, np.float32), w2,
                   np.zeros(N_OUTPUTS, np.float32))

    # ----------------------------------------------------------------- views
    @property
    def hidden(self) -> int:
        """Hidden units."""
        return int(self.b1.shape[0])

    @property
    def n_inputs(self) -> int:
        """Input units."""
        return self.encoder.n_inputs

    @property
    def sizes(self) -> str:
        """``"inputs-hidden-outputs"``, e.g. ``"198-80-5"``."""
        return f"{self.n_inputs}-{self.hidden}-{N_OUTPUTS}"

    def arrays(self) -> tuple:
        """``(w1t, b1, w2, b2)`` for the kernels."""
        return self.w1t, self.b1, self.w2, self.b2

    def encoder_arrays(self) -> tuple:
        """``(unit_index, unit_value, const_index, const_value, feature_index)`` for the
        kernels."""
        e = self.encoder
        return e.unit_index, e.unit_value, e.const_index, e.const_value, e.feature_index

    def copy(self) -> "Network":
        return Network(self.variant, self.encoder, self.w1t.copy(), self.b1.copy(),
                       self.w2.copy(), self.b2.copy(), dict(self.info))

    def reencoded(self, encoder: str) -> "Network":
        """This network reading the inputs of ``encoder``, which must extend its own
        (:func:`engine.eval.encoding.extends`): the inputs it lacks get zero weights,
        so every evaluation stays the same. Lets a race network of ``tesauro198+f13``
        serve beside a main network of ``tesauro198+f21`` (the kernels take networks of
        one kind of feature inputs)."""
        enc = get_encoder(encoder)
        if not extends(enc, self.encoder):
            raise NetworkFileError(f"a {self.encoder.name} network cannot read {enc.name}'s "
                                   f"inputs (its inputs must be the first of them)")
        w1t = np.zeros((enc.n_inputs, self.hidden), np.float32)
        w1t[:self.n_inputs] = self.w1t
        return Network(self.variant, enc, w1t, self.b1.copy(), self.w2.copy(),
                       self.b2.copy(), dict(self.info))

    def __repr__(self) -> str:
        return f"<Network {self.variant} {self.encoder.name} {self.sizes}>"

    # ----------------------------------------------------------------- evaluation
    def probabilities_of_arrays(self, states: np.ndarray) -> np.ndarray:
        """Outputs (n x 5) of ``int16`` state rows, for each one's side to move; a row
        that is not a legal position raises :class:`~engine.errors.PositionError`
        (:func:`engine.rules.states.check_states`)."""
        states = check_states(states, self.variant, "states")
        probs = np.zeros((states.shape[0], N_OUTPUTS), np.float32)
        sc = score_table(get_rules(self.variant))
        evaluate_states(states, *self.arrays(), *self.encoder_arrays(), sc, probs)
        return probs

    def probabilities(self, positions: Sequence[Position]) -> np.ndarray:
        """Outputs (n x 5) of ``positions``, each for its side to move, in one batch."""
        if not positions:
            return np.zeros((0, N_OUTPUTS), np.float32)
        return self.probabilities_of_arrays(rows_of(positions, self.variant, "network"))

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        """Cubeless equities for each position's side to move (the
        :class:`engine.play.players.Evaluator` interface)."""
        p = self.probabilities(positions).astype(np.float64)
        return 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]

    # ----------------------------------------------------------------- files
    def card(self) -> dict:
        """The JSON card: what the arrays are and how the network was made."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "variant": self.variant,
            "encoder": self.encoder.name,
            "inputs": self.n_inputs,
            "hidden": self.hidden,
            **copy.deepcopy(CARD_FACTS),
            "info": self.info,
        }

    def file_arrays(self) -> dict:
        """The arrays a model file holds, card included."""
        card = json.dumps(self.card(), sort_keys=True, allow_nan=False).encode()
        return {"W1": np.ascontiguousarray(self.w1t.T), "b1": self.b1, "W2": self.w2,
                "b2": self.b2, "card": np.frombuffer(card, dtype=np.uint8)}

    def save(self, path: str | os.PathLike, card_file: bool = False) -> Path:
        """Write the model atomically to ``path`` (``.npz``); with ``card_file`` also
        the card as readable JSON next to it (``.json``). A network :meth:`load` would
        refuse (:meth:`check`; ``info`` that is not plain JSON data, NaN and infinities
        included) raises :class:`NetworkFileError` before anything is written."""
        path = Path(path)
        self.check()
        try:
            arrays = self.file_arrays()
        except (TypeError, ValueError, RecursionError) as exc:
            raise NetworkFileError(f"saving to {path}: info is not plain JSON data "
                                   f"({describe(exc)})") from None
        atomic_savez(path, arrays)
        if card_file:
            text = json.dumps(self.card(), indent=2, sort_keys=True, allow_nan=False) + "\n"
            atomic_write_bytes(path.with_suffix(".json"), text.encode())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Network":
        """Read a model file; raises :class:`NetworkFileError` naming what is wrong."""
        return cls.from_arrays(read_npz(path, MODEL_ARRAYS), str(path))

    @classmethod
    def from_arrays(cls, arrays: dict, where: str = "<arrays>") -> "Network":
        """Build from the arrays of a model or checkpoint file, checking everything;
        anything wrong with them raises :class:`NetworkFileError` naming ``where``."""
        try:
            return cls._from_arrays(arrays, where)
        except NetworkFileError:
            raise
        except Exception as exc:       # a check this code lacks: still the typed error
            raise NetworkFileError(f"{where}: not a {FORMAT} file ({describe(exc)})"
                                   ) from None

    @classmethod
    def _from_arrays(cls, arrays: dict, where: str) -> "Network":
        def bad(msg):
            return NetworkFileError(f"{where}: {msg}")

        missing = [k for k in MODEL_ARRAYS if k not in arrays]
        if missing:
            raise bad(f"missing array(s) {missing}; not a {FORMAT} file")
        raw = np.asarray(arrays["card"])
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise bad(f"card is {raw.dtype} of shape {raw.shape}; expected the bytes of "
                      f"its JSON (uint8, one axis)")
        try:
            card = json.loads(raw.tobytes().decode(), parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            raise bad(f"card is not JSON ({describe(exc)})") from None
        if not isinstance(card, dict) or card.get("format") != FORMAT:
            raise bad(f"card format {quote(card.get('format') if isinstance(card, dict) else card)}"
                      f"; expected {FORMAT!r}")
        version = card.get("format_version")
        if type(version) is not int or version != FORMAT_VERSION:
            raise bad(f"format_version {quote(version)}; this code reads version "
                      f"{FORMAT_VERSION}")
        variant = card.get("variant")
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise bad(f"variant {quote(variant)}; expected one of {list(VARIANTS)}")
        try:
            enc = get_encoder(card.get("encoder"))
        except EncodingError as exc:
            raise bad(str(exc)) from None
        problem = encoder_problem(variant, enc.name)
        if problem is not None:
            raise bad(problem)
        # what the card says the network computes must be what this code computes: a
        # card saying otherwise (another activation, other outputs) describes another
        # network, which would run here as this one
        for key, want in CARD_FACTS.items():
            if key in card and card[key] != want:
                raise bad(f"card {key} {quote(card[key])}; this code computes "
                          f"{quote(want)}")
        hidden, inputs = card.get("hidden"), card.get("inputs")
        if (type(inputs) is not int or inputs != enc.n_inputs or type(hidden) is not int
                or hidden < 1):
            raise bad(f"card sizes inputs={quote(inputs)} hidden={quote(hidden)} do not "
                      f"fit encoder {enc.name} ({enc.n_inputs} inputs)")
        info = card.get("info")
        if info is None:
            info = {}
        if not isinstance(info, dict):
            raise bad(f"card info {quote(info)}; expected a JSON object")
        expect = {"W1": (hidden, enc.n_inputs), "b1": (hidden,),
                  "W2": (N_OUTPUTS, hidden), "b2": (N_OUTPUTS,)}
        got = {}
        for key, shape in expect.items():
            a = np.asarray(arrays[key])
            if a.shape != shape:
                raise bad(f"{key} has shape {a.shape}; the card ({enc.n_inputs}-{hidden}-"
                          f"{N_OUTPUTS}) needs {shape}")
            if a.dtype.kind != "f":
                raise bad(f"{key} has dtype {a.dtype}; expected float32")
            # always a writable copy: arrays handed over read-only (Ray's object store)
            # are another numba type, and every kernel would compile again for them;
            # checked after the cast, where a float64 beyond float32's range is inf
            with np.errstate(over="ignore", invalid="ignore"):
                got[key] = np.array(a, dtype=np.float32, order="C")
            if not np.all(np.isfinite(got[key])):
                raise bad(f"{key} holds non-finite values (NaN, inf, or beyond float32's "
                          f"range)")
        return cls(variant, enc, np.ascontiguousarray(got["W1"].T), got["b1"], got["W2"],
                   got["b2"], info)


# --------------------------------------------------------------------- file helpers
def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader (or a crash) sees the old file or the new, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_savez(path: str | os.PathLike, arrays: dict) -> None:
    """``np.savez`` of ``arrays`` to ``path``, atomically (see :func:`atomic_write_bytes`)."""
    import io
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def read_npz(path: str | os.PathLike, names: Sequence[str]) -> dict:
    """The arrays ``names`` of the ``.npz`` file ``path`` (those it holds: the caller
    says which are missing), read without trusting the file: only the members named are
    read; each must be stored or deflated, its ``.npy`` header (plain numbers, a
    shape) must account for its size in the archive exactly, and that size must be at
    most :data:`MAX_ARRAY_BYTES`, all checked before its data is read; nothing is
    unpickled. Anything wrong, down to a corrupt deflate stream, raises
    :class:`NetworkFileError` naming the file and the problem."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):     # a FIFO would block for ever
            raise NetworkFileError(f"{path}: not a regular file")
        with open(path, "rb") as f:
            head = f.read(6)
        if head == b"\x93NUMPY":
            raise NetworkFileError(f"{path}: a single .npy array, not an .npz archive")
        with zipfile.ZipFile(path) as z:
            members = {info.filename: info for info in z.infolist()}
            return {name: _read_member(z, members[f"{name}.npy"], path)
                    for name in names if f"{name}.npy" in members}
    except NetworkFileError:
        raise
    except FileNotFoundError:
        raise NetworkFileError(f"{path}: no such file") from None
    except Exception as exc:         # whatever a damaged file provokes: the typed error
        raise NetworkFileError(f"{path}: not a readable .npz file ({describe(exc)})"
                               ) from None


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, path) -> np.ndarray:
    """One ``.npy`` member of an archive, checked as :func:`read_npz` says."""
    def bad(msg):
        return NetworkFileError(f"{path}: member {quote(info.filename)}: {msg}")

    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise bad(f"compression method {info.compress_type}; expected 0 (stored) or 8 "
                  f"(deflated)")
    if info.file_size > MAX_ARRAY_BYTES + (1 << 16):
        raise bad(f"{info.file_size:,} bytes; an array may take at most "
                  f"{MAX_ARRAY_BYTES:,}")
    fmt = np.lib.format
    with z.open(info) as f:
        version = fmt.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(f)
        else:
            raise bad(f".npy format version {version}; expected 1.0 or 2.0")
        if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None \
                or dtype.kind not in "biufU":
            raise bad(f"dtype {dtype}; expected plain numbers (or text)")
        if any(n < 0 for n in shape):
            raise bad(f"shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > MAX_ARRAY_BYTES:
            raise bad(f"its header claims {dtype} of shape {shape} ({nbytes:,} bytes); an "
                      f"array may take at most {MAX_ARRAY_BYTES:,}")
        held = info.file_size - f.tell()
        if nbytes != held:
            raise bad(f"its header claims {dtype} of shape {shape} ({nbytes:,} bytes), "
                      f"the archive holds {held:,} bytes of data")
        data = bytearray(f.read(nbytes))
    if len(data) != nbytes:
        raise bad(f"{len(data):,} bytes of data; expected {nbytes:,}")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def utc_now() -> str:
    """The time now as an ISO string, for cards."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
