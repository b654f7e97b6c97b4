"""Dice, game results and whole games.

The random-playout property tests play ``NARDY_RANDOM_GAMES`` games (default 10,000)
of every game in the numba kernel of :func:`engine.play.game.playouts`, which checks every
position it meets (checker conservation, legal pins, pending dice, turn counters, a
valid final score). A sample of the games is recorded and cross-checked in Python:
:meth:`Position.check`, the array round trip, ``flip(flip(p)) == p``, each step being
one of :func:`engine.movegen.generate.successors`, and :func:`engine.rules.scoring.result`.

Backgammon always plays the full count. The other games' playouts stop early once
``NARDY_RANDOM_BUDGET_S`` seconds (default 4; 0 for no limit) are spent, with a warning naming how many games were played, so the suite
stays quick on a shared machine; set the budget to 0 to insist on the full count.
``NARDY_RANDOM_SEED`` (default 2024) varies the games.
"""

import os
import re
import time
import warnings
from collections import Counter

import numpy as np
import pytest

from engine import DiceError, Position, get_rules, successors
from engine.errors import quote
from engine.movegen._core import _cascade_turn
from engine.play.game import ERRORS, opening_roll, play, play_game, playouts
from engine.play.players import GreedyPlayer, Player, PubEvalPlayer, RandomPlayer
from engine.rules.dice import ALL_21, Dice, parse_dice, roll, roll_one
from engine.rules.scoring import GameResult, Kind, result, result_k, score_table
from engine.rules.variants import (
    BLOCK_EACH,
    BLOCK_QUARTER,
    CASCADE_GAME,
    HEAD_FIRST_ANY_DOUBLE,
    MOTHER_DEFERRED,
    VARIANTS,
)

GAMES = int(os.environ.get("NARDY_RANDOM_GAMES", "10000"))
BUDGET_S = float(os.environ.get("NARDY_RANDOM_BUDGET_S", "4"))
SEED = int(os.environ.get("NARDY_RANDOM_SEED", "2024"))
MIN_GAMES = 1000
"""Random games each game plays whatever the budget (fewer only if NARDY_RANDOM_GAMES
asks for fewer): enough that every way its games end shows up."""

# the scores each game can end with (Kind codes), default rules
KINDS = {
    "backgammon": {Kind.SINGLE, Kind.GAMMON, Kind.BACKGAMMON},
    "portes": {Kind.SINGLE, Kind.GAMMON},
    "plakoto": {Kind.SINGLE, Kind.GAMMON, Kind.MOTHER},
    "fevga": {Kind.SINGLE, Kind.GAMMON},
    "long_nardy": {Kind.SINGLE, Kind.GAMMON},
    "gul_bara": {Kind.SINGLE, Kind.GAMMON},
}


# ====================================================================== dice
def test_all_21():
    dice = [d for d, _ in ALL_21]
    assert len(set(dice)) == 21
    assert sum(p for _, p in ALL_21) == pytest.approx(1.0)
    for d, p in ALL_21:
        assert p == pytest.approx((1 if d.is_double else 2) / 36) == d.probability
    assert sum(d.is_double for d in dice) == 6


def test_dice_value_type():
    assert Dice(1, 3) == Dice(3, 1) and hash(Dice(1, 3)) == hash(Dice(3, 1))
    assert tuple(Dice(1, 3)) == (3, 1) and str(Dice(1, 3)) == "3-1"
    assert eval(repr(Dice(2, 5))) == Dice(5, 2)
    assert Dice(4, 4).moves() == (4, 4, 4, 4) and Dice(2, 6).moves() == (6, 2)
    assert Dice.of("31") == Dice.of("1-3") == Dice.of([3, 1]) == Dice.of(Dice(3, 1))
    for bad in [(0, 1), (7, 2), (True, 1), (1.5, 2)]:
        with pytest.raises(DiceError, match=quote(bad[0])):       # True as JSON: true
            Dice(*bad)
    for bad in ["71", "3", "abc", (1, 2, 3), None]:
        with pytest.raises(DiceError):
            Dice.of(bad)


def test_dice_text_is_read_strictly():
    """Regression: ``--dice -31`` was read as 3-1 (the CLI's reader dropped every ``-``,
    ``,``, ``/`` and space); one reader now takes two digits 1..6 and at most one of
    them between."""
    for text, dice in [("31", (3, 1)), ("1-3", (1, 3)), ("6 6", (6, 6)), ("5,2", (5, 2)),
                       ("4/1", (4, 1)), (" 3 - 1 ", (3, 1))]:
        assert parse_dice(text) == dice
    for bad in ["-31", "31-", "3--1", "3-,1", "--31", "3", "312", "71", "3 0", "٣١",
                "", None, 31]:
        with pytest.raises(DiceError, match="expected two digits"):
            parse_dice(bad)
        if isinstance(bad, str):
            with pytest.raises(DiceError):
                Dice.of(bad)


def test_rolls_come_from_the_generator_passed_in():
    a = [roll(np.random.default_rng(9)) for _ in range(3)]
    assert a[0] == a[1] == a[2]          # same seed, same roll; nothing global involved
    rng = np.random.default_rng(1)
    counts = Counter(roll(rng) for _ in range(36000))
    for d, p in ALL_21:
        assert counts[d] == pytest.approx(36000 * p, rel=0.15)
    assert {roll_one(rng) for _ in range(200)} == set(range(1, 7))


# ====================================================================== results
def lit(text, variant, **kw):
    return Position.from_literal(text, variant, **kw)


def test_backgammon_scores():
    # the side to move (x) lost: o, who just moved, bore off its last checker
    assert result(lit("x 6:2 off:13; o off:15", "backgammon")) == GameResult(1, 1, Kind.SINGLE)
    assert result(lit("x 6:15; o off:15", "backgammon")) == GameResult(1, 2, Kind.GAMMON)
    bg = GameResult(1, 3, Kind.BACKGAMMON)
    assert result(lit("x 19:1 6:14; o off:15", "backgammon")) == bg    # in o's home
    assert result(lit("x bar:1 6:14; o off:15", "backgammon")) == bg    # on the bar
    assert result(lit("x 18:1 6:14; o off:15", "backgammon")) == GameResult(1, 2, Kind.GAMMON)
    # the winner relative to the position: seen from the winner it is side 0
    assert result(lit("x off:15; o 19:1 6:14", "backgammon")) == GameResult(0, 3, Kind.BACKGAMMON)
    assert result(Position.start()) is None
    assert result(lit("x 1:1 off:14; o 1:1 off:14", "backgammon")) is None


def test_portes_has_no_triple():
    assert result(lit("x bar:1 19:2 6:12; o off:15", "portes")) == GameResult(1, 2, Kind.GAMMON)


def test_plakoto_scores_and_mother():
    assert result(lit("x 1:3 off:12; o off:15", "plakoto")) == GameResult(1, 1, Kind.SINGLE)
    # x's mother (its last checker on its point 24) pinned by o, who moved: o wins 2
    mother = lit("x 24:1 pin:24 12:14; o 1:1 14:14", "plakoto")
    assert result(mother) == GameResult(1, 2, Kind.MOTHER)
    assert result(mother.flip()) == GameResult(0, 2, Kind.MOTHER)
    # another pinned checker is no mother
    assert result(lit("x 23:1 pin:23 12:14; o 2:1 14:14", "plakoto")) is None
    # Position.is_over agrees (it tested only the checkers borne off)
    assert mother.is_over() and mother.flip().is_over()
    assert not lit("x 23:1 pin:23 12:14; o 2:1 14:14", "plakoto").is_over()


def test_plakoto_deferred_mother():
    rules = get_rules("plakoto", mother=MOTHER_DEFERRED)
    # o pinned x's mother but still has checkers on its own start: the game goes on
    waiting = lit("x 24:1 pin:24 12:14; o 1:1 24:2 14:12", "plakoto")
    assert result(waiting, rules) is None
    # o has left its start: o wins 2
    won = lit("x 24:1 pin:24 12:14; o 1:1 14:14", "plakoto")
    assert result(won, rules) == GameResult(1, 2, Kind.MOTHER)
    # both mothers pinned: a draw
    draw = lit("x 24:1 pin:24 1:1 12:13; o 24:1 pin:24 1:1 14:13", "plakoto")
    assert result(draw, rules) == GameResult(None, 0, Kind.DRAW)
    assert result(draw, rules).points_for(0) == 0


@pytest.mark.parametrize("variant", ["long_nardy", "gul_bara"])
def test_nardy_scores_and_options(variant):
    oyn = lit("x 3:2 off:13; o off:15", variant)
    assert result(oyn) == GameResult(1, 1, Kind.SINGLE)
    first_quarter = lit("x 20:1 3:14; o off:15", variant)
    at_home = lit("x 6:5 3:10; o off:15", variant)
    assert result(first_quarter) == result(at_home) == GameResult(1, 2, Kind.GAMMON)
    koks = get_rules(variant, koks=True)
    home = get_rules(variant, home_mars=True)
    both = get_rules(variant, koks=True, home_mars=True)
    assert result(first_quarter, koks) == GameResult(1, 3, Kind.KOKS)
    assert result(at_home, koks) == GameResult(1, 2, Kind.GAMMON)
    assert result(at_home, home) == GameResult(1, 4, Kind.HOME_MARS)
    assert result(first_quarter, home) == GameResult(1, 2, Kind.GAMMON)
    assert result(first_quarter, both).kind == Kind.KOKS
    assert result(at_home, both).kind == Kind.HOME_MARS
    assert result(lit("x 9:15; o off:15", variant), both) == GameResult(1, 2, Kind.GAMMON)
    assert result(oyn, both) == GameResult(1, 1, Kind.SINGLE)


def test_fevga_scores():
    assert result(lit("x 13:15; o off:15", "fevga")) == GameResult(1, 2, Kind.GAMMON)
    assert result(lit("x 13:14 off:1; o off:15", "fevga")) == GameResult(1, 1, Kind.SINGLE)


def test_result_kernel_matches_reference():
    cases = [
        ("backgammon", {}, "x 19:1 6:14; o off:15"), ("backgammon", {}, "x bar:1 6:14; o off:15"),
        ("backgammon", {}, "x off:15; o 6:15"), ("portes", {}, "x 19:1 6:14; o off:15"),
        ("plakoto", {}, "x 24:1 pin:24 12:14; o 1:1 14:14"),
        ("plakoto", {}, "x 1:1 14:14; o 24:1 pin:24 12:14"),
        ("plakoto", dict(mother=MOTHER_DEFERRED), "x 24:1 pin:24 12:14; o 1:1 24:2 14:12"),
        ("plakoto", dict(mother=MOTHER_DEFERRED), "x 24:1 pin:24 12:14; o 1:1 14:14"),
        ("plakoto", dict(mother=MOTHER_DEFERRED),
         "x 24:1 pin:24 1:1 12:13; o 24:1 pin:24 1:1 14:13"),
        ("long_nardy", dict(koks=True), "x 20:1 3:14; o off:15"),
        ("long_nardy", dict(home_mars=True), "x 6:5 3:10; o off:15"),
        ("gul_bara", dict(koks=True, home_mars=True), "x 6:5 3:10; o off:15"),
        ("fevga", {}, "x 13:14 off:1; o off:15"), ("fevga", {}, "x 13:15; o 2:15"),
    ]
    for variant, options, text in cases:
        rules = get_rules(variant, **options)
        p = lit(text, variant)
        assert kernel_result(p, rules) == result(p, rules), (variant, options, text)


def kernel_result(p, rules):
    w, points, kind = result_k(p.to_array(), score_table(rules))
    if w < 0:
        return None
    return GameResult(None if w == 2 else int(w), int(points), Kind(kind))


# ====================================================================== opening, play_game
def test_opening_roll():
    rng = np.random.default_rng(4)
    starters = Counter()
    for _ in range(400):
        starter, dice = opening_roll(rng, get_rules("backgammon"))
        assert not dice.is_double
        starters[starter] += 1
    assert 150 < starters[0] < 250
    for variant in ("plakoto", "fevga", "long_nardy", "gul_bara"):
        assert opening_roll(rng, get_rules(variant))[1] is None
    # the higher single die starts: replay the two dice the generator gave
    rng1, rng2 = np.random.default_rng(8), np.random.default_rng(8)
    starter, dice = opening_roll(rng1, get_rules("portes"))
    while True:
        a, b = roll_one(rng2), roll_one(rng2)
        if a != b:
            break
    assert starter == (0 if a > b else 1) and dice == Dice(a, b)


def test_players_satisfy_the_protocol():
    rng = np.random.default_rng(0)
    assert isinstance(RandomPlayer(rng), Player)
    assert isinstance(PubEvalPlayer(), Player)


# seeds chosen so that the gul bara game stays clear of huge cascades in pure Python
@pytest.mark.parametrize("variant", VARIANTS)
def test_play_game_records_a_legal_game(variant):
    rng = np.random.default_rng(100 + VARIANTS.index(variant))
    rules = get_rules(variant)
    rec = play_game(RandomPlayer(rng), RandomPlayer(rng), rng, variant, record=True)
    pos = rec.positions
    assert pos[0] == Position.start(variant)
    assert len(rec.dice) == len(pos) - 1
    assert rec.turns == sum(d is not None for d in rec.dice)
    for before, dice, after in zip(pos, rec.dice, pos[1:]):
        after.check(rules)
        assert result(before, rules) is None
        assert after in successors(before, None if dice is None else tuple(dice), rules)
    final = result(pos[-1], rules)
    assert final is not None and final.kind in KINDS[variant]
    assert (rec.points, rec.kind) == (final.points, final.kind)
    assert rec.winner in (0, 1)
    # the opening: portes / backgammon play the opening dice, never a double
    if not rules.opening_rolls_both:
        assert not rec.dice[0].is_double


def test_play_game_is_reproducible_and_validates_choices():
    def game(seed):
        rng = np.random.default_rng(seed)
        return play_game(RandomPlayer(rng), RandomPlayer(rng), rng, "portes", record=True)
    assert game(3) == game(3)

    class Bad:
        def choose(self, position, dice, successors):
            return len(successors)

    with pytest.raises(ValueError, match="chose"):
        play_game(Bad(), Bad(), np.random.default_rng(0))


def test_the_game_loop_takes_dice_and_turns_from_its_caller():
    """``play`` rolls only through ``roll`` and moves only through ``turn`` (the opening
    dice first, then the scripted rolls, sides alternating); the turn limit raises, or
    with ``cut`` returns a cut record; a recorded game holds every position and roll."""
    rules = get_rules("backgammon")
    rolls = iter([(3, 1), (6, 5), (2, 2), (4, 3)] * 200)
    seen = []

    def turn(mover, pos, dice):
        seen.append((mover, tuple(dice)))
        return successors(pos, dice)[0]

    game = play(turn, rules, opening=(1, Dice(3, 1)), roll=lambda: next(rolls),
                max_turns=3, cut=True)
    assert game.cut and game.winner is None and game.kind is None and game.turns == 3
    assert seen == [(1, (3, 1)), (0, (3, 1)), (1, (6, 5))]
    with pytest.raises(RuntimeError, match="not over after 3 turns"):
        play(turn, rules, opening=(0, None), roll=lambda: next(rolls), max_turns=3)
    rng = np.random.default_rng(5)
    a = play_game(RandomPlayer(rng), RandomPlayer(rng), np.random.default_rng(1), record=True)
    assert a.positions[0] == Position.start("backgammon") and a.winner in (0, 1)
    assert len(a.positions) == len(a.dice) + 1 and not a.cut and a.cube_value == 1


def test_greedy_player_slot():
    class PipEvaluator:
        """Equity from the side to move: ahead in the race is good."""

        def evaluate(self, positions):
            pips = np.array([p.pip_counts() for p in positions], dtype=float)
            return (pips[:, 1] - pips[:, 0]) / 100

    rng = np.random.default_rng(2)
    wins = sum(play_game(GreedyPlayer(PipEvaluator()), RandomPlayer(rng), rng,
                         "long_nardy").winner == 0 for _ in range(4))
    assert wins >= 3


# ====================================================================== random playouts
@pytest.fixture(scope="module")
def compiled():
    """Compile the playout kernel once, outside the time budgets."""
    playouts("backgammon", 1, np.random.default_rng(0))


def budgeted_playouts(variant, rules=None, games=GAMES, budget_s=BUDGET_S, record=5,
                      at_least=0):
    """Play up to ``games`` kernel games in batches until the budget is spent, and at
    least ``at_least`` of them whatever the budget (a first call compiles the game's
    loop inside it)."""
    rng = np.random.default_rng([SEED, VARIANTS.index(variant)])
    batches, played, t0 = [], 0, time.perf_counter()
    size = min(games, 10)
    floor = min(games, at_least)
    while played < games:
        b = playouts(variant, size, rng, rules=rules, record_games=record if not batches else 0)
        batches.append(b)
        played += size
        spent = time.perf_counter() - t0
        if budget_s and spent >= budget_s:
            if played >= floor:
                break
            size = floor - played
            continue
        rate = played / max(spent, 1e-3)
        left = budget_s - spent if budget_s else float("inf")
        size = int(max(1, min(games - played, 4 * size, rate * left * 0.9)))
    if played < games:
        warnings.warn(f"{variant}: played {played} of {games} random games in the "
                      f"{budget_s:g} s budget (NARDY_RANDOM_BUDGET_S)")
    return batches, played


def check_trajectories(batch, rules):
    """Python-level cross-check of the recorded games of ``batch``."""
    n_steps = 0
    for game in batch.trajectories:
        for step, nxt in zip(game, game[1:] + [None]):
            p = step.position
            p.check(rules)
            assert np.array_equal(p.to_array(), step.state)
            assert p.flip().flip() == Position(p.variant, p.me, p.them, p.bar, p.off,
                                               p.pinned, p.turns, ())
            assert Position.from_json(p.to_json(), rules) == p
            if step.dice == "end":
                assert nxt is None
                over = result(p, rules)
                assert over is not None and over.kind in KINDS[rules.variant] | {
                    Kind.KOKS, Kind.HOME_MARS, Kind.DRAW}
                continue
            assert result(p, rules) is None
            assert bool(p.pending) == (step.dice is None)
            sampled = step.dice is None or (step.dice[0] == step.dice[1] and _cascade_turn(
                p.to_array(), rules.table()))
            if nxt is not None and not sampled:
                # a cascade's or pending segment's plays are sampled in play
                # (engine.movegen._core.generate_turn's sample, tested in test_movegen_reference.py)
                succ = successors(p, step.dice, rules)
                assert len(succ) == step.count
                assert nxt.position in succ
            n_steps += 1
    return n_steps


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_games(variant, compiled):
    rules = get_rules(variant)
    # backgammon always plays the full count (10,000 games take ~10 s); the other games
    # stop at the budget here and play their 10,000 in benchmarks/random_games.py
    batches, played = budgeted_playouts(variant,
                                        budget_s=0 if variant == "backgammon" else BUDGET_S,
                                        at_least=MIN_GAMES)
    errors = [e for b in batches for e in b.errors()]
    assert not errors, errors[:5]
    kinds = np.concatenate([b.kind for b in batches])
    winners = np.concatenate([b.winner for b in batches])
    points = np.concatenate([b.points for b in batches])
    assert set(Kind(k) for k in kinds) <= KINDS[variant]
    assert set(winners) <= {0, 1}
    assert all(points == [{1: 1, 2: 2, 3: 3, 6: 2}[k] for k in kinds])
    if played >= MIN_GAMES:   # every score of the game shows up in random play
        assert set(Kind(k) for k in kinds) == KINDS[variant]
        assert 0.4 < winners.mean() < 0.6
    assert check_trajectories(batches[0], rules) > 100


OPTIONS = [
    ("backgammon", dict(backgammon_triple=False)),
    ("plakoto", dict(mother=MOTHER_DEFERRED)),
    ("fevga", dict(block=BLOCK_QUARTER)),
    ("long_nardy", dict(koks=True, head_first=HEAD_FIRST_ANY_DOUBLE)),
    ("long_nardy", dict(home_mars=True, block=BLOCK_EACH)),
    ("gul_bara", dict(cascade=CASCADE_GAME, koks=True, home_mars=True)),
]


def test_rule_options_take_their_own_values_only():
    """``block=7`` or ``mother=9`` made a game the kernels do not know, and
    ``head_first=10**30`` an OverflowError when the rules were packed for them."""
    from engine.errors import VariantError
    for options, words in ((dict(block=7), "block=7: expected one of [0, 1, 2, 3]"),
                           (dict(mother=9), "mother=9"), (dict(head_first=10**30), "head_first"),
                           (dict(cascade=True), "cascade=true"), (dict(koks=2), "koks=2"),
                           (dict(koks="yes"), "expected an int or bool"),
                           (dict(speed=1), "unknown rule option 'speed'")):
        with pytest.raises(VariantError, match=re.escape(words)):
            get_rules("long_nardy", **options)
    rules = get_rules("long_nardy", koks=True, home_mars=1, block=BLOCK_EACH, head_first=2)
    assert rules.koks and rules.home_mars and rules.block == BLOCK_EACH


@pytest.mark.parametrize("variant,options", OPTIONS)
def test_random_games_with_options(variant, options, compiled):
    rules = get_rules(variant, **options)
    batches, played = budgeted_playouts(variant, rules, games=min(GAMES, 300),
                                        budget_s=BUDGET_S and 1.5, record=2)
    errors = [e for b in batches for e in b.errors()]
    assert not errors, errors[:5]
    check_trajectories(batches[0], rules)
    kinds = {Kind(k) for b in batches for k in b.kind}
    allowed = {Kind.SINGLE, Kind.GAMMON}
    allowed |= {Kind.BACKGAMMON} if rules.backgammon_triple else set()
    allowed |= {Kind.KOKS} if rules.koks else set()
    allowed |= {Kind.HOME_MARS} if rules.home_mars else set()
    allowed |= {Kind.MOTHER, Kind.DRAW} if rules.mother else set()
    assert kinds <= allowed


def test_errors_table_covers_the_kernel_codes():
    assert sorted(ERRORS) == list(range(1, 13))


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_states_agrees_with_position_check(variant):
    """The rows check (:func:`engine.rules.states.check_states`, the kernel twin of
    :meth:`Position.check`) passes random set-ups and refuses exactly the single-cell
    changes of them that :meth:`Position.check` refuses (changes of the cells a
    :class:`Position` holds one to one)."""
    from engine.errors import PositionError
    from engine.rules import _layout as L
    from engine.rules.setups import setup_positions
    from engine.rules.states import check_states

    rules = get_rules(variant)
    rows = np.stack([p.to_array() for p in setup_positions(variant, 40, 7)])
    assert check_states(rows, rules).shape == rows.shape
    # the cells Position.from_array reads one to one: points, bars, off, turns; and
    # the pin flags, read as 0 or 1
    counts = [*range(L.ME, L.THEM + L.SIDE), L.TURNS_ME, L.TURNS_THEM]
    pins = [*range(L.PIN_ME + 1, L.PIN_ME + 25), *range(L.PIN_THEM + 1, L.PIN_THEM + 25)]
    rng = np.random.default_rng(3)
    refused = 0
    for _ in range(600):
        row = rows[rng.integers(len(rows))].copy()
        if rng.random() < 0.8:
            row[rng.choice(counts)] += rng.choice([-2, -1, 1, 2])
        else:
            cell = rng.choice(pins)
            row[cell] = 1 - row[cell]
        try:
            Position.from_array(row, variant).check(rules)
            legal = True
        except PositionError:
            legal = False
        try:
            check_states(row, rules)
            assert legal, (row.tolist(), "passed by check_states only")
        except PositionError as exc:
            assert not legal, (row.tolist(), str(exc))
            refused += 1
    assert refused > 300


def test_a_game_starts_from_a_legal_position_of_its_own_game():
    """A backgammon start was played under plakoto's rules, and ``max_turns=0`` ended
    in a RuntimeError."""
    from engine.errors import NardyError, PositionError
    from engine.eval.network import Network
    from engine.play.duel import duel
    rng = np.random.default_rng(1)
    with pytest.raises(PositionError, match="backgammon position given with the rules of "
                                            "plakoto"):
        play_game(RandomPlayer(rng), RandomPlayer(rng), rng, "plakoto",
                  start=Position.start())
    with pytest.raises(NardyError, match="max_turns"):
        play_game(RandomPlayer(rng), RandomPlayer(rng), rng, max_turns=0)
    net = Network.create("plakoto", 8, "nardy255")
    with pytest.raises(PositionError):
        duel(net, "random", 2, 1, "plakoto", start=Position.start())


def test_rules_given_as_a_name_are_refused_in_one_line():
    """A game's name where its ``Rules`` belong gave an AttributeError from inside."""
    from engine.errors import PositionError, VariantError
    from engine.play.duel import DuelError, heuristic_duel
    with pytest.raises(VariantError, match="expected a Rules"):
        successors(Position.start(), (3, 1), "backgammon")
    with pytest.raises(VariantError, match="expected a Rules"):
        Position.start().check("backgammon")
    with pytest.raises(PositionError, match="expected a Position"):
        successors(None, (3, 1))
    with pytest.raises(DuelError, match="expected 15"):    # the kernel read past them
        heuristic_duel("long_nardy", 2, np.random.default_rng(1), w=np.zeros(1))
