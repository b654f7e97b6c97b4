"""Duplicate-dice duels (engine/play/duel.py): pairs cancel, the kernel matches its Python
twin, chunks and seeds behave, the confidence interval is computed over pair sums."""

import math

import numpy as np
import pytest

from engine.eval.network import Network
from engine.play.duel import (
    WINNER_CUT,
    DuelError,
    DuelResult,
    duel,
    duel_players,
    pair_stats,
    stream_states,
)
from engine.play.players import GreedyPlayer, PubEvalPlayer


@pytest.fixture(scope="module")
def net():
    """A small fresh network: deterministic, if weak."""
    return Network.create("backgammon", 8, rng=np.random.default_rng(3), scale=0.3)


def pair_sums(r: DuelResult) -> np.ndarray:
    return r.points[0::2] + r.points[1::2]


def test_pair_stats_on_a_known_sample():
    # pairs (1, -1), (2, 1), (-1, -2), (3, 0): sums 0, 3, -3, 3
    ppg, half = pair_stats([1, -1, 2, 1, -1, -2, 3, 0])
    assert ppg == pytest.approx(0.375)
    sd = math.sqrt(((0 - .75) ** 2 + 2 * (3 - .75) ** 2 + (-3 - .75) ** 2) / 3)
    assert half == pytest.approx(1.959964 * sd / 2 / 2)
    assert pair_stats([2, -2]) == (0.0, 0.0)
    with pytest.raises(DuelError):
        pair_stats([1, 2, 3])


def test_identical_deterministic_players_score_zero_per_pair(net):
    r = duel("pubeval", "pubeval", 200, seed=11)
    assert np.all(pair_sums(r) == 0)
    assert np.any(r.points != 0) and r.ppg == 0 and r.ci95() == 0
    r = duel(net, net, 20, seed=11)
    assert np.all(pair_sums(r) == 0)


def test_the_seats_swap_within_a_pair():
    r = duel("pubeval", "random", 100, seed=4)
    # the same opening roll: the same seat starts, so the other player
    assert np.all(r.starter[0::2] != r.starter[1::2])
    assert 0.3 < r.starter.mean() < 0.7


def test_random_loses_heavily_to_pubeval():
    r = duel("random", "pubeval", 400, seed=5)
    assert r.ppg < -1.5
    assert r.ppg + r.ci95() < -1.0
    assert r.rate(0) < 0.05 and r.count(WINNER_CUT) == 0
    b = duel("pubeval", "random", 400, seed=5)
    assert b.ppg > 1.5


def test_kernel_plays_the_python_reference_games(net):
    """The kernel against its slow twin: same dice, seats and choices, same games."""
    fast = duel(net, "pubeval", 12, seed=7)
    slow = duel_players(GreedyPlayer(net), PubEvalPlayer(), 12, seed=7)
    for field in ("points", "winner", "kind", "turns", "starter"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field


def test_race_networks_play_the_races(net):
    """A race network plays a network player's races (no contact) in the kernel as in
    its Python twin; its own network as race network changes nothing."""
    race = Network.create("backgammon", 6, rng=np.random.default_rng(5), scale=0.5)
    plain = duel(net, "pubeval", 40, seed=3)
    fast = duel(net, "pubeval", 40, seed=3, race_a=race)
    slow = duel_players(GreedyPlayer(net, race=race), PubEvalPlayer(), 40, seed=3)
    for field in ("points", "winner", "kind", "turns", "starter"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field
    assert not np.array_equal(fast.points, plain.points)    # races played otherwise
    same = duel(net, "pubeval", 40, seed=3, race_a=net)
    assert np.array_equal(same.points, plain.points) and np.array_equal(same.turns, plain.turns)
    mirrored = duel("pubeval", net, 40, seed=3, race_b=race)
    assert np.array_equal(pair_sums(mirrored), -pair_sums(fast))     # seats swapped


def test_race_network_of_fewer_feature_inputs_reads_its_networks():
    """A race network of no feature inputs beside an f13 network (re-encoded to the
    network's inputs, zero weights on the features it lacks) plays the races as its
    Python twin does with the race network's own inputs. The shipped networks' kernels:
    an f21 pair would compile the game loop again."""
    main = Network.create("backgammon", 6, "tesauro198+f13", rng=np.random.default_rng(2),
                          scale=0.5)
    race = Network.create("backgammon", 6, "tesauro198", rng=np.random.default_rng(5),
                          scale=0.5)
    got = duel(main, "pubeval", 40, seed=3, race_a=race)
    slow = duel_players(GreedyPlayer(main, race=race), PubEvalPlayer(), 40, seed=3)
    for field in ("points", "winner", "kind", "turns", "starter"):
        assert np.array_equal(getattr(got, field), getattr(slow, field)), field
    plain = duel(main, "pubeval", 40, seed=3)
    assert not np.array_equal(got.points, plain.points)    # the races played otherwise


def test_bad_race_networks_are_refused(net):
    race = Network.create("backgammon", 6, rng=np.random.default_rng(5))
    with pytest.raises(DuelError, match="needs a network player"):
        duel("pubeval", net, 2, seed=1, race_a=race)
    with pytest.raises(DuelError, match="expected a backgammon Network"):
        duel(net, "pubeval", 2, seed=1, race_a="pubeval")
    with pytest.raises(DuelError, match="inputs"):
        duel(net, "pubeval", 2, seed=1,
             race_a=Network.create("backgammon", 6, "tesauro198+f13"))
    plakoto = Network.create("plakoto", 6, rng=np.random.default_rng(1))
    with pytest.raises(DuelError, match="geometry"):
        duel(plakoto, plakoto, 2, seed=1, variant="plakoto", race_b=plakoto)


def test_chunks_make_the_same_match_and_the_seed_decides():
    whole = duel("random", "pubeval", 40, seed=9)
    parts = DuelResult.join([duel("random", "pubeval", 10, seed=9, first_pair=k)
                             for k in (0, 5, 10, 15)])
    assert np.array_equal(whole.points, parts.points)
    assert np.array_equal(whole.turns, parts.turns)
    again = duel("random", "pubeval", 40, seed=9)
    other = duel("random", "pubeval", 40, seed=10)
    assert np.array_equal(whole.turns, again.turns)
    assert not np.array_equal(whole.turns, other.turns)
    assert np.array_equal(stream_states(9, 1, 3, 4), stream_states(9, 1, 0, 7)[3:])


def test_other_games():
    nardy = Network.create("long_nardy", 8, rng=np.random.default_rng(1), scale=0.3)
    r = duel(nardy, nardy, 6, seed=1, variant="long_nardy")
    assert np.all(pair_sums(r) == 0) and np.all(r.winner >= 0)
    r = duel("random", "random", 10, seed=1, variant="plakoto")
    assert np.all(r.winner != WINNER_CUT)


def test_bad_duels_are_refused(net):
    with pytest.raises(DuelError, match="even"):
        duel("random", "pubeval", 3, seed=1)
    with pytest.raises(DuelError, match="plakoto"):
        duel("random", "pubeval", 2, seed=1, variant="plakoto")
    with pytest.raises(DuelError, match="network"):
        duel(net, "random", 2, seed=1, variant="portes")
    with pytest.raises(DuelError, match="expected 'random'"):
        duel("gnubg", "random", 2, seed=1)
    with pytest.raises(DuelError, match="seed"):
        duel("random", "random", 2, seed=-1)


@pytest.mark.parametrize("variant", ["backgammon", "plakoto", "gul_bara"])
def test_heuristic_kernel_player_plays_the_python_reference_games(variant):
    """The kernel's heuristic player against HeuristicPlayer through duel_players
    (gul bara included: both choose from the same sampled cascade plays)."""
    from engine.eval.heuristic import HeuristicPlayer
    from engine.rules.variants import get_rules
    net = Network.create(variant, 8, rng=np.random.default_rng(2), scale=0.3)
    fast = duel("heuristic", net, 6, seed=3, variant=variant)
    slow = duel_players(HeuristicPlayer(variant), GreedyPlayer(net, get_rules(variant)), 6,
                        seed=3, variant=variant)
    for field in ("points", "winner", "kind", "turns", "starter"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field


@pytest.mark.parametrize("variant", ["backgammon", "portes", "plakoto", "fevga",
                                     "long_nardy", "gul_bara"])
def test_heuristic_beats_random_in_every_game(variant):
    r = duel("heuristic", "random", 100, seed=4, variant=variant)
    assert r.rate(0) > 0.85 and r.ppg > 1.0
