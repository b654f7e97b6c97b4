"""The network: encoder against a slow reference, incremental forward, files."""

import json
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from badfiles import bad_models, write_model

from engine._jit import njit
from engine.cli.analyse import main as analyse
from engine.eval import network
from engine.eval.encoding import TESAURO198, EncodingError, get_encoder
from engine.eval.features import features
from engine.eval.network import (
    FORMAT_VERSION,
    Network,
    NetworkFileError,
    delta_work,
    hidden_delta,
    hidden_full,
    hidden_ref,
    kids_ref,
    outputs,
    sigmoid,
)
from engine.movegen._core import generate
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.scoring import flip_probs
from engine.rules.setups import setup_positions
from engine.rules.variants import get_rules

ROOT = Path(__file__).resolve().parent.parent


def slow_tesauro(s):
    """Tesauro's raw encoding written out plainly, from the side to move."""
    x = []
    for block in (L.ME, L.THEM):
        for p in range(1, 25):
            n = int(s[block + p])
            x += [float(n >= 1), float(n >= 2), float(n >= 3), (n - 3) / 2 if n > 3 else 0.0]
        x += [s[block + L.BAR] / 2, s[block + L.OFF] / 15]
    return np.array(x + [1.0, 0.0], dtype=np.float32)


def random_state(rng):
    """15 checkers per side spread at random over points, bar and off (the encoder does
    not care about legality)."""
    s = np.zeros(L.STATE_LEN, np.int16)
    for block in (L.ME, L.THEM):
        for slot in rng.integers(0, 26, size=15):
            s[block + slot] += 1
    return s


def playout_states(n, seed=0):
    """States met in random backgammon play, with their successors for a random roll."""
    rng = np.random.default_rng(seed)
    table = get_rules("backgammon").table()
    s = Position.start().to_array()
    out = np.empty((64, L.STATE_LEN), np.int16)
    found = []
    while len(found) < n:
        d1, d2 = rng.integers(1, 7, size=2)
        k, out = generate(s, d1, d2, table, out)
        found.append((s.copy(), out[:k].copy()))
        s = out[rng.integers(k)].copy()
        if s[L.THEM + L.OFF] == 15:
            s = Position.start().to_array()
    return found


def test_encoder_matches_slow_reference():
    rng = np.random.default_rng(1)
    states = [random_state(rng) for _ in range(300)] + [Position.start().to_array()]
    for s in states:
        np.testing.assert_array_equal(TESAURO198.encode(s), slow_tesauro(s))


def test_feature_encoder_is_raw_plus_features():
    enc = get_encoder("tesauro198+f5")
    rng = np.random.default_rng(5)
    for s in [random_state(rng) for _ in range(100)] + [Position.start().to_array()]:
        x = enc.encode(s)
        np.testing.assert_array_equal(x[:198], slow_tesauro(s))
        assert x.shape == (203,) and (0 <= x[198:]).all()
    net = Network.create("backgammon", 9, encoder="tesauro198+f5",
                         rng=np.random.default_rng(6), scale=0.5)
    h = np.empty(9, np.float32)
    for s in [random_state(rng) for _ in range(30)]:
        hidden_full(s, *net.arrays()[:2], *net.encoder_arrays(), h)
        np.testing.assert_allclose(h, net.b1 + enc.encode(s) @ net.w1t, rtol=1e-5, atol=1e-5)


def test_features_on_known_positions():
    start = Position.start().to_array()
    contact, mine, theirs, my_prime, their_prime = features(start)[:5]
    assert contact == 1 and mine == 0 and theirs == 0
    assert my_prime == their_prime == pytest.approx(1 / 6)      # 8 and 6 are made, not 7
    race = Position.from_literal("x 6:5 5:5 4:5; o 6:5 5:5 4:5").to_array()
    assert features(race)[0] == 0 and features(race)[3] == pytest.approx(3 / 6)
    # my blot on 24: their checkers on their 6, 8 and 13 sit 5, 7 and 12 points away
    blot = Position.from_literal("x 24:1 13:6 8:3 6:5; o 24:2 13:5 8:3 6:5").to_array()
    hits = sum(1 for a in range(1, 7) for b in range(1, 7)
               if {5, 7, 12} & ({a, b, a + b} | ({3 * a, 4 * a} if a == b else set())))
    assert features(blot)[1] == pytest.approx(hits / 36)


def slow_side_features(s, side, other):
    """Features 5..12 of :mod:`engine.eval.features` for ``side``, by their definitions."""
    def closed(p):                 # is my point p (1..24) made by the other side?
        return 1 <= p <= 24 and s[other + 25 - p] >= 2

    def escapes(r):                # rolls on which a checker on my point r gets past
        return sum(1 for a in range(1, 7) for b in range(1, 7)
                   if not closed(r - a - b) and not (closed(r - a) and closed(r - b)))

    board = [s[side + p] for p in range(26)]
    rear = max((p for p in range(1, 26) if board[p]), default=0)
    their_rear = max((q for q in range(1, 26) if s[other + q]), default=0)
    behind = sum(board[p] * (p - (25 - their_rear)) for p in range(1, 26)
                 if p > 25 - their_rear)
    home = sum(1 for q in range(1, 7) if s[other + q] >= 2)
    return (escapes(rear) / 36 if rear else 1.0,
            1 - min(escapes(p) for p in range(15, 25)) / 36, behind / 152, home ** 2 / 36)


def test_escape_containment_behind_and_dance_features():
    from engine.rules import _layout as L
    rng = np.random.default_rng(12)
    states = [random_state(rng) for _ in range(300)] + [Position.start().to_array()]
    for s in states:
        f = features(s)
        mine = slow_side_features(s, L.ME, L.THEM)
        theirs = slow_side_features(s, L.THEM, L.ME)
        want = [mine[0], theirs[0], mine[1], theirs[1], mine[2], theirs[2], mine[3],
                theirs[3]]
        np.testing.assert_allclose(f[5:], want, rtol=1e-6, atol=1e-6)
    start = features(Position.start().to_array())
    # the back checkers on 24 face the opponent's 6, 8 and 13: 5, 7 and 12 pips ahead
    assert start[5] == start[6] == pytest.approx(
        sum(1 for a in range(1, 7) for b in range(1, 7)
            if a + b not in (5, 7, 12) and not a == b == 5) / 36)
    # every checker but the opponent's back two must pass their 24 (my 1): 152 pips
    assert start[9] == start[10] == pytest.approx((2 * 23 + 5 * 12 + 3 * 7 + 5 * 5) / 152)
    assert start[11] == start[12] == pytest.approx(1 / 36)     # one home point made


def slow_exposure(s, side, other):
    """Hit, double hit and pip loss of ``side``'s blots (see
    :func:`engine.eval.features._exposure`), by walking each shooter's paths."""
    def mine(t):                    # side's checkers on its point t
        return s[side + t] if 1 <= t <= 24 else 0

    bar = s[other + L.BAR]
    shooters = [0] if bar else [25 - p for p in range(1, 25) if s[other + p]]
    two_shooters = bar != 1
    hit = two = loss = 0
    for a in range(1, 7):
        for b in range(1, 7):
            if a == b:
                reached = set()
                for q in shooters:
                    t = q
                    for _ in range(4):
                        t += a
                        if mine(t) >= 2:
                            break
                        reached.add(t)
                hits = {t for t in reached if mine(t) == 1}
                pair = len(hits) >= 2
            else:
                def one(d):
                    return {q + d for q in shooters if mine(q + d) < 2}
                ha = {t for t in one(a) if mine(t) == 1}
                hb = {t for t in one(b) if mine(t) == 1}
                both = {q + a + b for q in shooters if mine(q + a + b) < 2
                        and (mine(q + a) < 2 or mine(q + b) < 2)}
                hits = ha | hb | {t for t in both if mine(t) == 1}
                on = any(mine(t + b) == 1 for t in ha) or any(mine(t + a) == 1 for t in hb)
                pair = on or (two_shooters and any(x != y for x in ha for y in hb))
            if hits:
                hit += 1
                loss += 25 - min(hits)
                two += pair
    return hit / 36, two / 36, loss / (36 * 24)


def test_extended_features_match_their_definition():
    from engine.eval.features import N_EXTENDED, extended_features
    rng = np.random.default_rng(21)
    states = ([random_state(rng) for _ in range(200)] + [Position.start().to_array()]
              + [s for s, _ in playout_states(100, seed=4)])
    for s in states:
        f = extended_features(s)
        assert len(f) == N_EXTENDED     # the inputs 21.. below
        np.testing.assert_allclose(f[:13], features(s), rtol=1e-6, atol=1e-6)
        mine, theirs = slow_exposure(s, L.ME, L.THEM), slow_exposure(s, L.THEM, L.ME)
        np.testing.assert_allclose(f[13:19], [mine[0], theirs[0], mine[1], theirs[1],
                                              mine[2], theirs[2]], rtol=1e-6, atol=1e-6)
        for side, got in ((L.ME, f[19]), (L.THEM, f[20])):
            anchors = sum(s[side + p] >= 2 for p in range(19, 25))
            assert got == (1.0 if anchors >= 2 else 0.0)
    # my blot on my 4 point, their checkers 1 and 3 pips from it: every roll with a 1
    # or a 3 hits (20); their blot on their 22, my checkers 1, 3, 5 and 10 pips from it:
    # every roll with a 1, 3 or 5 (27) and 6-4 by way of an open point (2)
    blot = Position.from_literal("x 4:1 6:5 8:3 13:6; o 24:2 22:1 13:5 8:2 6:5").to_array()
    f = extended_features(blot)
    np.testing.assert_allclose(f[13:21], [20 / 36, 29 / 36, 0, 0, 20 * 21 / 864,
                                        29 * 3 / 864, 0, 0], rtol=1e-6)


def slow_structure(s, side, other):
    """Timing, free pips, mobility, moment, backbone, forward anchor and the three
    pieces of checkers off of ``side`` (inputs 21.. of ``extended_features``, each
    side's value in turn), from their definitions in :mod:`engine.eval.features`."""
    n = {p: int(s[side + p]) for p in range(1, 26)}
    their = [q for q in range(1, 26) if s[other + q]]
    line = 25 - max(their)                 # their rearmost checker, in my numbering
    closed = {25 - q for q in range(1, 25) if s[other + q] >= 2}

    def escapes(p):
        return sum(1 for a in range(1, 7) for b in range(1, 7)
                   if p - a - b not in closed and not (p - a in closed and p - b in closed))

    counted = {p: n[p] if p == 25 or p <= max(line, 12) or n[p] < 2 else n[p] - 2
               for p in range(7, 26)}
    spare = sum(counted.values())
    pips = sum(p * k for p, k in counted.items())
    for p in range(6, 0, -1):
        if n[p] > 2:
            spare, pips = spare + n[p] - 2, pips + p * (n[p] - 2)
        elif spare >= 2 - n[p]:
            spare, pips = spare - (2 - n[p]), pips - p * (2 - n[p])
    checkers = [p for p in range(1, 26) for _ in range(n[p])]
    mean = sum(checkers) / len(checkers) if checkers else 0
    above = [p for p in checkers if p > mean]
    made = [p for p in range(24, 0, -1) if n[p] >= 2]
    pairs = list(zip(made, made[1:]))

    def close(d):
        return 11 if d <= 6 else 13 - d if d <= 11 else 0

    held = sum(n[a] for a, _ in pairs)
    home = [p for p in range(19, 25) if n[p] >= 2]
    outfield = [p for p in range(13, 19) if n[p] >= 2]
    anchor = (25 - min(home)) / 6 if home else (25 - max(outfield)) / 6 if outfield else 2
    off = int(s[side + L.OFF])
    return [max(pips, 0) / 100, sum(p for p in checkers if p < line) / 100,
            sum((p - 6) * escapes(p) for p in checkers if p > 6) / 3600,
            (sum((p - mean) ** 2 for p in above) / len(above) if above else 0) / 400,
            1 - sum(close(a - b) * n[a] for a, b in pairs) / (11 * held) if held else 0,
            anchor, min(off, 5) / 5, min(max(off - 5, 0), 5) / 5, max(off - 10, 0) / 5]


def test_structure_features_match_their_definition():
    from engine.eval.features import N_EXTENDED, extended_features
    rng = np.random.default_rng(39)
    states = ([random_state(rng) for _ in range(200)] + [Position.start().to_array()]
              + [s for s, _ in playout_states(100, seed=5)])
    for s in states:
        f = extended_features(s)
        assert len(f) == N_EXTENDED == 39
        mine, theirs = slow_structure(s, L.ME, L.THEM), slow_structure(s, L.THEM, L.ME)
        want = [v for pair in zip(mine, theirs) for v in pair]
        np.testing.assert_allclose(f[21:], want, rtol=1e-5, atol=1e-6)
        short = extended_features(s, 21)        # what an f21 network reads: no more
        np.testing.assert_allclose(short[:21], f[:21], rtol=1e-6, atol=1e-6)
        assert not any(short[21:])
    # the opening: 13 spares' pips less the five empty home points' (53); the next
    # made point 11, 5 and 2 pips in front of the 24, 13 and 8 points (2, 5 and 3
    # checkers); the 24 point is the opponent's 1
    f = extended_features(Position.start().to_array())
    np.testing.assert_allclose(f[21:33:2], [0.53, 0, f[25], f[27], 1 - 92 / 110, 1 / 6],
                               rtol=1e-6)
    np.testing.assert_allclose(f[27], (2 * (24 - 167 / 15) ** 2 + 5 * (13 - 167 / 15) ** 2)
                               / 7 / 400, rtol=1e-5)


def test_f13_encoder_extends_f5():
    f5, f13 = get_encoder("tesauro198+f5"), get_encoder("tesauro198+f13")
    rng = np.random.default_rng(13)
    for s in [random_state(rng) for _ in range(50)]:
        x5, x13 = f5.encode(s), f13.encode(s)
        assert x13.shape == (211,)
        np.testing.assert_array_equal(x13[:203], x5)


def test_reencoded_network_keeps_its_values():
    from engine.eval.encoding import extends
    names = ["tesauro198", "tesauro198+f5", "tesauro198+f13", "tesauro198+f21",
             "tesauro198+f39", "nardy255", "nardy255+m14"]
    fs = ["tesauro198+f5", "tesauro198+f13", "tesauro198+f21", "tesauro198+f39"]
    grows = {("tesauro198", b) for b in names} | {
        (a, b) for i, a in enumerate(fs) for b in fs[i + 1:]} | {("nardy255", "nardy255+m14")}
    for a in names:
        for b in names:
            want = a == b or (a, b) in grows
            assert extends(get_encoder(b), get_encoder(a)) == want, (a, b)
    net = Network.create("backgammon", 12, "tesauro198+f13", rng=np.random.default_rng(8),
                         scale=0.4)
    wide = net.reencoded("tesauro198+f21")
    assert wide.sizes == "219-12-5"
    states = np.stack([p.to_array() for p in setup_positions("backgammon", 20, 9)])
    np.testing.assert_allclose(wide.probabilities_of_arrays(states),
                               net.probabilities_of_arrays(states), atol=1e-6)
    with pytest.raises(NetworkFileError, match="cannot read nardy255"):
        net.reencoded("nardy255")


def test_unknown_encoder():
    with pytest.raises(EncodingError, match="nope"):
        get_encoder("nope")


def test_hidden_full_is_the_matrix_product():
    net = Network.create("backgammon", 17, rng=np.random.default_rng(2), scale=0.5)
    rng = np.random.default_rng(3)
    h = np.empty(17, np.float32)
    for _ in range(50):
        s = random_state(rng)
        hidden_full(s, *net.arrays()[:2], *net.encoder_arrays(), h)
        expect = net.b1 + slow_tesauro(s) @ net.w1t
        np.testing.assert_allclose(h, expect, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("encoder", ["tesauro198", "tesauro198+f5", "tesauro198+f13",
                                     "tesauro198+f21"])
def test_incremental_hidden_matches_full(encoder):
    """A successor's hidden layer built from its parent's (the units and features that
    changed) equals the one computed from scratch."""
    net = Network.create("backgammon", 24, encoder=encoder, rng=np.random.default_rng(4),
                         scale=0.5)
    w1t, b1, _, _ = net.arrays()
    enc = net.encoder_arrays()
    href, h, hf = (np.empty(24, np.float32) for _ in range(3))
    ref = np.empty(L.STATE_LEN, np.int16)
    work = delta_work()
    for s, succ in playout_states(200):
        kids_ref(s, False, ref)
        hidden_ref(ref, w1t, b1, *enc, href, work)
        for c in succ:
            hidden_delta(ref, href, c, w1t, enc[0], enc[1], enc[4], h, work)
            hidden_full(c, w1t, b1, *enc, hf)
            np.testing.assert_allclose(h, hf, rtol=1e-4, atol=1e-4)


def slow_nardy255(s):
    """The family encoding written out plainly: Tesauro's 198, pins, turns, pending."""
    x = list(slow_tesauro(s))
    for block in (L.PIN_ME, L.PIN_THEM):
        x += [float(s[block + p] > 0) for p in range(1, 25)]
    for slot in (L.TURNS_ME, L.TURNS_THEM):
        x += [float(s[slot] >= 1), float(s[slot] >= 2), float(s[slot] >= 3)]
    npend = min(int(s[L.NPEND]), 24)
    x += [float(npend >= 1), npend / 8, s[L.PEND] / 6]
    return np.array(x, dtype=np.float32)


def family_playouts(variant, n, seed=0):
    """(state, roll or None, successors) met in random play of ``variant``."""
    rng = np.random.default_rng(seed)
    table = get_rules(variant).table()
    s = Position.start(variant).to_array()
    out = np.empty((64, L.STATE_LEN), np.int16)
    found = []
    while len(found) < n:
        segment = s[L.NPEND] > 0
        d1, d2 = (0, 0) if segment else rng.integers(1, 7, size=2)
        k, out = generate(s, d1, d2, table, out)
        found.append((s.copy(), segment, out[:k].copy()))
        s = out[rng.integers(k)].copy()
        if s[L.THEM + L.OFF] == 15 or s[L.ME + L.OFF] == 15 or s[L.PIN_ME + 24]:
            s = Position.start(variant).to_array()
    return found


def test_nardy255_matches_slow_reference():
    enc = get_encoder("nardy255")
    assert enc.n_inputs == 255
    rng = np.random.default_rng(8)
    for variant in ("plakoto", "gul_bara", "long_nardy"):
        for s, _, _ in family_playouts(variant, 150, seed=9):
            np.testing.assert_array_equal(enc.encode(s), slow_nardy255(s))
    s = random_state(rng)
    s[L.TURNS_ME], s[L.NPEND], s[L.PEND] = 400, 12, 5        # large values saturate
    np.testing.assert_array_equal(enc.encode(s), slow_nardy255(s))


@pytest.mark.parametrize("variant, encoder", [
    ("plakoto", "nardy255"), ("gul_bara", "nardy255"), ("fevga", "nardy255"),
    ("gul_bara", "nardy255+m14")])
def test_incremental_hidden_matches_full_in_family_games(variant, encoder):
    """kids_ref + hidden_delta (what self-play and search do) equals a full forward for
    every successor, pins, turns and pending dice included."""
    net = Network.create(variant, 16, encoder=encoder, rng=np.random.default_rng(4),
                         scale=0.5)
    w1t, b1, _, _ = net.arrays()
    enc = net.encoder_arrays()
    href, h, hf = (np.empty(16, np.float32) for _ in range(3))
    ref = np.empty(L.STATE_LEN, np.int16)
    work = delta_work()
    for s, segment, succ in family_playouts(variant, 300, seed=3):
        kids_ref(s, segment, ref)
        hidden_ref(ref, w1t, b1, *enc, href, work)
        for c in succ[:50]:
            hidden_delta(ref, href, c, w1t, enc[0], enc[1], enc[4], h, work)
            hidden_full(c, w1t, b1, *enc, hf)
            np.testing.assert_allclose(h, hf, rtol=1e-4, atol=1e-4)


def slow_family_features(s):
    """:func:`engine.eval.features.family_features` by its definition: for each side, the
    moves of each number 1..6 its checkers could make one after another (the head
    letting one go), landing only where the opponent has none (his point q is my
    q + 12 or q - 12), bearing off once all are home; capped at four; then whether all
    are home."""
    out = []
    for side, other in ((L.ME, L.THEM), (L.THEM, L.ME)):
        board = {p: int(s[side + p]) for p in range(1, 25) if s[side + p]}
        held = {q + 12 if q <= 12 else q - 12 for q in range(1, 25) if s[other + q]}
        home = all(p <= 6 for p in board)
        high = max(board, default=0)
        for d in range(1, 7):
            moves = 0
            for p, n in board.items():
                walk, q = 0, p
                while walk < 4:
                    if q - d >= 1 and q - d not in held:
                        q, walk = q - d, walk + 1
                    else:
                        walk += q - d < 1 and home and q in (d, high)
                        break
                moves += (1 if p == 24 else n) * walk
            out.append(min(moves, 4) / 4)
        out.append(float(home))
    return np.array(out, np.float32)


def test_family_features_match_their_definition():
    from engine.eval.features import N_FAMILY, family_features
    start = family_features(Position.start("gul_bara").to_array())
    # one checker leaves the head; the opponent's head (my 12) stops a walk of 3, 4, 6
    assert start[:7] == start[7:] == pytest.approx((1, 1, 3 / 4, 2 / 4, 1, 1 / 4, 0))
    home = Position.from_literal("x 6:1 2:2; o 24:15", "gul_bara").to_array()
    f = family_features(home)
    # a 6 bears off the checker on 6 only (those on 2 are not on the highest point)
    assert f[6] == 1 and f[13] == 0 and f[5] == pytest.approx(1 / 4)
    count = 0
    for variant in ("gul_bara", "long_nardy"):
        for s, _, succ in family_playouts(variant, 300, seed=21):
            for c in [s, *succ[:5]]:
                np.testing.assert_allclose(family_features(c), slow_family_features(c))
                count += 1
    assert count > 1000 and len(start) == N_FAMILY


def test_nardy255m14_is_nardy255_plus_family_features():
    from engine.eval.features import family_features
    enc = get_encoder("nardy255+m14")
    assert enc.n_inputs == 269
    for s, _, _ in family_playouts("gul_bara", 100, seed=22):
        x = enc.encode(s)
        np.testing.assert_array_equal(x[:255], slow_nardy255(s))
        np.testing.assert_array_equal(x[255:], family_features(s))


@pytest.mark.parametrize("variant, encoder", [
    ("backgammon", "tesauro198+f5"), ("backgammon", "tesauro198+f13"),
    ("backgammon", "tesauro198+f21"), ("backgammon", "tesauro198+f39"),
    ("gul_bara", "nardy255+m14")])
def test_the_kernels_read_the_feature_set_their_encoder_names(variant, encoder):
    """The forward chooses the hand-crafted feature set by the type of the encoder's
    feature index (when it is compiled); a full forward equals the encoding by its
    definition: the raw inputs, then ``features``, ``extended_features`` or
    ``family_features`` by name."""
    from engine.eval.features import (
        EXTENDED_INDEX,
        FAMILY_INDEX,
        N_EXTENDED,
        N_FAMILY,
        extended_features,
    )
    enc = get_encoder(encoder)
    family = encoder.endswith("+m14")
    extended = encoder.endswith(("+f21", "+f39"))
    assert (enc.feature_index.dtype == FAMILY_INDEX) == family
    assert (enc.feature_index.dtype == EXTENDED_INDEX) == extended
    assert not extended or enc.n_inputs == 198 + int(encoder[-2:]) <= 198 + N_EXTENDED
    net = Network.create(variant, 8, encoder=encoder, rng=np.random.default_rng(5),
                         scale=0.5)
    w1t, b1, _, _ = net.arrays()
    h = np.empty(8, np.float32)
    base = enc.feature_index[0]
    states = ([s for s, _, _ in family_playouts(variant, 40, seed=8)] if family
              else [random_state(np.random.default_rng(k)) for k in range(40)])
    for s in states:
        x = np.zeros(enc.n_inputs)
        x[:base] = (slow_nardy255(s) if family else slow_tesauro(s))[:base]
        x[base:] = (slow_family_features(s) if family else extended_features(s) if extended
                    else features(s))[:enc.n_inputs - base]
        hidden_full(s, w1t, b1, *net.encoder_arrays(), h)
        np.testing.assert_allclose(h, b1 + x @ w1t, rtol=1e-4, atol=1e-4)
    assert not family or enc.n_inputs - base == N_FAMILY


def test_sigmoid_accuracy():
    @njit
    def apply(x, y):
        for i in range(x.shape[0]):
            y[i] = sigmoid(x[i])

    x = np.linspace(-40, 40, 20001).astype(np.float32)
    y = np.empty_like(x)
    apply(x, y)
    exact = 1 / (1 + np.exp(-x.astype(np.float64)))
    assert np.abs(y - exact).max() < 1e-6


def test_probabilities_and_equity():
    net = Network.create("backgammon", 10, rng=np.random.default_rng(5))
    start = Position.start()
    p = net.probabilities([start, start.flip()])
    assert p.shape == (2, 5) and np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(flip_probs(flip_probs(p)), p)
    e = net.evaluate([start])
    expect = 2 * p[0, 0] - 1 + p[0, 1] - p[0, 3] + p[0, 2] - p[0, 4]
    assert e[0] == pytest.approx(expect, abs=1e-6)
    # a finished position is scored exactly: the side to move lost a backgammon
    lost = Position("backgammon", (0,) * 23 + (15,), (0,) * 24, off=(0, 15))
    np.testing.assert_array_equal(net.probabilities([lost])[0], [0, 0, 0, 1, 1])
    assert net.evaluate([lost])[0] == -3


def test_outputs_kernel_matches_numpy():
    """The three output kernels against numpy: ``outputs`` (with the activations),
    ``output_probs`` (one pass, no activations) and ``outputs_batch`` (rows in place)."""
    net = Network.create("backgammon", 37, rng=np.random.default_rng(6), scale=0.7)
    hs = np.random.default_rng(7).standard_normal((4, 37)).astype(np.float32) * 3
    a = 1 / (1 + np.exp(-hs.astype(np.float64)))
    expect = 1 / (1 + np.exp(-(a @ net.w2.T.astype(np.float64) + net.b2)))
    for r in range(4):
        h = hs[r].copy()
        act = np.empty(37, np.float32)
        o = np.empty(5, np.float32)
        outputs(h, net.w2, net.b2, act, o)
        np.testing.assert_allclose(act, a[r], atol=1e-6)
        np.testing.assert_allclose(o, expect[r], atol=1e-5)
        p = np.empty(5, np.float32)
        network.output_probs(h, net.w2, net.b2, p)
        np.testing.assert_array_equal(h, hs[r])          # left as it was
        np.testing.assert_allclose(p, expect[r], atol=1e-5)
        outputs(h, net.w2, net.b2, h, o)                  # act may be h itself
        np.testing.assert_allclose(h, a[r], atol=1e-6)
        np.testing.assert_allclose(o, expect[r], atol=1e-5)
    rows = hs.copy()
    ob = np.zeros((4, 5), np.float32)
    network.outputs_batch(rows, 3, net.w2, net.b2, ob)   # the first three rows only
    np.testing.assert_allclose(ob[:3], expect[:3], atol=1e-5)
    np.testing.assert_allclose(rows[:3], a[:3], atol=1e-6)
    np.testing.assert_array_equal(rows[3], hs[3])
    np.testing.assert_array_equal(ob[3], 0)


# ------------------------------------------------------------------ files
def test_save_load_round_trip(tmp_path):
    net = Network.create("backgammon", 8, rng=np.random.default_rng(8))
    net.info = {"trained_games": 12, "note": "x"}
    path = net.save(tmp_path / "m.npz", card_file=True)
    back = Network.load(path)
    for a, b in zip(net.arrays(), back.arrays()):
        np.testing.assert_array_equal(a, b)
    assert back.info == net.info and back.variant == "backgammon"
    assert back.encoder is TESAURO198 and back.sizes == "198-8-5"
    card = json.loads((tmp_path / "m.json").read_text())
    assert card["hidden"] == 8 and card["format_version"] == FORMAT_VERSION
    with np.load(path, allow_pickle=False) as z:
        assert z["W1"].shape == (8, 198)       # hidden x inputs in the file


def test_a_network_from_read_only_arrays_owns_writable_ones():
    """Arrays handed over read-only (a Ray worker's, from the object store) make a
    network with the same numba types as a loaded one: writable weights, so every
    kernel a loaded network compiled serves it from the cache."""
    net = Network.create("backgammon", 8, rng=np.random.default_rng(8))
    arrays = net.file_arrays()
    for a in arrays.values():
        a.setflags(write=False)
    back = Network.from_arrays(arrays)
    for a, b in zip(net.arrays(), back.arrays()):
        np.testing.assert_array_equal(a, b)
        assert b.flags.writeable and b.flags.c_contiguous


def _rewrite(path, **changes):
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    card = json.loads(bytes(arrays["card"]).decode())
    for k, v in changes.items():
        if k in card:
            card[k] = v
        else:
            arrays[k] = v
    arrays["card"] = np.frombuffer(json.dumps(card).encode(), np.uint8)
    np.savez(path, **arrays)


@pytest.mark.parametrize("changes, message", [
    ({"W1": np.zeros((9, 198), np.float32)}, "W1 has shape"),
    ({"b2": np.zeros(4, np.float32)}, "b2 has shape"),
    ({"format_version": 99}, "format_version 99"),
    ({"format": "other"}, "card format"),
    ({"encoder": "nope"}, "unknown encoder"),
    ({"hidden": 9}, "W1 has shape"),
    ({"variant": "chess"}, "variant 'chess'"),
    ({"W2": np.full((5, 8), np.nan, np.float32)}, "non-finite"),
    # float64 beyond float32's range: was checked before the cast, and the inf it
    # became was refused without the file's name and as w1t, not W1
    ({"W1": np.full((8, 198), 1e300)}, r"m\.npz: W1 holds non-finite values .*beyond"),
    # the card describes another network than this code runs
    ({"hidden_activation": "relu"}, "card hidden_activation 'relu'"),
    ({"output_activation": "softmax"}, "card output_activation"),
    ({"outputs": ["x"]}, "card outputs"),
    ({"equity": "win"}, "card equity"),
    # an encoder whose hand-crafted inputs read another family's board
    ({"variant": "long_nardy", "encoder": "tesauro198+f13", "inputs": 211,
      "W1": np.zeros((8, 211), np.float32)}, r"tesauro198\+f13' for long_nardy"),
    # Python reads NaN into a card; no strict JSON reader takes it back out (the web
    # board's and the protocol's answers carry the card)
    ({"info": {"ppg": float("nan")}}, "card is not JSON .*NaN is not a JSON value"),
    ({"info": {"ppg": float("-inf")}}, "card is not JSON .*-Infinity"),
])
def test_load_rejects_bad_files(tmp_path, changes, message):
    path = Network.create("backgammon", 8).save(tmp_path / "m.npz")
    _rewrite(path, **changes)
    with pytest.raises(NetworkFileError, match=message):
        Network.load(path)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_save_refuses_a_card_load_would_refuse(tmp_path, value):
    """NaN went into the file's card, which loads now refuse: the model written was lost."""
    net = Network.create("backgammon", 8)
    net.info = {"history": [{"loss": value}]}
    with pytest.raises(NetworkFileError, match="not plain JSON data"):
        net.save(tmp_path / "m.npz", card_file=True)
    assert list(tmp_path.iterdir()) == []


def test_load_rejects_garbage_and_pickles(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip at all" * 10)
    with pytest.raises(NetworkFileError, match="not a readable"):
        Network.load(junk)
    with pytest.raises(NetworkFileError, match="no such file"):
        Network.load(tmp_path / "missing.npz")
    single = tmp_path / "one.npy"
    np.save(single, np.zeros(3))
    with pytest.raises(NetworkFileError, match="not an .npz"):
        Network.load(single)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, W1=np.array([{"a": 1}], dtype=object))
    with pytest.raises(NetworkFileError):
        Network.load(pickled)
    partial = tmp_path / "partial.npz"
    np.savez(partial, W1=np.zeros((2, 2), np.float32))
    with pytest.raises(NetworkFileError, match="missing array"):
        Network.load(partial)


# ------------------------------------------------------------------ damaged files
def test_damaged_model_files_raise_the_typed_error(tmp_path):
    """Regression: damaged files raised TypeError, ValueError, RecursionError,
    zlib.error, NotImplementedError or MemoryError instead of NetworkFileError."""
    for what, path in bad_models(tmp_path).items():
        with pytest.raises(NetworkFileError) as info:
            Network.load(path)
        message = str(info.value)
        assert str(path) in message and "\n" not in message and len(message) < 600, (
            what, message)


def test_an_array_past_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    path = Network.create("backgammon", 8).save(tmp_path / "m.npz")
    monkeypatch.setattr(network, "MAX_ARRAY_BYTES", 4096)      # W1 is 8 x 198 x 4 bytes
    with pytest.raises(NetworkFileError, match="W1.npy.*at most 4,096"):
        Network.load(path)


def test_an_extra_array_is_never_read(tmp_path):
    """Regression: a 0.5 MB file carrying an extra 512 MB array (zeros deflate to
    nothing) loaded "fine" and took 514 MB; only the arrays the format names are read."""
    path = write_model(tmp_path / "m.npz")
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z:
        with z.open("extra.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(
                f, {"descr": "|u1", "fortran_order": False, "shape": (128 << 20,)})
            for _ in range(128):
                f.write(bytes(1 << 20))
    assert path.stat().st_size < 2 << 20
    tracemalloc.start()
    try:
        net = Network.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert net.hidden == 8 and peak < 16 << 20, f"peak {peak:,} bytes"


def test_analyse_prints_one_line_for_a_damaged_model(tmp_path, capsys):
    """``python -m engine.analyse --model BAD.npz``: one line, the error, and a non-zero
    exit, not a traceback."""
    files = bad_models(tmp_path)
    for what, path in files.items():
        code = analyse(["--model", str(path), "--position", "start", "--dice", "31"])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (what, err)
    proc = subprocess.run([sys.executable, "-m", "engine.analyse", "--model",
                           str(files["corrupt deflate (zlib.error)"]), "--dice", "31"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_network_of_arrays_that_do_not_fit_is_refused():
    """The kernels index the arrays by each other's sizes, unchecked: 3 x 2 weights
    with 5,000,000 biases crashed the process; a NaN scale made a file no load read."""
    net = Network.create("backgammon", 8)
    enc = net.encoder
    bad = [(np.zeros((3, 2), np.float32), net.b1, net.w2, net.b2),
           (net.w1t, np.zeros(9, np.float32), net.w2, net.b2),
           (net.w1t.astype(np.float64), net.b1, net.w2, net.b2),
           (net.w1t, net.b1, net.w2, [0.0] * 5)]
    for w1t, b1, w2, b2 in bad:
        with pytest.raises(NetworkFileError, match="expected float32"):
            Network("backgammon", enc, w1t, b1, w2, b2)
    for scale in (float("nan"), 0.0, -1.0, "0.1"):
        with pytest.raises(NetworkFileError, match="scale"):
            Network.create("backgammon", 8, scale=scale)
    with pytest.raises(NetworkFileError, match="rng"):
        Network.create("backgammon", 8, rng=5)
    # hand-crafted inputs of the wrong family of games (training's config refused
    # them; a network made or loaded elsewhere was rated with meaningless features)
    for variant, encoder in (("long_nardy", "tesauro198+f13"), ("backgammon", "nardy255+m14"),
                             ("plakoto", "tesauro198+f21")):
        with pytest.raises(NetworkFileError, match=f"for {variant}"):
            Network.create(variant, 8, encoder)
