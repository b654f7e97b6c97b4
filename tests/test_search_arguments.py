"""Wrong arguments handed to the search and the rollouts: each is refused naming it,
never an AttributeError from inside, a silently wrong result or a walk without bound."""

import numpy as np
import pytest

from engine import Position
from engine.errors import DiceError, PositionError, TooManyPlaysError
from engine.eval.evaluator import Evaluator
from engine.eval.network import Network
from engine.movegen import generate
from engine.search.nply import MoveFilter, Search, SearchError, SearchPlayer, SearchSettings
from engine.search.rollout import Rollout, RolloutError, RolloutSettings

# the search kernels compile once per test worker (tests/test_search.py)
pytestmark = pytest.mark.xdist_group("search")


@pytest.fixture(scope="module")
def search():
    net = Network.create("backgammon", 8, rng=np.random.default_rng(5), scale=0.3)
    return Search(Evaluator(net), threads=1)


def test_the_search_lists_a_cascade_within_the_generator_bounds(monkeypatch):
    """The search walked a gul bara cascade of any size, where ``successors`` refuses
    one too large to list (MAX_PLAYS, MAX_LAYER_BOARDS)."""
    monkeypatch.setenv("NARDY_THREADS", "2")          # the bounded, threaded walk
    net = Network.create("gul_bara", 8, rng=np.random.default_rng(5), scale=0.3)
    s = Search(Evaluator(net))
    pos = Position.from_literal("x 24:6 20:3 17:3 13:3; o 24:10 21:3 19:2",
                                variant="gul_bara", turns=(5, 5))
    n = len(generate.successor_arrays(pos, (1, 1)))
    assert s.analyse(pos, (1, 1), top=1).plays == n
    monkeypatch.setattr(generate, "MAX_PLAYS", n - 1)
    with pytest.raises(TooManyPlaysError, match="plays, more than the"):
        s.analyse(pos, (1, 1), top=1)
    offered = [pos]                                   # never reached
    with pytest.raises(TooManyPlaysError):
        SearchPlayer(s).choose(pos, (1, 1), offered)


def test_rate_checks_its_state_and_dice(search):
    """A 3-slot array gave one play (read past its end), dice 7-7 one and '31' 16."""
    start = Position.start().to_array()
    with pytest.raises(PositionError, match="rate: state"):
        search.rate(np.zeros(3, np.int16), (3, 1), SearchSettings())
    for dice in ((7, 7), (-3, 1), "31"):
        with pytest.raises(DiceError, match="dice"):
            search.rate(start, dice, SearchSettings())
    crowded = start.copy()
    crowded[1] = 30_000
    with pytest.raises(PositionError):
        search.rate(crowded, (3, 1), SearchSettings())
    assert len(search.rate(start, (3, 1), SearchSettings())[0]) == 16


def test_a_search_player_refuses_another_game(search):
    """A backgammon search player finished a long nardy game under its own rules."""
    nardy = Position.start("long_nardy")
    from engine.movegen.generate import successors
    with pytest.raises(SearchError, match="long_nardy given to the backgammon search"):
        SearchPlayer(search).choose(nardy, (3, 1), successors(nardy, (3, 1)))


def test_constructors_and_settings_are_checked(search):
    """Each failed later, when used, with an AttributeError."""
    net = Network.create("backgammon", 8, rng=np.random.default_rng(5), scale=0.3)
    for bad, words in ((lambda: Search(None), "evaluator null: expected an Evaluator"),
                       (lambda: Search(net), "expected an Evaluator"),
                       (lambda: Search(Evaluator(net), settings=1),
                        "settings 1: expected a SearchSettings"),
                       (lambda: search.analyse(Position.start(), (3, 1), settings="x"),
                        "expected a SearchSettings or None"),
                       (lambda: SearchPlayer(None), "search null: expected a Search"),
                       (lambda: MoveFilter(10**30, 0.1), "MoveFilter keep"),
                       (lambda: MoveFilter(2, float("inf")), "MoveFilter within")):
        with pytest.raises(SearchError, match=words):
            bad()
    f = MoveFilter(np.int64(2), np.float32(0.5))          # numpy scalars are numbers
    assert (f.keep, f.within) == (2, 0.5) and type(f.keep) is int
    assert search.evaluate(Position.start(), np.int64(0)).probabilities is not None
    for bad, words in ((lambda: Rollout(None), "search null: expected a Search"),
                       (lambda: Rollout(search, 5), "settings 5: expected a RolloutSettings"),
                       (lambda: Rollout(search, backend="ray"), "backend 'ray'"),
                       (lambda: Rollout(search).position(Position.start(), 5),
                        "settings 5"),
                       (lambda: Rollout(search).position(Position.start(), progress=5),
                        "progress 5: expected None or a function"),
                       (lambda: Rollout(search).candidates(None, (3, 1), 2),
                        "position null: expected a Position")):
        with pytest.raises((RolloutError, SearchError), match=words):
            bad()
    r = Rollout(search, None).position(Position.start(), RolloutSettings(trials=2,
                                                                         truncate=1))
    assert r.trials == 2


def test_an_evaluator_refuses_what_is_not_a_network_or_rules():
    """Each raised an AttributeError or a TypeError from pathlib."""
    from engine.eval.evaluator import NoModelError
    from engine.rules.variants import get_rules
    net = Network.create("backgammon", 8, rng=np.random.default_rng(5), scale=0.3)
    for bad, words in ((lambda: Evaluator(None), "network = null: expected a Network"),
                       (lambda: Evaluator("backgammon"), "network = 'backgammon'"),
                       (lambda: Evaluator(net, rules="backgammon"), "rules = 'backgammon'"),
                       (lambda: Evaluator(net, prune="x"), "prune = 'x'"),
                       (lambda: Evaluator(net, race=5), "race = 5"),
                       (lambda: Evaluator.load("backgammon", prune=5), "prune = 5"),
                       (lambda: Search.load("backgammon", 123), "path = 123")):
        with pytest.raises(NoModelError, match=words):
            bad()
    assert Evaluator(net, get_rules("backgammon")).variant == "backgammon"


def test_evaluator_probabilities_want_a_list_and_stop_sigmas_a_number(search):
    """An empty array gave numpy's "truth value of an empty array is ambiguous"; a
    numpy float was refused as a number of standard errors."""
    from engine.eval.evaluator import NoModelError
    ev = search.evaluator
    for bad in (np.array([]), iter([Position.start()]), Position.start()):
        with pytest.raises(NoModelError, match="positions = .*: expected a list or tuple"):
            ev.probabilities(bad)
    assert ev.probabilities([]).shape == (0, 5)
    assert ev.probabilities((Position.start(),)).shape == (1, 5)
    s = RolloutSettings(stop_sigmas=np.float32(2.5))
    assert s.stop_sigmas == 2.5 and type(s.stop_sigmas) is float
