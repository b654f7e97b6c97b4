"""The numba core of training: whole self-play games with TD(lambda) learning.

One call of :func:`selfplay_games` plays games between the network and itself, each
game entirely inside numba:

* dice from an explicit splitmix64 state (``uint64[1]``), so a run is reproducible
  and resumable: the state is saved in the checkpoint;
* every legal successor is rated by the network (its hidden layer computed from the
  flipped parent's by :func:`engine.eval.network.hidden_delta`), and the mover plays the one
  with the best cubeless money equity for him; a successor that ends the game is scored
  exactly, by the game's own rules (:func:`engine.rules.scoring.result_k` through
  :func:`engine.rules.scoring.result_probs`: a bear-off, plakoto's mother, a draw), its points
  mapped to the five outputs (2: the gammon output, 3: the backgammon output too);
* after the game each position ``s_t`` is moved towards its lambda-return (the offline
  form of TD(lambda), no eligibility traces to carry): ``G_T`` is the real result and
  ``G_t = flip(lam * G_{t+1} + (1 - lam) * V(s_{t+1}))``, where ``V(s_{t+1})`` is the
  rating the mover saw when he chose ``s_{t+1}`` and ``flip`` turns the five outputs to
  the other side. The update is the gradient of the outputs' log-loss, which touches
  only the inputs that are on, so learning costs about one forward pass per position.

The weight arrays are updated in place; several worker processes may share them
(Hogwild). The network learns only from its own games.
"""

from __future__ import annotations

import numpy as np

from engine._jit import FAST, njit
from engine.eval.encoding import MAX_COUNT, MAX_UNITS
from engine.eval.features import family_features, features, uses_family
from engine.eval.heuristic import best_successor as _heuristic_successor
from engine.eval.network import choose_successor, hidden_full, outputs
from engine.eval.pubeval import _best_successor, _is_race
from engine.movegen._core import PLAY_BEAM, generate_turn
from engine.rules import _layout as L
from engine.rules._rng import below, uniform
from engine.rules.scoring import N_OUTPUTS, flip_probs_into, result_k, result_probs
from engine.rules.variants import T_MOTHER

# columns of the per-worker statistics row
ST_GAMES, ST_TURNS, ST_WINS_FIRST, ST_GAMMONS, ST_BACKGAMMONS, ST_ABANDONED = range(6)
N_STATS = 8

# opponents of evaluate_games
OPP_RANDOM = 0
OPP_PUBEVAL = 1
OPP_HEURISTIC = 2      # engine.eval.heuristic, for the games PubEval cannot read

# params vector of selfplay_games
P_ALPHA, P_ALPHA_FINAL, P_HALF_LIFE, P_LAM, P_EPSILON = range(5)
N_PARAMS = 5

# control flags (shared int64 array)
C_PAUSE = 0            # nonzero (a pause epoch): return after the current game
C_STOP = 1             # nonzero: workers exit


# --------------------------------------------------------------------- small helpers
@njit(**FAST)
def _rate(c, sc, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h, act, o):
    """Outputs of one state for its side to move (exact when the game is over)."""
    if not result_probs(c, sc, o):
        hidden_full(c, w1t, b1, uidx, uval, cidx, cval, fidx, h)
        outputs(h, w2, b2, act, o)


@njit(**FAST)
def _learn_rows(w1t, idx, val, gh):
    """The share of :func:`_learn`'s step of inputs ``idx`` with values ``val`` (the
    constant inputs, the hand-crafted features): ``w1t[idx[k]] += val[k] * gh``."""
    nh = gh.shape[0]
    for k in range(idx.shape[0]):
        v = val[k]
        if v != 0:
            i = idx[k]
            for j in range(nh):
                w1t[i, j] += v * gh[j]


@njit(**FAST)
def _learn(s, target, alpha, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h, act, o, gh):
    """One gradient step moving the outputs of ``s`` towards ``target`` (log-loss
    gradient: ``target - output`` at each output's pre-activation)."""
    hidden_full(s, w1t, b1, uidx, uval, cidx, cval, fidx, h)
    outputs(h, w2, b2, act, o)
    nh = b1.shape[0]
    for j in range(nh):
        gh[j] = 0.0
    for k in range(N_OUTPUTS):
        d = target[k] - o[k]
        for j in range(nh):
            gh[j] += d * w2[k, j]
    for j in range(nh):
        gh[j] *= alpha * act[j] * (1.0 - act[j])
    for k in range(N_OUTPUTS):
        d = alpha * (target[k] - o[k])
        for j in range(nh):
            w2[k, j] += d * act[j]
        b2[k] += d
    for j in range(nh):
        b1[j] += gh[j]
    _learn_rows(w1t, cidx, cval, gh)
    for slot in range(uidx.shape[0]):
        n = min(s[slot], MAX_COUNT - 1)
        for u in range(MAX_UNITS):
            i = uidx[slot, u]
            if i < 0:
                break
            v = uval[slot, n, u]
            if v != 0:
                for j in range(nh):
                    w1t[i, j] += v * gh[j]
    if fidx.shape[0] > 0:
        if uses_family(fidx):
            _learn_rows(w1t, fidx, family_features(s), gh)
        else:
            _learn_rows(w1t, fidx, features(s), gh)


@njit(cache=True)
def _roll(st, s, first, rolls_both):
    """Dice for the next turn: ``(0, 0)`` for a pending segment; on the first turn of
    backgammon-like games a non-double (the opening roll's distribution)."""
    if s[L.NPEND] > 0:
        return 0, 0
    while True:
        a = below(st, 6) + 1
        b = below(st, 6) + 1
        if a != b or not first or rolls_both:
            return a, b


# --------------------------------------------------------------------- scoring
def score_arg(scoring, table) -> np.ndarray:
    """The score table (:func:`engine.rules.scoring.score_table`) the kernels take, from either
    that table or, as older callers pass it, the ``backgammon_triple`` flag alone (the
    other scoring settings then come from ``table``: the plakoto mother; no koks)."""
    if isinstance(scoring, np.ndarray) and scoring.shape == (4,):
        return scoring.astype(np.int64)
    if isinstance(scoring, (bool, np.bool_, int, np.integer)):
        return np.array([int(bool(scoring)), 0, 0, int(table[T_MOTHER])], np.int64)
    raise TypeError(f"scoring {scoring!r}: expected engine.rules.scoring.score_table(rules) or a "
                    f"backgammon_triple flag")


# --------------------------------------------------------------------- self-play
def selfplay_games(start, table, scratch, scoring, rolls_both, w1t, b1, w2, b2, uidx, uval,
                   cidx, cval, fidx, params, max_turns, n_games, st, counts, worker, control,
                   stats):
    """Play and learn from up to ``n_games`` self-play games (fewer when
    ``control[C_PAUSE]`` is raised); returns the number played.

    ``scoring`` is the game's score table (:func:`engine.rules.scoring.score_table`; a bare
    ``backgammon_triple`` flag is still accepted, see :func:`score_arg`). ``scratch`` is
    the move generator's work space (:func:`engine.movegen._core.new_scratch`).

    ``counts[w]`` are the games finished by each worker (the learning rate follows
    their sum); this worker adds to ``counts[worker]`` and ``stats[worker]``.
    """
    return _selfplay_games(start, table, scratch, score_arg(scoring, table), rolls_both,
                           w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, params, max_turns,
                           n_games, st, counts, worker, control, stats)


@njit(cache=True)
def _selfplay_games(start, table, scratch, sc, rolls_both, w1t, b1, w2, b2, uidx, uval,
                    cidx, cval, fidx, params, max_turns, n_games, st, counts, worker, control,
                    stats):
    """The kernel of :func:`selfplay_games`."""
    nh = b1.shape[0]
    out = np.empty((64, L.STATE_LEN), np.int16)
    hist = np.empty((max_turns + 1, L.STATE_LEN), np.int16)
    vals = np.empty((max_turns + 1, N_OUTPUTS), np.float32)
    flips = np.empty(max_turns + 1, np.bool_)
    s = np.empty(L.STATE_LEN, np.int16)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(nh, np.float32)
    h = np.empty(nh, np.float32)
    act = np.empty(nh, np.float32)
    gh = np.empty(nh, np.float32)
    o = np.empty(N_OUTPUTS, np.float32)
    o_best = np.empty(N_OUTPUTS, np.float32)
    g_next = np.empty(N_OUTPUTS, np.float32)
    target = np.empty(N_OUTPUTS, np.float32)
    alpha0 = params[P_ALPHA]
    alpha_final = params[P_ALPHA_FINAL]
    half_life = params[P_HALF_LIFE]
    lam = params[P_LAM]
    epsilon = params[P_EPSILON]
    played = 0
    for _ in range(n_games):
        if control[C_PAUSE] != 0:
            break
        s[:] = start
        t = 0
        over = False
        first_to_move = True            # whether the first mover is to move in s
        winner = -1
        points = 0
        while t < max_turns:
            d1, d2 = _roll(st, s, t == 0, rolls_both)
            segment = d1 == 0
            n, out = generate_turn(s, d1, d2, table, scratch, out, PLAY_BEAM)
            hist[t] = s
            flips[t] = not segment
            if n == 1:
                i = 0
                _rate(out[0], sc, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h, act, o_best)
            else:
                i = choose_successor(s, out, n, segment, sc, w1t, b1, w2, b2, uidx, uval,
                            cidx, cval, fidx, ref, h_ref, h, act, o, o_best)
                if epsilon > 0.0 and uniform(st) < epsilon:
                    i = below(st, n)
                    _rate(out[i], sc, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h,
                          act, o_best)
            s[:] = out[i]
            t += 1
            vals[t] = o_best
            if not segment:
                first_to_move = not first_to_move
            winner, points, kind = result_k(s, sc)
            if winner >= 0:
                over = True
                break
        row = stats[worker]
        if not over:
            row[ST_ABANDONED] += 1
            continue
        row[ST_GAMES] += 1
        row[ST_TURNS] += t
        if points == 2:
            row[ST_GAMMONS] += 1
        elif points >= 3:
            row[ST_BACKGAMMONS] += 1
        # winner 0: the side to move of the final state won
        if winner < 2 and (winner == 0) == first_to_move:
            row[ST_WINS_FIRST] += 1
        # learning rate from the games all workers have finished
        total = 0
        for w in range(counts.shape[0]):
            total += counts[w]
        alpha = alpha_final + (alpha0 - alpha_final) * 0.5 ** (total / half_life)
        # lambda-returns backwards from the exact result
        for k in range(N_OUTPUTS):
            g_next[k] = vals[t, k]
        for u in range(t - 1, -1, -1):
            for k in range(N_OUTPUTS):
                o[k] = lam * g_next[k] + (1.0 - lam) * vals[u + 1, k]
            if flips[u]:
                flip_probs_into(o, target)
            else:
                for k in range(N_OUTPUTS):
                    target[k] = o[k]
            _learn(hist[u], target, alpha, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h,
                   act, o, gh)
            for k in range(N_OUTPUTS):
                g_next[k] = target[k]
        counts[worker] += 1
        played += 1
    return played


# --------------------------------------------------------------------- evaluation
def evaluate_games(start, table, scratch, scoring, rolls_both, w1t, b1, w2, b2, uidx, uval,
                   cidx, cval, fidx, opponent, pw, max_turns, n_games, st, points, hw=None):
    """Play ``n_games`` games of the network (greedy, 0-ply) against ``opponent``
    (:data:`OPP_RANDOM`, :data:`OPP_PUBEVAL` with PubEval weights ``pw``, or
    :data:`OPP_HEURISTIC` with :mod:`engine.eval.heuristic` weights ``hw``); ``points[g]``
    gets the network's score of game ``g`` (negative when it lost, 0 for a draw or a
    game cut at ``max_turns``). The network makes the first move in the even-numbered
    games. ``scoring`` as in :func:`selfplay_games`."""
    if opponent == OPP_HEURISTIC and hw is None:
        raise ValueError("OPP_HEURISTIC needs the heuristic weights hw "
                         "(engine.eval.heuristic.weights(rules))")
    hw = np.zeros(1) if hw is None else np.asarray(hw, np.float64)
    return _evaluate_games(start, table, scratch, score_arg(scoring, table), rolls_both,
                           w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, opponent, pw, hw,
                           max_turns, n_games, st, points)


@njit(cache=True)
def _evaluate_games(start, table, scratch, sc, rolls_both, w1t, b1, w2, b2, uidx, uval,
                    cidx, cval, fidx, opponent, pw, hw, max_turns, n_games, st, points):
    """The kernel of :func:`evaluate_games`."""
    nh = b1.shape[0]
    out = np.empty((64, L.STATE_LEN), np.int16)
    s = np.empty(L.STATE_LEN, np.int16)
    ref = np.empty(L.STATE_LEN, np.int16)
    h_ref = np.empty(nh, np.float32)
    h = np.empty(nh, np.float32)
    act = np.empty(nh, np.float32)
    o = np.empty(N_OUTPUTS, np.float32)
    o_best = np.empty(N_OUTPUTS, np.float32)
    for g in range(n_games):
        s[:] = start
        net_to_move = g % 2 == 0           # whether the network is the side to move of s
        points[g] = 0
        for t in range(max_turns):
            d1, d2 = _roll(st, s, t == 0, rolls_both)
            segment = d1 == 0
            n, out = generate_turn(s, d1, d2, table, scratch, out, PLAY_BEAM)
            if n == 1:
                i = 0
            elif net_to_move:
                i = choose_successor(s, out, n, segment, sc, w1t, b1, w2, b2, uidx, uval,
                            cidx, cval, fidx, ref, h_ref, h, act, o, o_best)
            elif opponent == OPP_PUBEVAL:
                i = _best_successor(out, n, _is_race(s), pw)
            elif opponent == OPP_HEURISTIC:
                i = _heuristic_successor(out, n, segment, table, sc, hw)
            else:
                i = below(st, n)
            s[:] = out[i]
            if not segment:
                net_to_move = not net_to_move
            winner, pts, kind = result_k(s, sc)
            if winner >= 0:
                if winner < 2:
                    points[g] = pts if (winner == 0) == net_to_move else -pts
                break
