"""The one numba game loop: whole games between two kernel players, from the opening
roll to the end, for every game-playing driver of the engine and of training.

:func:`play_games` plays a batch of games of one game's rules. Each player is a kind
(:data:`KIND_RANDOM`, :data:`KIND_PUBEVAL`, :data:`KIND_NETWORK`, :data:`KIND_HEURISTIC`),
with a network's arrays for a network player. The drivers around it are thin:

* :func:`engine.play.game.playouts` (random / PubEval players, every position checked,
  the first games recorded);
* :func:`engine.play.duel.duel` (duplicate dice per pair of games, seats swapped) and
  :func:`engine.play.duel.heuristic_duel` (the heuristic against a random mover);
* :func:`training.td.selfplay_games`, which calls it for one game at a time,
  recorded for learning (each state, its roll, and the rated outputs of the successor
  the network chose), and
  :func:`training.td.evaluate_games` (the network against random, PubEval or the
  heuristic).

One convention for the opening: the player in seat 0 throws the first die, the player
in seat 1 the second, ties are thrown again; the higher die starts and plays both dice,
or rolls afresh when the rules say ``opening_rolls_both``. Gul bara's pending dice are
played as a segment (no dice) before the roll of the side that received them; a segment
is not a turn (the mover stays the same).

:func:`game_args` builds the kernel's arguments with one set of types, so that a single
compiled signature (and one cache entry) per walk marker (the direct walk of backgammon
and portes, the whole generator of the nardy games) serves every driver; it fills in
placeholders for what a batch does not use (a network for non-network players, PubEval
or heuristic weights, the recording arrays).
"""

from __future__ import annotations

import numpy as np

from engine._jit import FAST, njit
from engine.eval.features import EXTENDED_INDEX, FAMILY_INDEX
from engine.eval.heuristic import N_WEIGHTS, best_successor as _heuristic_successor
from engine.eval.network import (
    choose_successor,
    delta_work,
    helper_beside,
    hidden_full,
    output_probs,
)
from engine.eval.pubeval import _best_successor, _is_race, weights as pubeval_weights
from engine.movegen._core import PLAY_BEAM, new_scratch, turn, walk_for
from engine.rules import _layout as L
from engine.rules._rng import below, die, uniform
from engine.rules.scoring import (
    N_OUTPUTS,
    S_HOME_MARS,
    S_KOKS,
    S_MOTHER,
    S_TRIPLE,
    result_k,
    result_probs,
)
from engine.rules.states import STATE_ERRORS, state_error
from engine.rules.variants import (
    CASCADE_GAME,
    CASCADE_NONE,
    MOTHER_DEFERRED,
    PIN,
    T_CASCADE,
    T_MEET,
)

# player kinds
KIND_RANDOM = 0
"""Kernel player: a uniformly random successor."""
KIND_PUBEVAL = 1
"""Kernel player: the successor PubEval scores highest (backgammon boards only; it
plays a gul bara pending segment at random, which never arises on such boards)."""
KIND_NETWORK = 2
"""Kernel player: the successor a network rates best (greedy 0-ply, as in training)."""
KIND_HEURISTIC = 3
"""Kernel player: the successor :mod:`engine.eval.heuristic` scores highest."""

# columns of the per-game rows
(G_WINNER, G_POINTS, G_KIND, G_TURNS, G_STARTER, G_ERROR, G_MAXSUCC, G_PENDING,
 G_STEPS) = range(9)
N_COLUMNS = 9
WINNER_DRAW = 2
"""``G_WINNER`` of a drawn game (plakoto's deferred mother)."""
WINNER_NONE = -1
"""``G_WINNER`` of a game that did not end: cut at ``max_turns`` or stopped by an error."""

# columns of the recording rows (rec_meta)
R_GAME, R_D1, R_D2, R_MOVER, R_COUNT = range(5)
N_META = 5

# error codes (G_ERROR); codes other than 9 and 10 come only from checked games
ERRORS = {
    **STATE_ERRORS,          # the position itself (engine.rules.states.state_error)
    # and the step to it from the position before (_check_pending, _check_step)
    6: "pending dice outside gul bara, out of 1..6, or not the unplayed tail of the cascade",
    7: "scratch fields or unused slots not cleared",
    8: "a negative turn counter, or turn counters not advanced as docs/rules.md says",
    9: "a roll with no successor (a lost turn must give exactly one)",
    10: "the game did not end within max_turns",
    12: "an impossible score for this game",
}
E_NO_SUCCESSOR = 9
E_CUT = 10


# --------------------------------------------------------------------- checks
@njit(cache=True)
def _check_pending(before, after, d, table):
    """0 when the pending dice of ``after`` (from a roll ``d-d`` or a non-double, d = 0)
    can be what gul bara's cascade left unplayed, else ERRORS code 6."""
    n = after[L.NPEND]
    if n == 0:
        return 0
    casc = table[T_CASCADE]
    if d == 0 or casc == CASCADE_NONE:
        return 6
    if casc == CASCADE_GAME:
        on = before[L.TURNS_ME] + before[L.TURNS_THEM] >= 3
    else:
        on = before[L.TURNS_ME] >= 3
    if not on:
        return 6
    # a tail of d,d,d,d, d+1 x4, ..., 6 x4: nondecreasing, ends in 6, the first value
    # at most four times, every later value exactly four times
    if after[L.PEND + n - 1] != 6:
        return 6
    first = after[L.PEND]
    if first < d:
        return 6
    k = 0
    while k < n and after[L.PEND + k] == first:
        k += 1
    if k > 4:
        return 6
    v = first
    while k < n:
        v += 1
        for _ in range(4):
            if k >= n or after[L.PEND + k] != v:
                return 6
            k += 1
    return 0


@njit(cache=True)
def _check_step(before, after, segment, d1, d2, table):
    """0 when ``after`` follows ``before`` as docs/rules.md says (a segment keeps the
    turn counters and clears the pending dice; a roll swaps the sides' counters and
    advances the mover's, leaving only a cascade's unplayed tail pending), else an
    ERRORS code."""
    if segment:
        if (after[L.NPEND] != 0 or after[L.TURNS_ME] != before[L.TURNS_ME]
                or after[L.TURNS_THEM] != before[L.TURNS_THEM]):
            return 8
        return 0
    if (after[L.TURNS_ME] != before[L.TURNS_THEM]
            or after[L.TURNS_THEM] != before[L.TURNS_ME] + 1):
        return 8
    return _check_pending(before, after, d1 if d1 == d2 else 0, table)


@njit(cache=True)
def _valid_score(kind, points, sc, meet):
    """Whether ``(kind, points)`` is a score the scoring settings allow."""
    if kind == 1:
        return points == 1
    if kind == 2:
        return points == 2
    if kind == 3:
        return points == 3 and sc[S_TRIPLE] != 0
    if kind == 4:
        return points == 3 and sc[S_KOKS] != 0
    if kind == 5:
        return points == 4 and sc[S_HOME_MARS] != 0
    if kind == 6:
        return points == 2 and meet == PIN and sc[S_MOTHER] != 0
    if kind == 7:
        return points == 0 and sc[S_MOTHER] == MOTHER_DEFERRED
    return False


@njit(**FAST)
def _rate(c, sc, w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx, h, o):
    """Outputs of state ``c`` for its side to move (exact when the game is over)."""
    if not result_probs(c, sc, o):
        hidden_full(c, w1t, b1, uidx, uval, cidx, cval, fidx, h)
        output_probs(h, w2, b2, o)


@njit(**FAST)
def _hidden_pair(net):
    """Two hidden-layer buffers of ``net``'s size (a parent's and a kid's)."""
    nh = net[1].shape[0]
    return np.empty(nh, np.float32), np.empty(nh, np.float32)


# --------------------------------------------------------------------- the loop
@njit(cache=True)
def play_games(start, table, walk, sc, rolls_both, kinds, net_a, net_b, race_a, race_b, raced,
               pw, hw, epsilon, max_turns, st, cst, dice_seeds, choice_seeds, swap, check,
               scratch, games, rec, rec_meta, rec_vals, rec_games):
    """Play ``games.shape[0]`` games from state ``start``; row ``g`` of ``games`` gets
    the G_* columns of game ``g``. Returns the number of recorded rows.

    Rules: ``table`` (:meth:`Rules.table`), ``walk`` (its
    :func:`engine.movegen._core.walk_for`: a kernel for backgammon or portes compiles
    the move generator's direct walk alone), ``sc`` (:func:`engine.rules.scoring.score_table`),
    ``rolls_both`` (``Rules.opening_rolls_both``). Players: ``kinds[p]`` is the KIND_*
    of player ``p`` (0 = A, 1 = B); ``net_a`` / ``net_b`` are its network's
    ``(w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx)`` (read only for a network
    player), ``pw`` PubEval's weights, ``hw`` the heuristic's. Where ``raced[p]`` is
    true, network player ``p`` rates the plays of a race (a position without contact,
    :func:`engine.eval.pubeval._is_race`) with ``race_a`` / ``race_b``, a network of
    the same types, instead (game phases; the bear-off tables play no part here). A
    network mover with two or more successors plays a random one with probability
    ``epsilon`` (exploration).

    Seats: player ``seat ^ h`` sits in seat ``seat``, where ``h = g & 1`` when ``swap``
    (the players change seats every game) and 0 otherwise; seat 0 throws the first
    opening die. Random streams (``uint64[1]`` states of :mod:`engine.rules._rng`): the
    dice come from ``st``, random choices and exploration from ``cst`` (from ``st``
    when ``cst`` is empty). A non-empty ``dice_seeds`` reseeds ``st`` at the start of
    game ``g`` with ``dice_seeds[g // 2]`` (the two games of a pair roll the same
    dice), a non-empty ``choice_seeds`` reseeds ``cst`` with ``choice_seeds[g]``.

    A game stops when it is over, after ``max_turns`` rolls (G_ERROR 10, winner
    :data:`WINNER_NONE`) or at a roll without successors (9). With ``check`` every
    position met is checked (:data:`ERRORS`) and the first broken invariant stops the
    game. ``scratch`` is the move generator's work space
    (:func:`engine.movegen._core.new_scratch`).

    Recording: for games ``g < rec_games``, while ``rec`` has rows, each state played
    from goes to ``rec`` with ``rec_meta`` row ``(game, d1, d2, mover, count)``: the
    roll played from it (0, 0 for a pending segment), the player to move and the
    number of successors; the final state follows with ``(game, -1, -1, mover, 0)``.
    When ``rec_vals`` has rows, a network mover's row of it gets the outputs of the
    successor he played, for its side to move, as his network rates it (exact when
    the game is over).

    Row columns: G_WINNER (player 0 / 1, :data:`WINNER_DRAW`, :data:`WINNER_NONE`),
    G_POINTS (points won at cube value 1, 0 for a draw or an unfinished game), G_KIND
    (a :class:`~engine.rules.scoring.Kind` code, 0 while unfinished), G_TURNS (rolls
    played, lost turns and the opening roll included), G_STARTER (the player who won
    the opening roll), G_ERROR (0 or an :data:`ERRORS` code), G_MAXSUCC (most
    successors of a roll), G_PENDING (pending segments played), G_STEPS (positions
    played from: rolls plus segments).
    """
    out = np.empty((64, L.STATE_LEN), np.int16)
    s = np.empty(L.STATE_LEN, np.int16)
    ref = np.zeros(L.STATE_LEN, np.int16)
    # hidden layers (the parent's and a kid's) of each network and each race network
    na_ref, na_h = _hidden_pair(net_a)
    nb_ref, nb_h = _hidden_pair(net_b)
    ra_ref, ra_h = _hidden_pair(race_a)
    rb_ref, rb_h = _hidden_pair(race_b)
    ha_ref, ha, hb_ref, hb = na_ref, na_h, nb_ref, nb_h
    work = delta_work()              # shared: each choice sets it up afresh
    o = np.empty(N_OUTPUTS, np.float32)
    o_best = np.empty(N_OUTPUTS, np.float32)
    # the networks' arrays, unpacked once (not per call: each unpacking is reference
    # counting, and the network's choice is the hot path of self-play)
    w1a, b1a, w2a, b2a, uia, uva, cia, cva, fia = net_a
    w1b, b1b, w2b, b2b, uib, uvb, cib, cvb, fib = net_b
    ch = st if cst.shape[0] == 0 else cst
    keep_vals = rec_vals.shape[0] > 0
    meet = table[T_MEET]
    nrec = 0
    for g in range(games.shape[0]):
        half = g & 1 if swap else 0
        if dice_seeds.shape[0] > 0:
            st[0] = dice_seeds[g // 2]
        if choice_seeds.shape[0] > 0:
            cst[0] = choice_seeds[g]
        s[:] = start
        a = 0
        b = 0
        while a == b:
            a = die(st)
            b = die(st)
        mover = 0 if a > b else 1                # the seat to move in s
        games[g, G_STARTER] = mover ^ half
        opening = not rolls_both
        turns = 0
        steps = 0
        maxsucc = 0
        npending = 0
        err = state_error(s, table) if check else 0
        winner, points, kind = result_k(s, sc)
        while err == 0 and winner < 0:
            if turns >= max_turns:
                err = E_CUT
                break
            segment = s[L.NPEND] > 0
            if segment:
                d1 = 0
                d2 = 0
                npending += 1
            elif opening:
                d1 = a
                d2 = b
                opening = False
            else:
                d1 = die(st)
                d2 = die(st)
            player = mover ^ half
            recorded = g < rec_games and nrec < rec.shape[0]
            if recorded:
                rec[nrec] = s
                rec_meta[nrec, R_GAME] = g
                rec_meta[nrec, R_D1] = d1
                rec_meta[nrec, R_D2] = d2
                rec_meta[nrec, R_MOVER] = player
                nrec += 1
            n, out = turn(walk, s, d1, d2, table, scratch, out, PLAY_BEAM)
            if recorded:
                rec_meta[nrec - 1, R_COUNT] = n
            if n <= 0:
                err = E_NO_SUCCESSOR
                break
            if n > maxsucc:
                maxsucc = n
            pk = kinds[player]
            if pk == KIND_NETWORK and raced[player]:
                # the game phase picks the network (only where a race network is given:
                # the arrays stay unpacked once on the hot path of self-play)
                if player == 0:
                    if _is_race(s):
                        w1a, b1a, w2a, b2a, uia, uva, cia, cva, fia = race_a
                        ha_ref, ha = ra_ref, ra_h
                    else:
                        w1a, b1a, w2a, b2a, uia, uva, cia, cva, fia = net_a
                        ha_ref, ha = na_ref, na_h
                elif _is_race(s):
                    w1b, b1b, w2b, b2b, uib, uvb, cib, cvb, fib = race_b
                    hb_ref, hb = rb_ref, rb_h
                else:
                    w1b, b1b, w2b, b2b, uib, uvb, cib, cvb, fib = net_b
                    hb_ref, hb = nb_ref, nb_h
            rated = False
            if n == 1:
                i = 0
            elif pk == KIND_NETWORK:
                if player == 0:
                    i = choose_successor(s, out, n, segment, sc, w1a, b1a, w2a, b2a, uia,
                                         uva, cia, cva, fia, ref, ha_ref, ha, work, o, o_best)
                else:
                    i = choose_successor(s, out, n, segment, sc, w1b, b1b, w2b, b2b, uib,
                                         uvb, cib, cvb, fib, ref, hb_ref, hb, work, o, o_best)
                rated = True
                if epsilon > 0.0 and uniform(ch) < epsilon:
                    i = below(ch, n)
                    rated = False
            elif pk == KIND_PUBEVAL and not segment:
                i = _best_successor(out, n, _is_race(s), pw)
            elif pk == KIND_HEURISTIC:
                i = _heuristic_successor(out, n, segment, table, sc, hw)
            else:
                i = below(ch, n)
            if recorded and keep_vals and pk == KIND_NETWORK:
                if not rated:
                    if player == 0:
                        _rate(out[i], sc, w1a, b1a, w2a, b2a, uia, uva, cia, cva, fia, ha,
                              o_best)
                    else:
                        _rate(out[i], sc, w1b, b1b, w2b, b2b, uib, uvb, cib, cvb, fib, hb,
                              o_best)
                rec_vals[nrec - 1] = o_best
            nxt = out[i]
            if check:
                err = state_error(nxt, table)
                if err != 0:
                    s[:] = nxt
                    break
                err = _check_step(s, nxt, segment, d1, d2, table)
            s[:] = nxt
            steps += 1
            if not segment:
                mover ^= 1
                turns += 1
            winner, points, kind = result_k(s, sc)
        if check and err == 0 and not _valid_score(kind, points, sc, meet):
            err = 12
        if g < rec_games and nrec < rec.shape[0]:
            rec[nrec] = s
            rec_meta[nrec, R_GAME] = g
            rec_meta[nrec, R_D1] = -1
            rec_meta[nrec, R_D2] = -1
            rec_meta[nrec, R_MOVER] = mover ^ half
            rec_meta[nrec, R_COUNT] = 0
            nrec += 1
        if winner == 2:
            games[g, G_WINNER] = WINNER_DRAW
        elif winner >= 0:
            # winner 0: the side to move in s (seat `mover`) won
            games[g, G_WINNER] = (mover if winner == 0 else mover ^ 1) ^ half
        else:
            games[g, G_WINNER] = WINNER_NONE
        games[g, G_POINTS] = points if winner >= 0 else 0
        games[g, G_KIND] = kind if winner >= 0 else 0
        games[g, G_TURNS] = turns
        games[g, G_ERROR] = err
        games[g, G_MAXSUCC] = maxsucc
        games[g, G_PENDING] = npending
        games[g, G_STEPS] = steps
    return nrec


# --------------------------------------------------------------------- arguments
def _array(a, dtype, readonly: bool = False) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` that is read-only (a read-only view) or
    writable (a copy of a read-only one; the kernel only reads it), so that every caller
    passes the kernel the same array types. Each argument keeps the type that the
    helpers it reaches get from their other callers (the move generator, the network,
    PubEval, the heuristic), so that none of them is compiled a second time for a
    read-only twin of a type: the encoder's arrays and PubEval's weights are read-only
    everywhere, the rest writable."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if readonly and a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    elif not readonly and not a.flags.writeable:
        a = a.copy()
    return a


_NET_TYPES = (np.float32, np.float32, np.float32, np.float32, np.int64, np.float32,
              np.int64, np.float32, np.int64)
_NET_READONLY = (False, False, False, False, True, True, True, True, True)


def no_network() -> tuple:
    """Network arrays for a player that is not a network (the kernel never reads them):
    tiny arrays of the network types, with the ``tesauro198`` encoder's arrays."""
    from engine.eval.encoding import get_encoder
    e = get_encoder("tesauro198")
    return (np.zeros((1, 1), np.float32), np.zeros(1, np.float32),
            np.zeros((N_OUTPUTS, 1), np.float32), np.zeros(N_OUTPUTS, np.float32),
            e.unit_index, e.unit_value, e.const_index, e.const_value, e.feature_index)


def network_arrays(net) -> tuple:
    """``(w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx)`` of a
    :class:`~engine.eval.network.Network` (or such a tuple already), as the kernel
    takes them: the same arrays when they have the kernel's types (so that a learner
    updating the weights in place between games is seen), the weights writable and the
    encoder's arrays read-only."""
    arrays = tuple(net) if isinstance(net, tuple) else (*net.arrays(), *net.encoder_arrays())
    if len(arrays) != 9:
        raise ValueError(f"{len(arrays)} network arrays: expected (w1t, b1, w2, b2, uidx, "
                         f"uval, cidx, cval, fidx)")
    fidx = arrays[8]            # its dtype names the feature set (features.FAMILY_INDEX, ..)
    types = _NET_TYPES[:8] + (fidx.dtype if fidx.dtype in (FAMILY_INDEX, EXTENDED_INDEX)
                              else np.int64,)
    return tuple(_array(a, t, ro) for a, t, ro in zip(arrays, types, _NET_READONLY))


def _reading(race, net):
    """A race network beside ``net``, both Networks, as the kernels take it
    (:func:`engine.eval.network.helper_beside`); anything else as it is."""
    if hasattr(race, "encoder") and hasattr(net, "encoder"):
        return helper_beside(race, net)[1]
    return race


_EMPTY_SEEDS = np.zeros(0, np.uint64)
_KINDS = (KIND_RANDOM, KIND_PUBEVAL, KIND_NETWORK, KIND_HEURISTIC)


def game_args(start, table, sc, rolls_both, kinds, net_a=None, net_b=None, *, games,
              st, race_a=None, race_b=None, cst=None, pw=None, hw=None, epsilon: float = 0.0,
              max_turns: int = 10_000, dice_seeds=None, choice_seeds=None,
              swap: bool = False, check: bool = False, scratch=None, rec=None,
              rec_meta=None, rec_vals=None, rec_games: int = 0) -> tuple:
    """The argument tuple of :func:`play_games` (see there), with one set of types for
    every caller. ``net_a`` / ``net_b``: a Network, its 9-array tuple or None (a
    placeholder: the other player's arrays when it has some, else :func:`no_network`);
    ``race_a`` / ``race_b``: a network player's race network (None: its network plays
    races too), of its network's kind of inputs (a Network beside a Network is made so:
    :func:`engine.eval.network.helper_beside`);
    ``pw`` / ``hw`` default to PubEval's weights and zeros; ``cst`` and the seeds to
    empty (choices from ``st``, no reseeding); no recording by default. Raises
    ValueError for arguments the kernel would misread (it checks no bounds): a network
    player without a network, a heuristic one without weights, too few seeds or
    recording rows."""
    kinds = _array(kinds, np.int64)
    if kinds.shape != (2,) or not np.isin(kinds, _KINDS).all():
        raise ValueError(f"kinds {kinds.tolist()}: expected two of the KIND_* codes")
    for p, net in enumerate((net_a, net_b)):
        if kinds[p] == KIND_NETWORK and net is None:
            raise ValueError(f"player {p} is a network player without a network")
    if KIND_HEURISTIC in kinds and hw is None:
        raise ValueError("a heuristic player needs the heuristic weights hw "
                         "(engine.eval.heuristic.weights(rules))")
    n = games.shape[0]
    if st.shape != (1,) or (cst is not None and cst.shape != (1,)):
        raise ValueError("st and cst must be uint64[1] random states")
    if dice_seeds is not None and len(dice_seeds) < (n + 1) // 2:
        raise ValueError(f"{len(dice_seeds)} dice seeds for {n} games: one per pair needed")
    if choice_seeds is not None and (cst is None or len(choice_seeds) < n):
        raise ValueError("choice_seeds need a cst state and one seed per game")
    if rec is not None and (rec_meta is None or len(rec_meta) < len(rec)
                            or (rec_vals is not None and 0 < len(rec_vals) < len(rec))):
        raise ValueError("rec_meta (and a non-empty rec_vals) need a row per row of rec")
    na = network_arrays(net_a) if net_a is not None else None
    nb = network_arrays(net_b) if net_b is not None else None
    if na is None:
        na = nb if nb is not None else network_arrays(no_network())
    if nb is None:
        nb = na
    ra = network_arrays(_reading(race_a, net_a)) if race_a is not None else na
    rb = network_arrays(_reading(race_b, net_b)) if race_b is not None else nb
    for p, net, race in ((0, na, ra), (1, nb, rb)):
        if race[8].dtype != net[8].dtype:
            raise ValueError(f"player {p}'s race network reads another kind of inputs "
                             f"than its network (feature index {race[8].dtype}, expected "
                             f"{net[8].dtype})")
    raced = np.array([race_a is not None, race_b is not None])
    empty_u64 = np.zeros(0, np.uint64)
    table = _array(table, np.int64)
    return (_array(start, np.int16), table, walk_for(table), _array(sc, np.int64),
            bool(rolls_both), kinds, na, nb, ra, rb, raced,
            _array(pubeval_weights() if pw is None else pw, np.float32, readonly=True),
            _array(np.zeros(N_WEIGHTS) if hw is None else hw, np.float64),
            float(epsilon), int(max_turns), st, empty_u64 if cst is None else cst,
            _EMPTY_SEEDS if dice_seeds is None else _array(dice_seeds, np.uint64),
            _EMPTY_SEEDS if choice_seeds is None else _array(choice_seeds, np.uint64),
            bool(swap), bool(check), new_scratch() if scratch is None else scratch,
            games,
            np.zeros((1, L.STATE_LEN), np.int16) if rec is None else rec,
            np.zeros((1, N_META), np.int64) if rec_meta is None else rec_meta,
            np.zeros((0, N_OUTPUTS), np.float32) if rec_vals is None else rec_vals,
            int(rec_games))


def new_games(n_games: int) -> np.ndarray:
    """Zeroed per-game rows for :func:`play_games`."""
    return np.zeros((n_games, N_COLUMNS), np.int64)
