"""The numba core of training: self-play games with TD(lambda) learning, and the games
of the strength figure.

:func:`selfplay_games` plays games between the network and itself: it calls the
engine's game loop (:func:`engine.play.loop.play_games`) for one game at a time, then
learns from it in the kernel :func:`_learn_game`:

* dice from an explicit splitmix64 state (``uint64[1]``), so a run is reproducible
  and resumable: the state is saved in the checkpoint; exploration (``epsilon``) draws
  from the same state;
* every legal successor is rated by the network (its hidden layer computed from the
  flipped parent's by :func:`engine.eval.network.hidden_delta`), and the mover plays the one
  with the best cubeless money equity for him; a successor that ends the game is scored
  exactly, by the game's own rules (:func:`engine.rules.scoring.result_k` through
  :func:`engine.rules.scoring.result_probs`: a bear-off, plakoto's mother, a draw), its points
  mapped to the five outputs (2: the gammon output, 3: the backgammon output too); the
  loop records each state played from, its roll and the outputs of the successor
  chosen;
* after the game each position ``s_t`` is moved towards its lambda-return (the offline
  form of TD(lambda), no eligibility traces to carry): ``G_T`` is the real result and
  ``G_t = flip(lam * G_{t+1} + (1 - lam) * V(s_{t+1}))``, where ``V(s_{t+1})`` is the
  rating the mover saw when he chose ``s_{t+1}`` and ``flip`` turns the five outputs to
  the other side (no flip after a gul bara pending segment, where the same side moves
  on). The update is the gradient of the outputs' log-loss, which touches only the
  inputs that are on, so learning costs about one forward pass per position.

The weight arrays are updated in place; several worker processes may share them
(Hogwild). The network learns only from its own games. :func:`evaluate_games` plays
the network against random, PubEval or the heuristic through the same game loop.
"""

from __future__ import annotations

import numpy as np

from engine._jit import FAST, njit
from engine.eval.encoding import MAX_COUNT, MAX_UNITS
from engine.eval.features import feature_values
from engine.eval.network import hidden_full, outputs
from engine.play import loop
from engine.play.loop import (
    G_POINTS,
    G_STARTER,
    G_STEPS,
    G_WINNER,
    KIND_HEURISTIC,
    KIND_NETWORK,
    KIND_PUBEVAL,
    KIND_RANDOM,
    R_D1,
    WINNER_DRAW,
    WINNER_NONE,
)
from engine.rules import _layout as L
from engine.rules.scoring import N_OUTPUTS, N_SCORE_FIELDS, flip_probs_into
from engine.rules.variants import HIT, OPPOSITE, T_CASCADE, T_GEOM, T_MEET, T_MOTHER

# columns of the per-worker statistics row
ST_GAMES, ST_TURNS, ST_WINS_FIRST, ST_GAMMONS, ST_BACKGAMMONS, ST_ABANDONED = range(6)
N_STATS = 8

# opponents of evaluate_games
OPP_RANDOM = 0
OPP_PUBEVAL = 1
OPP_HEURISTIC = 2      # engine.eval.heuristic, for the games PubEval cannot read
_OPP_KINDS = {OPP_RANDOM: KIND_RANDOM, OPP_PUBEVAL: KIND_PUBEVAL, OPP_HEURISTIC: KIND_HEURISTIC}
_SELF = np.array([KIND_NETWORK, KIND_NETWORK], np.int64)

# params vector of selfplay_games; P_GAMES_BEFORE may be left out (no games before)
P_ALPHA, P_ALPHA_FINAL, P_HALF_LIFE, P_LAM, P_EPSILON, P_GAMES_BEFORE = range(6)
N_PARAMS = 6

# control flags (shared int64 array)
C_PAUSE = 0            # nonzero (a pause epoch): return after the current game
C_STOP = 1             # nonzero: workers exit


# --------------------------------------------------------------------- small helpers
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


# no reference counts (engine/_jit.py): called once a position learned from
@njit(_nrt=False, **FAST)
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
        _learn_rows(w1t, fidx, feature_values(fidx, s), gh)


# --------------------------------------------------------------------- scoring
def score_arg(scoring, table) -> np.ndarray:
    """The score table (:func:`engine.rules.scoring.score_table`) the kernels take, from either
    that table or, as older callers pass it, the ``backgammon_triple`` flag alone (the
    other scoring settings then come from ``table``: the plakoto mother; no koks)."""
    if isinstance(scoring, np.ndarray) and scoring.shape == (N_SCORE_FIELDS,):
        return scoring.astype(np.int64)
    if isinstance(scoring, (bool, np.bool_, int, np.integer)):
        races = int(table[T_GEOM] == OPPOSITE and table[T_MEET] == HIT)   # race_geometry
        return np.array([int(bool(scoring)), 0, 0, int(table[T_MOTHER]), races,
                         int(table[T_CASCADE])], np.int64)
    raise TypeError(f"scoring {scoring!r}: expected engine.rules.scoring.score_table(rules) or a "
                    f"backgammon_triple flag")


# --------------------------------------------------------------------- self-play
def selfplay_games(start, table, scratch, scoring, rolls_both, w1t, b1, w2, b2, uidx, uval,
                   cidx, cval, fidx, params, max_turns, n_games, st, counts, worker, control,
                   stats):
    """Play and learn from up to ``n_games`` self-play games (fewer when
    ``control[C_PAUSE]`` is raised, which is looked at before every game); returns the
    number learned from (a game cut at ``max_turns`` rolls is counted in
    ``ST_ABANDONED`` and not learned from).

    ``scoring`` is the game's score table (:func:`engine.rules.scoring.score_table`; a bare
    ``backgammon_triple`` flag is still accepted, see :func:`score_arg`). ``scratch`` is
    the move generator's work space (:func:`engine.movegen._core.new_scratch`). The
    opening follows the game loop's convention (:mod:`engine.play.loop`).

    ``params`` holds the learning settings at the ``P_*`` indices: alpha, alpha_final,
    the half-life, lambda, epsilon and, optionally, the run's games before this session
    (``P_GAMES_BEFORE``). ``counts[w]`` are the games finished by each worker of the
    session; the learning rate follows the games before it plus their sum, so that a
    resumed run goes on with the schedule where it stopped. This worker adds to
    ``counts[worker]`` and ``stats[worker]``.
    """
    net = (w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx)
    rows = 2 * int(max_turns) + 1        # a roll, and a pending segment before it
    game = loop.new_games(1)
    rec = np.empty((rows, L.STATE_LEN), np.int16)
    rec_meta = np.empty((rows, loop.N_META), np.int64)
    rec_vals = np.empty((rows, N_OUTPUTS), np.float32)
    play = loop.game_args(start, table, score_arg(scoring, table), rolls_both, _SELF, net,
                          net, games=game, st=st, epsilon=params[P_EPSILON],
                          max_turns=max_turns, scratch=scratch, rec=rec, rec_meta=rec_meta,
                          rec_vals=rec_vals, rec_games=1)
    learn = (game[0], rec, rec_meta, rec_vals, *net, params, counts, worker, stats)
    # a loop in Python, not a kernel: a kernel calling both would compile the game loop
    # and the learning again into itself (numba re-optimises every callee in each
    # caller: 8 s a walk on a cold start), and the two calls a game cost nothing
    # measurable beside a game's half millisecond (benchmarks/README.md, Cold start)
    played = 0
    for _ in range(n_games):
        if control[C_PAUSE] != 0:
            break
        loop.play_games(*play)
        played += _learn_game(*learn)
    return played


@njit(cache=True)
def _learn_game(game, rec, rec_meta, rec_vals, w1t, b1, w2, b2, uidx, uval, cidx, cval,
                fidx, params, counts, worker, stats):
    """Learn from the self-play game the loop just played: ``game`` is its row (G_*
    columns), ``rec`` / ``rec_meta`` / ``rec_vals`` its recorded positions, rolls and
    chosen ratings. Returns 1, or 0 for a game that did not end (not learned from)."""
    row = stats[worker]
    winner = game[G_WINNER]
    if winner == WINNER_NONE:
        row[ST_ABANDONED] += 1
        return 0
    t = game[G_STEPS]
    points = game[G_POINTS]
    row[ST_GAMES] += 1
    row[ST_TURNS] += t
    if points == 2:
        row[ST_GAMMONS] += 1
    elif points >= 3:
        row[ST_BACKGAMMONS] += 1
    if winner != WINNER_DRAW and winner == game[G_STARTER]:
        row[ST_WINS_FIRST] += 1
    # learning rate from the run's games: those before this session (when given) and
    # those all workers have finished in it
    total = params[P_GAMES_BEFORE] if params.shape[0] > P_GAMES_BEFORE else 0.0
    for w in range(counts.shape[0]):
        total += counts[w]
    alpha = (params[P_ALPHA_FINAL] + (params[P_ALPHA] - params[P_ALPHA_FINAL])
             * 0.5 ** (total / params[P_HALF_LIFE]))
    lam = params[P_LAM]
    nh = b1.shape[0]
    h = np.empty(nh, np.float32)
    act = np.empty(nh, np.float32)
    gh = np.empty(nh, np.float32)
    o = np.empty(N_OUTPUTS, np.float32)
    g_next = np.empty(N_OUTPUTS, np.float32)
    target = np.empty(N_OUTPUTS, np.float32)
    # lambda-returns backwards from the exact result: rec_vals[u] is V(s_{u+1})
    if t > 0:
        for k in range(N_OUTPUTS):
            g_next[k] = rec_vals[t - 1, k]
    for u in range(t - 1, -1, -1):
        for k in range(N_OUTPUTS):
            o[k] = lam * g_next[k] + (1.0 - lam) * rec_vals[u, k]
        if rec_meta[u, R_D1] != 0:            # a roll: the successor is the other side's
            flip_probs_into(o, target)
        else:
            for k in range(N_OUTPUTS):
                target[k] = o[k]
        _learn(rec[u], target, alpha, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h,
               act, o, gh)
        for k in range(N_OUTPUTS):
            g_next[k] = target[k]
    counts[worker] += 1
    return 1


# --------------------------------------------------------------------- evaluation
def evaluate_games(start, table, scratch, scoring, rolls_both, w1t, b1, w2, b2, uidx, uval,
                   cidx, cval, fidx, opponent, pw, max_turns, n_games, st, points, hw=None):
    """Play ``n_games`` games of the network (greedy, 0-ply) against ``opponent``
    (:data:`OPP_RANDOM`, :data:`OPP_PUBEVAL` with PubEval weights ``pw``, or
    :data:`OPP_HEURISTIC` with :mod:`engine.eval.heuristic` weights ``hw``) in one call
    of the game loop; ``points[g]`` gets the network's score of game ``g`` (negative
    when it lost, 0 for a draw or a game cut at ``max_turns``). The network sits in
    seat 0 (it throws the first opening die) in the even-numbered games, in seat 1 in
    the odd ones; dice and random choices come from ``st``. ``scoring`` as in
    :func:`selfplay_games`."""
    if opponent not in _OPP_KINDS:
        raise ValueError(f"opponent {opponent!r}: expected OPP_RANDOM, OPP_PUBEVAL or "
                         f"OPP_HEURISTIC")
    if opponent == OPP_HEURISTIC and hw is None:
        raise ValueError("OPP_HEURISTIC needs the heuristic weights hw "
                         "(engine.eval.heuristic.weights(rules))")
    net = (w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx)
    games = loop.new_games(n_games)
    loop.play_games(*loop.game_args(start, table, score_arg(scoring, table), rolls_both,
                                    [KIND_NETWORK, _OPP_KINDS[opponent]], net, games=games,
                                    st=st, pw=pw, hw=hw, max_turns=max_turns,
                                    scratch=scratch, swap=True))
    winner = games[:, G_WINNER]
    won = games[:, G_POINTS]
    points[:n_games] = np.where(winner == 0, won, np.where(winner == 1, -won, 0))
