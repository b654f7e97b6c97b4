"""n-ply search against slow Python references, exact races, filters, determinism and
gul bara's pending segments. A small random network stands in for a trained one."""

import dataclasses
import functools
import math
import re

import numba
import numpy as np
import pytest
from conftest import perft_records

from engine import Position
from engine.errors import PositionError
from engine.eval import bearoff
from engine.eval.evaluator import Evaluator, NoModelError
from engine.eval.network import Network, NetworkFileError
from engine.eval.pubeval import is_race
from engine.movegen.generate import successors
from engine.rules import _layout as L, states as state_rows
from engine.rules.dice import ALL_21
from engine.rules.scoring import equities, flip_probs, result, result_k, score_table
from engine.rules.variants import MOTHER_NONE, VARIANTS, get_rules, race_geometry
from engine.search import nply
from engine.search.nply import (
    MoveFilter,
    Search,
    SearchError,
    SearchSettings,
    _best_first,
    _filter,
    _sort_best_first,
)

# the search kernels take minutes to compile cold: every module that runs them
# stays on one test worker (--dist loadgroup), which compiles them once
pytestmark = pytest.mark.xdist_group("search")


@pytest.fixture(scope="module")
def search():
    net = Network.create("backgammon", 16, rng=np.random.default_rng(7), scale=0.3)
    return Search(Evaluator(net, bearoff=True))


@pytest.fixture(scope="module")
def plain(search):
    """The same network without the bear-off tables."""
    return Search(Evaluator(search.evaluator.network, bearoff=False))


def _golden(tag, k):
    """The first ``k`` backgammon perft records tagged ``tag`` (no game-ending plays)."""
    return [(Position.from_json(r["position"]), tuple(r["dice"]))
            for r in perft_records("backgammon") if tag in r["tags"] and "game_end" not in r["tags"]][:k]


# --------------------------------------------------------------------- slow references
def _exact(ev, pos):
    return result(pos, ev.rules) is not None or (
        ev.bearoff is not None and bearoff.applies(pos, ev.rules))


def sane_probs(probs, positions, db=None):
    """The slow reference of :func:`engine.eval.network.sane`: the network's outputs
    ``probs`` (n x 5) for ``positions`` as the evaluator makes them chances (a copy): in
    cumulative order, no backgammons where the game has no 3-point result, and none of
    the results a position rules out: no gammon lost by a side that has borne off a
    checker (where only the gammon scores 2, no mother checker), no backgammon lost in
    backgammon by a side with no checker on the bar or in the opponent's home board
    once contact is over; in a backgammon race, what the turns left make certain, and
    with the bear-off tables ``db``, the bounds a home side's distribution sets."""
    positions = list(positions)
    p = np.array(probs, dtype=np.float64, ndmin=2)
    p[:, 1] = np.minimum(p[:, 1], p[:, 0])
    p[:, 2] = np.minimum(p[:, 2], p[:, 1])
    p[:, 3] = np.minimum(p[:, 3], 1 - p[:, 0])
    p[:, 4] = np.minimum(p[:, 4], p[:, 3])
    rules = get_rules(positions[0].variant)
    if not (rules.backgammon_triple or rules.koks or rules.home_mars):
        p[:, 2] = p[:, 4] = 0
    for i, pos in enumerate(positions):
        s = pos.to_array()
        if rules.mother == MOTHER_NONE:
            if s[L.ME + L.OFF] > 0:
                p[i, 3] = p[i, 4] = 0
            if s[L.THEM + L.OFF] > 0:
                p[i, 1] = p[i, 2] = 0
        if race_geometry(rules) and is_race(pos):
            if not any(s[L.ME + q] for q in range(19, 26)):        # 25: the bar
                p[i, 4] = 0
            if not any(s[L.THEM + q] for q in range(19, 26)):
                p[i, 2] = 0
            race_certain_reference(p[i], pos, rules.backgammon_triple)
            if db is not None:
                race_bounds_reference(p[i], pos, db)
    return p


def _turns(board, off):
    """``(fewest, fewest to a first checker off (None with one off), fewest to leave the
    opponent's home board, most)`` turns of a race side with ``board`` (24 counts)."""
    checkers = [q for q in range(1, 25) for _ in range(board[q - 1])]
    quarters = [math.ceil(q / 6) for q in checkers]
    fewest = math.ceil(sum(quarters) / 4)
    first = math.ceil((sum(c - 1 for c in quarters) + 1) / 4) if off == 0 else None
    clear = math.ceil(sum(q >= 19 for q in checkers) / 4)
    most = math.ceil(sum(checkers) / 2)
    return fewest, first, clear, most


@functools.lru_cache(maxsize=None)
def _dice_at_least(k, c):
    """The chance that ``k`` rolls hold at least ``c`` dice (a double four)."""
    if c <= 0:
        return 1.0
    if k == 0:
        return 0.0
    return (_dice_at_least(k - 1, c - 4) + 5 * _dice_at_least(k - 1, c - 2)) / 6


@functools.lru_cache(maxsize=None)
def _pips_at_least(k, d):
    """The chance that ``k`` rolls move at least ``d`` pips (a double four times its
    number), by recursion over the first roll."""
    if d <= 0:
        return 1.0
    if k == 0:
        return 0.0
    rolls = [4 * a if a == b else a + b for a in range(1, 7) for b in range(1, 7)]
    return sum(_pips_at_least(k - 1, d - pips) for pips in rolls) / 36


def race_bounds_reference(p, pos, db):
    """The slow reference of :func:`engine.eval.bearoff.race_bounds`: where one side of a
    race of backgammon's geometry is home, its exact rolls to be off (the tables), and
    the other side's fewest turns and pips to be off or to bear off a first checker,
    bound its win and gammon chances from below."""
    home = [not any(board[6:]) for board in (pos.me, pos.them)]
    if home[0] == home[1]:
        return
    h = 0 if home[0] else 1
    boards, offs = (pos.me, pos.them), pos.off
    dist = db.rolls(boards[h][:6])
    checkers = [q for q, n in enumerate(boards[1 - h], 1) for _ in range(n)]
    crossings = sum(math.ceil(q / 6) for q in checkers)       # a die each, at least
    to_home = sum(math.ceil(q / 6) - 1 for q in checkers)
    pips = sum(checkers)
    to_first = 1 + sum(q - 6 for q in checkers if q > 6)
    chance = gammon = 0.0
    for n in range(1, len(dist)):
        k = n - 1 if h == 0 else n              # the other side's turns by then
        chance += dist[n] * (1 - min(_pips_at_least(k, pips),
                                     _dice_at_least(k, crossings)))
        if offs[1 - h] == 0:
            gammon += dist[n] * (1 - min(_pips_at_least(k, to_first),
                                         _dice_at_least(k, to_home + 1)))
    if h == 0:
        p[1] = max(p[1], gammon)
        p[0] = max(p[0], chance, p[1])
    else:
        p[3] = max(p[3], gammon)
        p[0] = min(p[0], 1 - max(chance, p[3]))
    p[1] = min(p[1], p[0])
    p[2] = min(p[2], p[1])
    p[3] = min(p[3], 1 - p[0])
    p[4] = min(p[4], p[3])


def race_certain_reference(p, pos, triple=True):
    """The slow reference of :func:`engine.eval.crossings.race_certain`: in a race of
    backgammon's geometry, the results certain whatever the dice set in ``p`` (the
    mover's five outputs; backgammons only where ``triple``). Each side's fewest turns: its checkers' quarter-board crossings (the
    bear-off one included) four a turn; its most: its pips two a turn."""
    me_few, me_first, me_clear, me_most = _turns(pos.me, pos.off[0])
    them_few, them_first, them_clear, them_most = _turns(pos.them, pos.off[1])
    if me_most <= them_few:                     # the mover rolls first
        p[0], p[3], p[4] = 1.0, 0.0, 0.0
        if them_first is not None and me_most <= them_first:
            p[1] = 1.0
            if triple and me_most <= them_clear:
                p[2] = 1.0
    elif me_few > them_most:
        p[0], p[1], p[2] = 0.0, 0.0, 0.0
        if me_first is not None and me_first > them_most:
            p[3] = 1.0
            if triple and me_clear > them_most:
                p[4] = 1.0


def sane_equities(net, positions, db=None):
    """Equities of ``net``'s outputs as the evaluator makes them chances
    (:func:`sane_probs`)."""
    return equities(sane_probs(net.probabilities(positions), positions, db))


def slow_ranking(rank, kids, parent):
    """Each kid's equity for its side to move as a choice among ``kids`` (the plays of
    ``parent``) sees it: finished games by their result, and the rest by one network,
    ``rank``'s race network when ``parent`` is a race and it has one, else its network;
    home races get the bear-off tables' value only when every kid is a home race or a
    finished game (else that network rates them too)."""
    net = rank.race if rank.race is not None and is_race(parent) else rank.network
    values = np.asarray(rank.evaluate(kids), float)
    rated = [i for i, k in enumerate(kids) if not _exact(rank, k)]
    tabled = [i for i, k in enumerate(kids)
              if result(k, rank.rules) is None and _exact(rank, k)]
    if rated:
        values[rated + tabled] = sane_equities(net, [kids[i] for i in rated + tabled],
                                               rank.bearoff)
    return values


def slow_value(ev, pos, n, rank=None, keep=1, within=math.inf):
    """n-ply outputs of ``pos`` for its side to move, replies picked at 0-ply by
    ``rank`` (an evaluator; default ``ev``; :func:`slow_ranking`) and valued by
    ``ev`` (its network, race network, bear-off tables or a finished game's result).
    ``keep`` > 1 with a ``rank`` of its own: each roll's ``keep`` best by ``rank`` are
    ranked again by ``ev``, whose best of them is the pick (a race's plays, where ``ev``
    has a race network, are its own: no pruning there); of them, only those within
    ``within`` of their best by ``rank``."""
    rank = rank or ev
    if n == 0 or _exact(ev, pos):
        return ev.probabilities([pos])[0]
    if pos.pending:
        kids = successors(pos, None, ev.rules)
        best = kids[int(np.argmax(slow_ranking(rank, kids, pos)))]
        return slow_value(ev, best, n, rank, keep, within)
    acc = np.zeros(5)
    for dice, w in ALL_21:
        kids = successors(pos, tuple(dice), ev.rules)
        ranked = slow_ranking(rank, kids, pos)
        if keep > 1 and rank is not ev and not (ev.race is not None and is_race(pos)):
            top = np.sort(np.argsort(ranked, kind="stable")[:keep])
            top = top[ranked[top] <= ranked[top].min() + within]
            again = slow_ranking(ev, [kids[i] for i in top], pos)
            best = kids[int(top[np.argmin(again)])]
        else:
            best = kids[int(np.argmin(ranked))]
        acc += w * flip_probs(slow_value(ev, best, n - 1, rank, keep, within))
    return acc


# --------------------------------------------------------------------- tests
def test_zero_ply_ranks_by_the_network(plain):
    net = plain.evaluator.network
    for pos, dice in _golden("contact", 6):
        a = plain.analyse(pos, dice, ply=0)
        kids = successors(pos, dice)
        mover = dict(zip([k.key() for k in kids], -sane_equities(net, kids)))
        got = [c.equity for c in a.candidates]
        assert got == sorted(got, reverse=True)
        assert sorted(c.position.key() for c in a.candidates) == sorted(mover)
        for c in a.candidates:
            assert c.equity == pytest.approx(mover[c.position.key()], abs=1e-5)
            assert c.ply == 0


def test_one_ply_evaluate_matches_the_slow_reference(search):
    ev = search.evaluator
    positions = [p for p, _ in _golden("contact", 3) + _golden("race", 2) + _golden("bearoff", 2)]
    for pos in positions:
        got = search.evaluate(pos, 1)
        want = slow_value(ev, pos, 1)
        assert np.allclose(got.probabilities, want, atol=2e-5), pos
        assert got.equity == pytest.approx(float(equities(want)), abs=1e-4)
        assert got.evaluated > 21


def test_two_ply_evaluate_matches_the_slow_reference(search):
    pos = _golden("race", 1)[0][0]
    got = search.evaluate(pos, 2)
    assert np.allclose(got.probabilities, slow_value(search.evaluator, pos, 2), atol=2e-5)


def slow_pruned_value(ev, pos, n, keep=1, within=math.inf):
    """:func:`slow_value` with plays ranked by the pruning network ``ev.prune`` (a
    race's by the race network), the best ``keep`` of each roll ranked again by ``ev``."""
    small = Evaluator(ev.prune, ev.rules, ev.bearoff if ev.bearoff is not None else False,
                      race=ev.race)
    return slow_value(ev, pos, n, small, keep, within)


@pytest.fixture(scope="module")
def pruned(search):
    """The search's network with a smaller, different network to prune with."""
    small = Network.create("backgammon", 8, rng=np.random.default_rng(11), scale=0.3)
    return Search(Evaluator(search.evaluator.network, bearoff=True, prune=small),
                  SearchSettings(prune=True, prune_keep=1))


def test_pruning_network_picks_the_plays_inside_the_search(search, pruned):
    ev = pruned.evaluator
    for pos in [p for p, _ in _golden("contact", 2)]:
        got = pruned.evaluate(pos, 1)
        assert np.allclose(got.probabilities, slow_pruned_value(ev, pos, 1), atol=2e-5)
        # the pruning network changes some picks, so the values differ from unpruned ones
        assert not np.allclose(got.probabilities, search.evaluate(pos, 1).probabilities,
                               atol=1e-6)
        # off in the settings, the search is the unpruned one
        off = Search(ev, SearchSettings(prune=False)).evaluate(pos, 1)
        assert np.allclose(off.probabilities, search.evaluate(pos, 1).probabilities, atol=1e-12)
        # on by default, the pruning network's best four rated again by the network
        assert np.allclose(Search(ev).evaluate(pos, 1).probabilities,
                           slow_pruned_value(ev, pos, 1, keep=4), atol=2e-5)
    pos = _golden("race", 1)[0][0]
    assert np.allclose(pruned.evaluate(pos, 2).probabilities, slow_pruned_value(ev, pos, 2),
                       atol=2e-5)
    # a reply filter keeps one play at the last level whatever it says (helper 52: the
    # settings' docs promised keep plays valued at 0-ply there): at 1-ply no effect
    wide = SearchSettings(1, reply=MoveFilter(3, 1.0), prune=True, prune_keep=1)
    for pos in [p for p, _ in _golden("contact", 2)]:
        assert pruned.evaluate(pos, settings=wide).probabilities == \
            pruned.evaluate(pos, 1).probabilities
    # the root's plays are rated by the network itself
    p, dice = _golden("contact", 1)[0]
    assert [c.equity for c in pruned.analyse(p, dice, ply=0).candidates] == \
        [c.equity for c in search.analyse(p, dice, ply=0).candidates]


def test_pruning_network_passes_a_few_plays_to_the_network(search, pruned):
    """``prune_keep``: each roll's best few by the pruning network rated again by the
    network, whose best of them is the pick; 1 is the pruning network's own pick, and
    every play the unpruned search's."""
    ev = pruned.evaluator
    few = Search(ev, SearchSettings(prune=True, prune_keep=3))
    every = Search(ev, SearchSettings(prune=True, prune_keep=1000))
    one = Search(ev, SearchSettings(prune=True, prune_keep=1))
    for pos in [p for p, _ in _golden("contact", 2)]:
        got = few.evaluate(pos, 1).probabilities
        assert np.allclose(got, slow_pruned_value(ev, pos, 1, keep=3), atol=2e-5)
        assert not np.allclose(got, pruned.evaluate(pos, 1).probabilities, atol=1e-6)
        assert one.evaluate(pos, 1).probabilities == pruned.evaluate(pos, 1).probabilities
        assert np.allclose(every.evaluate(pos, 1).probabilities,
                           search.evaluate(pos, 1).probabilities, atol=2e-5)
        # a roll of no more plays than that is rated by the network alone, not ranked
        # first by the pruning network: as many ratings as the unpruned search
        assert every.evaluate(pos, 1).evaluated == search.evaluate(pos, 1).evaluated
    pos = _golden("race", 1)[0][0]          # no race network here: races are pruned too
    assert np.allclose(few.evaluate(pos, 2).probabilities,
                       slow_pruned_value(ev, pos, 2, keep=3), atol=2e-5)
    for bad in (0, True, 2.5):
        with pytest.raises(SearchError, match="prune_keep"):
            SearchSettings(prune=True, prune_keep=bad)


def test_pruning_network_passes_only_plays_within_a_margin(search, pruned):
    """``prune_within``: of the pruning network's best ``prune_keep``, the network rates
    only those within the margin of the pruning network's best (by its ranking); a
    margin of 0 leaves the pruning network's own pick, an infinite one all of them."""
    ev = pruned.evaluator
    one = Search(ev, SearchSettings(prune=True, prune_keep=1))
    wide = Search(ev, SearchSettings(prune=True, prune_keep=6))
    for pos in [p for p, _ in _golden("contact", 2)]:
        for within in (0.0, 0.02, 0.05):
            got = Search(ev, SearchSettings(prune=True, prune_keep=6, prune_within=within))
            value = got.evaluate(pos, 1).probabilities
            assert np.allclose(value, slow_pruned_value(ev, pos, 1, keep=6, within=within),
                               atol=2e-5)
            if within == 0.0:
                assert np.allclose(value, one.evaluate(pos, 1).probabilities, atol=1e-12)
            if within == 0.05:      # some roll has plays beyond the margin and some within
                assert not np.allclose(value, one.evaluate(pos, 1).probabilities, atol=1e-6)
                assert not np.allclose(value, wide.evaluate(pos, 1).probabilities, atol=1e-6)
        big = Search(ev, SearchSettings(prune=True, prune_keep=6, prune_within=1e9))
        assert big.evaluate(pos, 1).probabilities == wide.evaluate(pos, 1).probabilities
    for bad in (-0.1, True, "0.1", math.nan):
        with pytest.raises(SearchError, match="prune_within"):
            SearchSettings(prune_within=bad)


def test_pruning_network_must_fit_the_game():
    net = Network.create("backgammon", 8, rng=np.random.default_rng(1))
    other = Network.create("portes", 8, rng=np.random.default_rng(1))
    with pytest.raises(NoModelError, match="pruning network for portes"):
        Evaluator(net, prune=other)


@pytest.fixture(scope="module")
def raced(search):
    """The search's network with a race network of its own, and a pruning network."""
    race = Network.create("backgammon", 8, rng=np.random.default_rng(13), scale=0.3)
    small = Network.create("backgammon", 8, rng=np.random.default_rng(11), scale=0.3)
    return Search(Evaluator(search.evaluator.network, bearoff=True, race=race, prune=small),
                  SearchSettings(prune=True, prune_keep=1))


def test_the_evaluator_rules_out_what_a_position_cannot_give(raced):
    """Zero, where the networks give small positive outputs: no backgammon lost by a side
    with no checker on the bar or in the opponent's home board once contact is over, no
    gammon won against a side that has borne off a checker; with contact left, or a
    checker back, the network's chance stays."""
    ev = raced.evaluator
    far = Position.from_literal("x 18:5 17:5 16:5; o 6:4 5:4 4:4 3:3")   # a race
    assert is_race(far) and ev.race.probabilities([far])[0][4] > 0
    assert ev.probabilities([far])[0][4] == 0.0
    off = Position.from_literal("x 18:5 17:5 16:5; o 6:4 5:4 4:3")       # o has borne off 3
    assert ev.race.probabilities([off])[0][1] > 0
    assert ev.probabilities([off])[0][1:3].tolist() == [0.0, 0.0]
    back = Position.from_literal("x 19:1 18:4 17:5 16:5; o 5:4 4:4 3:4 2:3")  # one in o's home
    assert is_race(back) and ev.probabilities([back])[0][4] > 0
    contact = Position.from_literal("x 24:2 18:3 17:5 16:5; o 6:5 5:5 4:5")
    assert not is_race(contact) and ev.probabilities([contact])[0][4] > 0
    # inside the search too: after any play of x's 6-5, o (to roll) wins no backgammon
    for ply in (0, 1):
        for kid in successors(far, (6, 5)):
            assert raced.evaluate(kid, ply).probabilities[2] == 0.0


def test_race_network_rates_the_races(search, raced):
    ev = raced.evaluator
    race = [p for p, _ in _golden("race", 3)]
    contact = [p for p, _ in _golden("contact", 3)]
    home = [Position.from_literal("x 6:3 5:2 4:2; o 6:2 5:3 3:1")]
    assert all(is_race(p) for p in race + home) and not any(is_race(p) for p in contact)
    assert bearoff.applies(home[0]) and not any(bearoff.applies(p) for p in race)
    assert np.allclose(ev.probabilities(race), sane_probs(ev.race.probabilities(race),
                                                          race, ev.bearoff), atol=1e-6)
    assert np.allclose(ev.probabilities(contact),
                       sane_probs(ev.network.probabilities(contact), contact), atol=1e-6)
    assert np.allclose(ev.probabilities(home), search.evaluator.probabilities(home))
    # inside the search: replies to a race ranked and valued by the race network, a
    # contact position's plays by the network (a play that leaves a race is valued by
    # the race network one ply up), home races by the tables, as the slow reference
    unpruned = Search(ev, SearchSettings(prune=False))
    near = Position.from_literal("x 9:1 6:3 5:2 4:2; o 6:2 5:3 3:1")   # one checker out
    for pos in race + contact[:2] + home + [near]:
        got = unpruned.evaluate(pos, 1).probabilities
        assert np.allclose(got, slow_value(ev, pos, 1), atol=2e-5), pos
    assert np.allclose(unpruned.evaluate(race[0], 2).probabilities,
                       slow_value(ev, race[0], 2), atol=2e-5)
    for pos in (race[0], contact[0]):
        assert np.allclose(raced.evaluate(pos, 1).probabilities,
                           slow_pruned_value(ev, pos, 1), atol=2e-5)
    # the race's plays at the root are rated by the race network
    pos, dice = _golden("race", 1)[0]
    got = {c.position.key(): c.equity for c in raced.analyse(pos, dice, ply=0).candidates}
    kids = successors(pos, dice)
    want = -slow_ranking(ev, kids, pos)
    assert np.allclose([got[k.key()] for k in kids], want, atol=1e-5)


def test_helper_networks_of_fewer_feature_inputs_are_reencoded():
    """A race network of ``tesauro198+f13`` beside a main network of ``tesauro198+f21``
    (the kernels take one kind of feature inputs) reads the main network's inputs with
    zero weights on the eight it lacks: its values stay its own. (That the evaluator
    gives the races to its race network is checked on the shipped networks,
    ``tests/test_models.py``: the evaluator's kernels compiled for ``+f21`` inputs
    would add 12 s to a cold test run.)"""
    main = Network.create("backgammon", 8, "tesauro198+f21", rng=np.random.default_rng(3),
                          scale=0.3)
    race = Network.create("backgammon", 8, "tesauro198+f13", rng=np.random.default_rng(4),
                          scale=0.3)
    ev = Evaluator(main, bearoff=True, race=race, prune=race)
    assert ev.race.encoder.name == ev.prune.encoder.name == "tesauro198+f21"
    races = [p for p, _ in _golden("race", 3)]
    assert np.allclose(ev.race.probabilities(races), race.probabilities(races), atol=1e-6)
    assert np.allclose(ev.prune.probabilities(races), race.probabilities(races), atol=1e-6)
    # the other way round cannot be: an f21 network cannot read fewer inputs
    with pytest.raises(NetworkFileError, match="cannot read tesauro198's inputs"):
        Evaluator(Network.create("backgammon", 8, rng=np.random.default_rng(1)), race=main)


def test_a_helper_network_without_feature_inputs_keeps_its_own():
    """A pruning network of plain ``tesauro198`` beside a main network of
    ``tesauro198+f21`` is not made to read the main network's inputs: the kernels get
    its own weights and an empty feature index of the main network's kind, so a play
    it ranks costs no features (benchmarks/README.md, "Pruning inside the search")."""
    main = Network.create("backgammon", 8, "tesauro198+f21", rng=np.random.default_rng(3),
                          scale=0.3)
    small = Network.create("backgammon", 4, "tesauro198", rng=np.random.default_rng(5),
                           scale=0.3)
    ev = Evaluator(main, bearoff=True, race=small, prune=small)
    assert ev.prune is small and ev.race is small
    net, ctx = ev.kernel_args(prune=True)
    for arrays in (ctx.rank, ctx.race):
        assert arrays.w1t.shape == (198, 4)
        assert arrays.fidx.shape == (0,)
        assert numba.typeof(arrays.fidx) == numba.typeof(net.fidx)    # one kernel type
        assert arrays.uidx is small.encoder.unit_index
    assert net.fidx.shape == (21,)
    races = [p for p, _ in _golden("race", 3)]
    assert np.allclose(ev.prune.probabilities(races), small.probabilities(races))


def test_a_race_network_equal_to_the_network_changes_nothing(search):
    ev = search.evaluator
    same = Search(Evaluator(ev.network, bearoff=True, race=ev.network))
    for pos in [p for p, _ in _golden("race", 2) + _golden("contact", 2)]:
        for ply in (0, 1, 2):
            assert np.allclose(same.evaluate(pos, ply).probabilities,
                               search.evaluate(pos, ply).probabilities, atol=1e-5)


def test_race_network_must_fit_the_game():
    net = Network.create("backgammon", 8, rng=np.random.default_rng(1))
    other = Network.create("portes", 8, rng=np.random.default_rng(1))
    with pytest.raises(NoModelError, match="race network for portes"):
        Evaluator(net, race=other)
    nardy = Network.create("long_nardy", 8, "nardy255", rng=np.random.default_rng(1))
    with pytest.raises(NoModelError, match="needs backgammon's geometry"):
        Evaluator(nardy, race=nardy)


def test_three_ply_is_the_roll_average_of_two_ply_replies(search):
    ev = search.evaluator
    pos = Position.from_literal("x 8:2 7:3 5:2; o 9:2 6:4 4:1")
    acc = np.zeros(5)
    for dice, w in ALL_21:
        kids = successors(pos, tuple(dice))
        best = kids[int(np.argmin(ev.evaluate(kids)))]
        acc += w * flip_probs(np.array(search.evaluate(best, 2).probabilities))
    assert np.allclose(search.evaluate(pos, 3).probabilities, acc, atol=1e-9)


def test_root_candidates_carry_their_successor_values(search):
    pos, dice = _golden("contact", 1)[0]
    a = search.analyse(pos, dice, ply=2)
    deep = [c for c in a.candidates if c.ply == 2]
    assert 1 <= len(deep) <= 8
    for c in deep[:3]:
        assert c.equity == pytest.approx(-search.evaluate(c.position, 2).equity, abs=1e-9)
    eq = [c.equity for c in deep]
    assert eq == sorted(eq, reverse=True)
    assert a.best is a.candidates[0]


def test_exact_races(search, plain):
    # my checker on 6 against his on 1: I win iff I bear off at once (27 rolls in 36)
    pos = Position.from_literal("x 6:1; o 1:1")
    assert search.evaluate(pos, 0).probabilities[0] == pytest.approx(27 / 36, abs=1e-12)
    # without the tables, 2-ply reaches only finished games: exact too
    assert plain.evaluate(pos, 2).probabilities[0] == pytest.approx(27 / 36, abs=1e-12)
    # ... and 1-ply: after a roll that does not bear off, his one checker on his ace
    # point is off before mine can be, whatever the dice (the turns counted, race_certain)
    assert plain.evaluate(pos, 1).probabilities[0] == pytest.approx(27 / 36, abs=1e-12)
    assert plain.evaluate(pos, 0).probabilities[0] != pytest.approx(27 / 36, abs=1e-6)
    # my last checker against his 15 on my 6 point: every roll wins a backgammon
    bg = Position.from_literal("x 2:1; o 19:15")
    e = plain.evaluate(bg, 1)
    assert e.probabilities == pytest.approx((1, 1, 1, 0, 0)) and e.equity == pytest.approx(3)
    best = plain.analyse(bg, (2, 1), ply=0).best
    assert best.equity == pytest.approx(3) and best.move == "2/off"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_cheap_exact_test_flags_every_position_the_exact_values_take(variant):
    """The search asks ``may_be_exact`` (the score table and a flag) before
    ``exact_probs`` (the whole context) of every play it rates: over every position of
    random games, finished ones included, it must hold exactly where ``exact_probs``
    values the position, with the bear-off tables on and off."""
    from engine.eval.evaluator import BY_TABLES, exact_probs, may_be_exact
    rules = get_rules(variant)
    rng = np.random.default_rng(VARIANTS.index(variant))
    net = Network.create(variant, 8, rng=rng)
    seen = {"network": 0, "exact": 0, "tables": 0}
    for tables in (True, False):
        _, ctx = Evaluator(net, rules, bearoff=tables).kernel_args()
        o = np.zeros(5)
        for _ in range(6):
            pos = Position.start(variant)
            while True:
                dice = None if pos.pending else tuple(int(d) for d in rng.integers(1, 7, 2))
                kids = successors(pos, dice, rules)
                for k in kids:
                    s = k.to_array()
                    cheap = bool(may_be_exact(s, ctx.scores, ctx.bearoff))
                    how = exact_probs(s, ctx, o)
                    assert cheap == (how != 0), (k, tables)
                    seen["tables" if how == BY_TABLES else "exact" if how else "network"] += 1
                pos = kids[int(rng.integers(len(kids)))]
                if result(pos, rules) is not None:
                    break
    assert seen["network"] > 0 and seen["exact"] > 0
    assert (seen["tables"] > 0) == bearoff.covers(rules), seen


def test_bearoff_tables_value_home_races(search):
    pos = Position.from_literal("x 6:2 5:3 3:1; o 4:2 2:3 1:4")
    want = search.evaluator.bearoff.probabilities(pos)
    assert np.allclose(search.evaluate(pos, 0).probabilities, want)
    assert np.allclose(search.evaluate(pos, 2).probabilities, want)
    a = search.analyse(pos, (6, 5), ply=1)
    for c in a.candidates:
        assert c.equity == pytest.approx(
            -float(equities(search.evaluator.bearoff.probabilities(c.position))), abs=1e-12)


def test_one_scale_for_a_choice_at_the_tables_border(search):
    """A roll whose plays mix home races (the tables' value) with plays the network
    must rate is one choice on one scale: the network rates them all, finished games
    keep their result, and a value one ply up takes the tables' value of the play
    chosen (the slow reference does the same)."""
    ev = search.evaluator
    pos = Position.from_literal("x 9:1 6:3 5:6 4:2 3:2 2:1; o 6:6 5:5 4:3")
    a = search.analyse(pos, (4, 4), ply=0)
    kids = [c.position for c in a.candidates]
    tabled = [k for k in kids if _exact(ev, k) and result(k, ev.rules) is None]
    assert tabled and any(not _exact(ev, k) for k in kids)        # a mixed choice
    mover = -sane_equities(ev.network, kids, ev.bearoff)
    for c, e in zip(a.candidates, mover):
        assert c.equity == pytest.approx(float(e), abs=1e-5)
    assert a.best.position.key() == kids[int(np.argmax(mover))].key()
    # all plays home races: the tables rank and value them
    home = Position.from_literal("x 6:2 5:3 3:1; o 4:2 2:3 1:4")
    for c in search.analyse(home, (4, 4), ply=0).candidates:
        assert c.equity == pytest.approx(
            -float(equities(ev.bearoff.probabilities(c.position))), abs=1e-12)
    got = search.evaluate(pos, 1)
    assert np.allclose(got.probabilities, slow_value(ev, pos, 1), atol=2e-5)


def test_deterministic(search):
    pos, dice = _golden("contact", 2)[1]
    a = search.analyse(pos, dice, ply=2)
    b = search.analyse(pos, dice, ply=2)
    assert [(c.move, c.equity, c.ply) for c in a.candidates] == \
        [(c.move, c.equity, c.ply) for c in b.candidates]
    assert a.evaluated == b.evaluated


def test_threads_do_not_change_the_result(search):
    """A large level of the search is split over threads; the result is the serial one."""
    pos, dice = _golden("contact", 3)[2]
    one = Search(search.evaluator, threads=1).analyse(pos, dice, ply=2)
    many = Search(search.evaluator, threads=3).analyse(pos, dice, ply=2)
    assert [(c.move, c.equity, c.probabilities, c.ply) for c in one.candidates] == \
        [(c.move, c.equity, c.probabilities, c.ply) for c in many.candidates]
    assert one.evaluated == many.evaluated


def test_filters_keep_at_most_k(plain):
    pos, dice = next((p, d) for p, d in _golden("contact", 40) if len(successors(p, d)) > 8)
    zero = plain.analyse(pos, dice, ply=0)
    for keep in (1, 3, 4):
        a = plain.analyse(pos, dice, settings=SearchSettings(1, (MoveFilter(keep, 10.0),)))
        deep = [c for c in a.candidates if c.ply == 1]
        assert len(deep) == keep
        assert {c.move for c in deep} == {c.move for c in zero.candidates[:keep]}
    a = plain.analyse(pos, dice, settings=SearchSettings(1, (MoveFilter(8, 0.0),)))
    assert len([c for c in a.candidates if c.ply == 1]) == 1
    eq = np.array([0.1, 0.5, 0.45, 0.2, 0.5, -1.0])
    idx = np.arange(6)
    assert _filter(eq, idx, 6, 3, 0.1) == 3 and list(idx[:3]) == [1, 4, 2]


def test_the_best_few_come_first_as_the_full_sort_puts_them():
    """``_best_first`` (a roll's best few for the pruning network's second rating) gives
    the first ``m`` of the stable best-first sort, ties in their order, and keeps the
    others: over random equities with many ties and every ``m``."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        eq = rng.integers(0, 6, n).astype(float) / 4       # ties, often
        full = rng.permutation(n).astype(np.int64)
        part = full.copy()
        _sort_best_first(eq, full, n)
        m = int(rng.integers(0, n + 1))
        _best_first(eq, part, n, m)
        assert list(part[:m]) == list(full[:m])
        assert sorted(part) == list(range(n))


def test_a_rank_function_orders_the_plays_of_the_full_depth(plain):
    """``rank`` replaces the cubeless equity as the order of the plays rated at the full
    depth (here: by the losing chances, the worst play first) and in the root's move
    filters (which then keep the plays it ranks first); plays a filter cut stay after
    them; ``top`` cuts the ranked list."""
    pos, dice = next((p, d) for p, d in _golden("contact", 40) if len(successors(p, d)) > 8)
    worst_first = plain.analyse(pos, dice, ply=0, rank=lambda after, p: -p[0])
    wins = [c.probabilities[0] for c in worst_first.candidates]
    assert wins == sorted(wins) and len(wins) == len(successors(pos, dice))
    assert plain.analyse(pos, dice, ply=0, rank=lambda after, p: -p[0],
                         top=2).candidates == worst_first.candidates[:2]
    seen = []
    a = plain.analyse(pos, dice, settings=SearchSettings(1, (MoveFilter(3, 10.0),)),
                      rank=lambda after, p: seen.append(after) or -p[0])
    deep = [c for c in a.candidates if c.ply == 1]
    assert len(deep) == 3 and a.candidates[:3] == tuple(deep)
    assert [c.probabilities[0] for c in deep] == sorted(c.probabilities[0] for c in deep)
    # the filter kept the three the rank puts first at 0-ply: the lowest winning chances
    lowest = {c.position.key() for c in worst_first.candidates[:3]}
    assert {c.position.key() for c in deep} == lowest
    assert len(seen) == len(worst_first.candidates) + 3     # the filter's, then the 1-ply
    assert sorted(map(repr, seen[-3:])) == sorted(repr(c.position) for c in deep)
    with pytest.raises(SearchError, match="rank = 3"):
        plain.analyse(pos, dice, rank=3)
    # the same ranking over arrays: the plays' state rows and chances at once
    calls = []

    def rows_rank(rows, chances):
        calls.append(len(rows))
        assert rows.shape == (len(chances), L.STATE_LEN) and chances.shape[1] == 5
        return -chances[:, 0]
    b = plain.analyse(pos, dice, settings=SearchSettings(1, (MoveFilter(3, 10.0),)),
                      rank_rows=rows_rank)
    assert b.candidates == a.candidates and calls == [len(worst_first.candidates), 3]
    for bad, words in (({"rank_rows": 3}, "rank_rows = 3"),
                       ({"rank_rows": rows_rank, "rank": lambda after, p: 0.0}, "both")):
        with pytest.raises(SearchError, match=words):
            plain.analyse(pos, dice, **bad)


def test_pending_segment_is_its_own_decision():
    net = Network.create("gul_bara", 8, rng=np.random.default_rng(3), scale=0.3)
    s = Search(Evaluator(net), SearchSettings(reply=MoveFilter(50, 10.0)))
    pos = Position.from_literal("x 24:12 20:2 17:1; o 24:13 21:2", variant="gul_bara",
                                turns=(5, 5), pending=(5, 5))
    kids = successors(pos, None)
    assert len(kids) > 1 and all(k.pending == () for k in kids)
    assert s.evaluate(pos, 0).probabilities == pytest.approx(
        tuple(sane_probs(net.probabilities([pos]), [pos])[0]), abs=1e-6)
    best = max(s.evaluate(k, 1).equity for k in kids)
    assert s.evaluate(pos, 1).equity == pytest.approx(best, abs=1e-9)
    a = s.analyse(pos, None, ply=1)
    assert a.best.equity == pytest.approx(best, abs=1e-9)
    assert a.best.position.pending == ()


@pytest.mark.parametrize("variant", ["long_nardy", "gul_bara", "plakoto", "backgammon"])
def test_a_start_whose_first_player_rolls_is_valued_by_its_rolls(variant):
    """No play leads back to both full starting points, so a network never learns the
    start of a game whose first player rolls both dice (long nardy's released network
    rated it -0.35, its rolls +0.27): 0-ply values it by its 21 rolls. Backgammon's
    opening roll is played as thrown, and its start stays the network's."""
    net = Network.create(variant, 8, rng=np.random.default_rng(4), scale=0.3)
    s = Search(Evaluator(net))
    start = Position.start(variant)
    network = sane_probs(net.probabilities([start]), [start])[0]
    by_rolls = np.array(s.evaluate(start, 1).probabilities)
    assert not np.allclose(network, by_rolls, atol=1e-3)
    want = network if variant == "backgammon" else by_rolls
    got = s.evaluate(start, 0)
    assert np.allclose(got.probabilities, want, atol=1e-12)
    assert got.evaluated == 1 if variant == "backgammon" else got.evaluated > 21
    kid = successors(start, (3, 1))[0]
    rows = np.stack([kid.to_array(), start.to_array(), kid.to_array()])
    got = s.values_of(rows, 0)
    assert np.allclose(got[1], want, atol=1e-12)
    for row in (got[0], got[2]):                    # every other position: the network
        assert np.allclose(row, sane_probs(net.probabilities([kid]), [kid])[0], atol=1e-6)
    if variant != "backgammon":                     # the layout later in a game: network
        later = dataclasses.replace(start, turns=(1, 1))
        assert np.allclose(s.evaluate(later, 0).probabilities,
                           sane_probs(net.probabilities([later]), [later])[0], atol=1e-6)


def test_settings_and_errors(search, tmp_path, monkeypatch):
    with pytest.raises(SearchError, match="ply = 4"):
        SearchSettings(ply=4)
    with pytest.raises(SearchError, match="keep"):
        MoveFilter(0, 0.1)
    with pytest.raises(SearchError, match="filters"):
        SearchSettings(2, (MoveFilter(8, 0.16),))
    with pytest.raises(SearchError, match="long_nardy"):
        search.evaluate(Position.start("long_nardy"), 0)
    monkeypatch.setenv("NARDY_MODELS", str(tmp_path))
    with pytest.raises(NoModelError, match="no trained model for long_nardy yet"):
        Search.load("long_nardy")
    search.evaluator.network.save(tmp_path / "backgammon.npz")
    assert Search.load("backgammon").evaluate(Position.start(), 0).equity == pytest.approx(
        search.evaluate(Position.start(), 0).equity)


def test_bad_arguments_name_what_was_expected(search):
    """Settings, threads, ``top`` and a ply of the wrong type are refused, not read as
    something else (``"false"`` is true to Python), and a network or evaluator does not
    rate another game's positions."""
    for kw in ({"bearoff": "false"}, {"prune": "no"}, {"ply": 1, "filters": 5}):
        with pytest.raises(SearchError, match=list(kw)[-1]):
            SearchSettings(**kw)
    with pytest.raises(SearchError, match="within"):
        MoveFilter(2, True)
    for threads in (0, -5, 1.7, True, "2"):
        with pytest.raises(SearchError, match="threads"):
            Search(search.evaluator, threads=threads)
    for top in (0, -3, "2", 2.5):
        with pytest.raises(SearchError, match="top"):
            search.analyse(Position.start(), (3, 1), top=top)
    for ply in (False, 0.0, 5):
        with pytest.raises(SearchError, match="ply"):
            search.evaluate(Position.start(), ply)
    for bo in (0, 1, "no"):
        with pytest.raises(NoModelError, match="bearoff"):
            Evaluator(search.evaluator.network, bearoff=bo)
    assert Evaluator(search.evaluator.network, bearoff=np.bool_(False)).bearoff is None
    for rater in (search.evaluator, search.evaluator.network):
        with pytest.raises(ValueError, match="plakoto position"):
            rater.evaluate([Position.start(), Position.start("plakoto")])


def test_values_of_read_only_rows_compiles_nothing_new(search):
    """Rows from Ray's object store are read-only, and numba types such an array apart:
    each labelling worker compiled the search's exact-value kernels again (about 7 s
    of CPU in the Ray tests). ``values_of`` copies them first."""
    from engine.rules.setups import setup_positions
    rows = np.stack([p.to_array() for p in setup_positions("backgammon", 6, 3)])
    want = search.values_of(rows, 1)
    before = len(nply.exact_batch.signatures)
    checks = len(state_rows._first_illegal.signatures)
    rows.flags.writeable = False
    np.testing.assert_array_equal(search.values_of(rows, 1), want)
    assert len(nply.exact_batch.signatures) == before
    assert len(state_rows._first_illegal.signatures) == checks


def test_values_of_refuses_rows_that_are_not_positions(search):
    """A kernel trusts its rows: a checker count out of range read out of bounds."""
    rows = np.stack([Position.start().to_array()] * 3)
    np.testing.assert_array_equal(search.values_of(rows[0], 0), search.values_of(rows[:1], 0))
    for col, value, why in ((L.ME + 6, 300, "add up to 15"), (L.THEM + L.BAR, -2, "negative"),
                            (L.NPEND, 1, "pending dice outside gul bara")):
        bad = rows.copy()
        bad[2, col] = value
        with pytest.raises(PositionError, match=f"values_of: states: row 2 is not a legal "
                                                f"backgammon position: .*{why}"):
            search.values_of(bad, 0)
    with pytest.raises(PositionError, match="expected integer rows"):
        search.values_of(np.zeros((2, 5), np.int16), 0)
    with pytest.raises(PositionError, match="expected integer rows"):
        search.values_of(rows.astype(np.float32), 0)


def test_search_player_takes_the_best_play_offered():
    """Self-play and duels offer a sample of a large cascade's plays; the search player
    rates every play and takes the offered one the search ranks highest."""
    from engine.movegen.generate import successor_arrays
    from engine.search.nply import SearchPlayer
    net = Network.create("gul_bara", 8, rng=np.random.default_rng(5), scale=0.3)
    s = Search(Evaluator(net))
    pos = Position.from_literal("x 24:6 20:3 17:3 13:3; o 24:10 21:3 19:2",
                                variant="gul_bara", turns=(5, 5))
    offered = [Position.from_array(a, "gul_bara")
               for a in successor_arrays(pos, (1, 1), play=True)]
    kids, _, eq, _, _ = s.rate(pos.to_array(), (1, 1), SearchSettings(0))
    ranked = [Position.from_array(kids[i], "gul_bara").key()
              for i in sorted(range(len(kids)), key=lambda i: (-eq[i], i))]
    assert len(offered) < len(ranked)             # a sample, not every play
    best_offered = min(offered, key=lambda p: ranked.index(p.key()))
    assert ranked[0] not in {p.key() for p in offered}    # the test needs a miss
    i = SearchPlayer(s, 0).choose(pos, (1, 1), offered)
    assert offered[i].key() == best_offered.key()


@pytest.mark.parametrize("variant", ["backgammon", "portes"])
def test_the_direct_walk_search_plays_every_legal_play(variant):
    """A search of backgammon or portes is built on the direct walk alone
    (engine.movegen._core.turn with DirectWalk): at the root it lists exactly the
    successors of the whole generator, on the first 400 perft records of the game."""
    from engine.movegen._core import DirectWalk, walk_for
    from engine.rules.variants import get_rules
    rules = get_rules(variant)
    assert isinstance(walk_for(rules.table()), DirectWalk)
    net = Network.create(variant, 16, rng=np.random.default_rng(4), scale=0.3)
    s = Search(Evaluator(net, bearoff=False))
    for r in perft_records(variant)[:400]:
        pos = Position.from_json(r["position"])
        if pos.is_over():
            continue
        dice = tuple(r["dice"])
        a = s.analyse(pos, dice, 0)
        want = {p.key() for p in successors(pos, dice)}
        assert {c.position.key() for c in a.candidates} == want, r["id"]
        assert a.plays == r["count"]


@pytest.mark.parametrize("variant, games", [("backgammon", 6), ("plakoto", 2)])
def test_the_root_rates_a_roll_as_expand_does(variant, games):
    """A 0-ply decision rates the roll's plays by calling ``expand``'s kernels from
    Python (:meth:`nply._Tree.root`); ``expand`` rates a deeper search's root. Both give
    the same plays, outputs and equities, bit for bit: over the positions of random
    games, races with the race network (backgammon's) and rolls of more plays than the
    root's first work space holds (64), with the rating's work space kept from one call
    to the next. (Gul bara's pending segments take the same calls with ``d1 = 0``; its
    ``expand``, compiled by no other test, would add about 10 s to a cold run.)"""
    s = Search.load(variant)
    tree = s._tree(SearchSettings(0), root=True)
    rng = np.random.default_rng(5)
    sc = score_table(get_rules(variant))
    seen = {"race": 0, "many": 0}
    for _ in range(games):
        state = Position.start(variant).to_array()
        while result_k(state, sc)[0] < 0:
            segment = Position.from_array(state, variant).pending
            d1, d2 = (0, 0) if segment else (int(x) for x in rng.integers(1, 7, 2))
            kids, probs, eq = tree.root(state, d1, d2)
            roll = nply._SEGMENT if segment else np.array([[d1, d2, 1]], np.int64)
            k2, p2, e2, _ = tree.expand(state[None, :], roll, True, -1, 0.0, tree.net)
            assert np.array_equal(kids, k2) and np.array_equal(probs, p2)
            assert np.array_equal(eq, e2)
            seen["race"] += bool(tree.ctx.racing and is_race(Position.from_array(state,
                                                                                 variant)))
            seen["many"] += len(kids) > 64
            state = kids[rng.integers(len(kids))].copy()
    if variant == "backgammon":
        assert seen["race"] > 0 and seen["many"] > 0


@pytest.mark.parametrize("position", [
    Position("backgammon", (0, 0, 0, 0, 0, 40) + (0,) * 18, (15,) + (0,) * 23),  # crashed
    Position("backgammon", (1,) * 24, Position.start().them),                   # hung
    Position("backgammon", Position.start().me, Position.start().them, bar=(-1, 0),
             off=(1, 0)),
])
def test_a_position_that_breaks_the_rules_is_refused_not_searched(search, position):
    """``Position`` does not check what it is built with; a search that rated 40
    checkers on a point read past the bear-off tables (a segfault), and 24 checkers a
    side never ended a 1-ply search."""
    for call in (lambda: search.evaluate(position, 0), lambda: search.evaluate(position, 1),
                 lambda: search.analyse(position, (3, 1), ply=0)):
        with pytest.raises(PositionError):
            call()
    with pytest.raises(PositionError):
        successors(position, (1, 1))
    with pytest.raises(PositionError):
        search.evaluator.probabilities_of_arrays(position.to_array())


def test_a_position_of_one_game_is_not_moved_by_another_games_rules():
    with pytest.raises(PositionError, match="backgammon position given with the rules of gul"):
        successors(Position.start(), (6, 5), get_rules("gul_bara"))


def test_threads_are_bounded():
    with pytest.raises(SearchError, match="threads = 100000"):
        Search.load("backgammon", threads=100_000)


def test_filters_written_out_are_read_level_by_level():
    """:func:`nply.parse_filters`: ``K/W`` or ``-`` per level, one per ply below the
    search's depth; what is wrong is named with its level."""
    assert nply.parse_filters("8/0.16,-", 2) == (MoveFilter(8, 0.16), None)
    assert nply.parse_filters(" 8/0.16 , 4/0.12 ", 2) == nply.DEFAULT_FILTERS[2]
    assert nply.parse_filters("", 0) == ()
    for text, ply, words in [("8/0.16", 2, "1 level(s) for a 2-ply search"),
                             ("8/0.16,4", 2, "level 1 '4': expected K/W"),
                             ("8/nan", 1, "MoveFilter within = nan"),
                             ("-,-,-,-", 4, "ply = 4"), ("8/1", 0, "0-ply search has no")]:
        with pytest.raises(SearchError, match=re.escape(words)):
            nply.parse_filters(text, ply)


def test_filters_written_out_read_back_the_same():
    """:func:`nply.format_filters` writes what :func:`nply.parse_filters` reads: every
    default, GNU Backgammon's normal filter and a margin with many digits give back the
    same filters."""
    assert nply.format_filters(nply.DEFAULT_FILTERS[2]) == "8/0.16,4/0.12"
    assert nply.format_filters(()) == ""
    cases = [*nply.DEFAULT_FILTERS.values(), (MoveFilter(8, 0.16), None),
             (MoveFilter(1, 0), MoveFilter(3, 0.123456789012), None)]
    for filters in cases:
        text = nply.format_filters(filters)
        assert nply.parse_filters(text, len(filters)) == filters, text
