"""The race formulas of ``engine.eval.race``: pip counts, effective pip counts, Kleinman,
Thorp, Keith, 8-9-12 and Isight, and ``engine.cube_cli --race``.

The expected counts of the first tests are GNU Backgammon 1.07's (``set board ID``,
then ``show kleinman``, ``show thorp``, ``show keith``, ``show 8912``), where it
agrees with the formulas' authors: its Keith line adds an unrounded seventh (193.1),
Keith's rule rounds down (193)."""

import json
import math

import numpy as np
import pytest

from engine.cli.cube import main
from engine.eval import bearoff, onesided
from engine.eval.race import (
    PIPS_PER_ROLL,
    RaceError,
    format_race,
    keith_count,
    kleinman,
    race_counts,
    thorp_count,
)
from engine.notation.gnubg_id import position_from_id
from engine.rules.position import Position

# Position ID -> GNU Backgammon's Kleinman chance, Thorp (leader, L, T), Keith
# (leader, T), percent ahead
GNU = {
    "4HPwATDgc/ABMA": (0.5619, (196, 215.6, 196), (169, 169), 0.0),
    "dctIBwBbU5sBAA": (0.8273, (113, 124.3, 126), (90, 101), 16.3),
    "398AAADuiiwNAA": (0.0, (145, 159.5, 55), (119, 42), -79.0),
    "NqVSlQB3/wIAAA": (1.0, (66, 72.6, 162), (50, 138), 267.6),
    "/38AAADSK5KDBA": (0.0, (169, 185.9, 59), (143, 46), -89.5),
}


@pytest.mark.parametrize("pid", sorted(GNU))
def test_counts_agree_with_gnu_backgammon(pid):
    k, (thorp, thorp_l, thorp_t), (keith, keith_t), ahead = GNU[pid]
    c = race_counts(position_from_id(pid))
    assert round(c.kleinman, 4) == k
    assert thorp_count((*position_from_id(pid).me, 0)) == thorp
    assert round(c.thorp.leader, 1) == thorp_l and c.thorp.trailer == thorp_t
    assert c.keith.leader == keith + keith // 7 and c.keith.trailer == keith_t
    assert round(c.rule_8912.leader, 1) == ahead


def test_the_opening_is_no_race_and_its_counts_are_gnu_backgammons():
    c = race_counts(Position.start("backgammon"))
    assert not c.race
    assert c.pips == (167, 167) and c.epc[0] == c.epc[1] > 167 + 5
    assert (c.keith.leader, c.keith.trailer) == (193, 169)
    assert not c.keith.double and c.keith.take
    assert "not a race" in format_race(c)


def _race(me: dict, them: dict, off=(0, 0)) -> Position:
    a, b = [0] * 24, [0] * 24
    for p, n in me.items():
        a[p - 1] = n
    for p, n in them.items():
        b[p - 1] = n
    return Position("backgammon", tuple(a), tuple(b), (0, 0), off)


def test_effective_pips_come_from_the_bear_off_tables():
    # two checkers on the ace point go off in one roll, whatever it is
    c = race_counts(_race({1: 2}, {6: 5, 5: 5, 4: 5}, off=(13, 0)))
    assert c.race
    assert c.epc[0] == pytest.approx(PIPS_PER_ROLL, abs=1e-5)
    assert c.wastage[0] == pytest.approx(PIPS_PER_ROLL - 2, abs=1e-5)
    assert c.epc[1] > c.pips[1]                            # 15 checkers waste pips
    # a checker on the 7-point is home after the first die of any roll: the rollout's
    # first rolls run through the 36, so its mean is exact: one roll, then the tables'
    # mean rolls from where the roll leaves the checker
    c = race_counts(_race({7: 1}, {1: 1}, off=(14, 14)))
    table = bearoff.load()
    left = [max(7 - (4 * a if a == b else a + b), 0) for a in range(1, 7) for b in range(1, 7)]
    rolls = 1 + np.mean([table.expected_rolls([int(p == q) for q in range(1, 7)])
                         for p in left])
    assert c.epc[0] == pytest.approx(rolls * PIPS_PER_ROLL, abs=1e-9)
    assert c.epc[1] == pytest.approx(PIPS_PER_ROLL, abs=1e-5)


# Position ID -> the side's EPC by GNU Backgammon 1.07's one-sided rollout (show
# onesidedrollout; 5,760 trials, its own rule for the checkers outside) for a side
# with checkers outside home, which the engine's rollout, by its own rule, matches
# within about a pip
GNU_EPC = {
    ("/9YAAMCR5WYAAA", 0): 108.814,     # the largest gap of 864 sides (helper 130)
    ("DV0yALAlAAAAAA", 1): 85.16,
    ("t7sOAADuDgAAAA", 1): 63.883,
}


@pytest.mark.parametrize("pid, side", sorted(GNU_EPC))
def test_effective_pips_outside_home_by_a_one_sided_rollout(pid, side):
    c = race_counts(position_from_id(pid))
    assert abs(c.epc[side] - GNU_EPC[pid, side]) < 1.1
    assert c.epc == race_counts(position_from_id(pid)).epc      # the same at every call
    assert 5 < c.wastage[side] < 20


def test_one_sided_rollouts():
    # fourteen checkers on the 18-point: 252 pips and about a third of a roll's pips
    # more (GNU Backgammon 1.07 says 247.3, fewer than the pips: no race is run in fewer
    # pips than it has, so its figure is short)
    side = [0] * 25
    side[17] = 14
    rolls = onesided.mean_rolls(side)
    assert 252 < rolls * PIPS_PER_ROLL < 252 + 12
    assert onesided.mean_rolls(side, trials=360, seed=2) != rolls       # other dice
    assert abs(onesided.mean_rolls(side, trials=360, seed=2) - rolls) < 0.5
    # a checker further back never needs fewer rolls
    back = [0] * 25
    back[18], back[5] = 1, 14
    less = [0] * 25
    less[12], less[5] = 1, 14
    assert onesided.mean_rolls(back) > onesided.mean_rolls(less)
    # all home: the tables' exact mean; the bar counts as the 25-point
    home = [0] * 25
    home[5] = 15
    assert onesided.mean_rolls(home) == bearoff.load().expected_rolls([0] * 5 + [15])
    bar = [0] * 25
    bar[24] = 1
    assert onesided.mean_rolls(bar) > 2
    # checkers on the bar enter before any other moves (helper 137: with two on the
    # bar and one on the 7-point, 3-1 left one on the bar)
    from engine.eval.onesided import _play
    b = np.zeros(26, np.int64)
    b[25], b[7], b[6] = 2, 1, 12
    _play(b, np.array([3, 1, 0, 0]), 2, np.zeros(bearoff.N_POSITIONS))
    assert b[25] == 0 and b[22] == 1 and b[24] == 1 and b[7] == 1
    for bad in ([0] * 24, [16] + [0] * 24, [-1] + [0] * 24):
        with pytest.raises(ValueError, match="25 counts"):
            onesided.mean_rolls(bad)
    with pytest.raises(ValueError, match="trials"):
        onesided.mean_rolls(home, trials=0)


def test_keith_and_thorp_by_their_definitions():
    # Keith: 3 on the 1-point (+4), 2 on the 2-point (+1), 5 on the 3-point (+2), the
    # 4- and 5-points empty (+2), the 6-point held
    side = (3, 2, 5, 0, 0, 5) + (0,) * 19
    pips = 3 + 4 + 15 + 30
    assert keith_count(side) == pips + 4 + 1 + 2 + 2
    # Thorp: +2 a checker, +1 a checker on the 1-point, -1 a home point held
    assert thorp_count(side) == pips + 2 * 15 + 3 - 4


def test_keith_rounds_the_seventh_down_and_takes_at_two():
    c = race_counts(_race({6: 4, 5: 4, 4: 4, 3: 3}, {6: 4, 5: 4, 4: 4, 3: 3}))
    # 69 pips each, no additions: the side on roll's 69 + 9 (69 / 7 = 9.86, rounded down)
    assert (c.keith.leader, c.keith.trailer) == (78, 69)
    assert not c.keith.double and c.keith.take
    # the opponent's 15 on his 6-point: 90 pips, + 2 for his empty 4- and 5-points;
    # L - T = 78 - 92 = -14: double, pass
    c = race_counts(_race({6: 4, 5: 4, 4: 4, 3: 3}, {6: 15}))
    assert c.keith.trailer == 92 and c.keith.double and not c.keith.take


def test_kleinman():
    assert kleinman(100, 100) == pytest.approx(0.5 * (1 + math.erf(4 / (2 * 196 ** 0.5))))
    assert kleinman(2, 2) is None and kleinman(3, 2) is not None
    c = race_counts(_race({1: 1}, {1: 1}, off=(14, 14)))     # the side on roll cannot lose
    assert c.kleinman is None and c.to_json()["kleinman"] is None
    assert "Kleinman: cubeless winning chance of the side on roll n/a" in format_race(c)


# Position ID -> GNU Backgammon 1.07's show isight: L, T, estimated winning chance (%),
# its advice
ISIGHT = {
    "4HPwATDgc/ABMA": (167, 167, 24.3, "No double, take"),
    "27YAAHB3BwAAAA": (36, 36, 68.0, "Double, take"),       # 30 + 1 + 2 + 1 + 2 gaps
    "Pr8AAODfHQAAAA": (40, 42, 70.7, "Redouble, take"),
    "VTUDAHi/KQAAAA": (46, 57, 86.7, "Double, pass"),       # T: 53 + 4 crossovers
    "EP8fAADw8w8AAA": (101, 115, 74.3, "Redouble, take"),
}


@pytest.mark.parametrize("pid", sorted(ISIGHT))
def test_isight_agrees_with_gnu_backgammon(pid):
    lead, trail, chance, advice = ISIGHT[pid]
    c = race_counts(position_from_id(pid))
    assert (c.isight.leader, c.isight.trailer) == (lead, trail)
    assert round(c.isight_chance, 1) == chance
    # GNU Backgammon names one action: the redouble where the side on roll would
    # redouble, else the double
    owned = advice.startswith("Redouble")
    assert c.isight.advice(owned) == advice
    assert not owned or c.isight.double


def test_isight_counts_each_adjustment():
    # on roll: 21 pips; 3 on the 1-point (+2), 3 on the 2-point (+1), 4 on the 3-point
    # (+1); no 4- or 6-point where the opponent holds his (+2); 10 checkers left against
    # 5 (+5)
    c = race_counts(_race({1: 3, 2: 3, 3: 4}, {4: 1, 6: 4}, off=(5, 10)))
    assert c.isight.leader == 21 + 2 + 1 + 1 + 2 + 5
    # the opponent: 28 pips; his empty 5-point is no gap (the side on roll has none)
    assert c.isight.trailer == 28
    # a checker on the 9-point counts one crossover more than the opponent's
    c = race_counts(_race({9: 1, 6: 14}, {6: 15}))
    assert (c.isight.leader, c.isight.trailer) == (9 + 84 + 1, 90)


def test_isight_thresholds_are_exact():
    # the same checkers on both sides: L = T, a chance of 80 - L/3, exactly 68 at L = 36,
    # 70 at 30 and 76 at 12 (double from 68, redouble from 70, take up to 76); a pip more
    # is a third of a point less
    for checkers, chance, double, redouble, take in (
            ({6: 6}, 68.0, True, False, True), ({6: 6, 1: 1}, 68 - 1 / 3, False, False, True),
            ({6: 5}, 70.0, True, True, True), ({6: 5, 1: 1}, 70 - 1 / 3, True, False, True),
            ({6: 2}, 76.0, True, True, True), ({6: 1, 5: 1}, 76 + 1 / 3, True, True, False)):
        left = sum(checkers.values())
        c = race_counts(_race(checkers, checkers, off=(15 - left, 15 - left)))
        assert c.isight_chance == pytest.approx(chance)
        assert (c.isight.double, c.isight.redouble, c.isight.take) == (double, redouble, take)


def test_advice_words():
    c = race_counts(position_from_id("dctIBwBbU5sBAA"))      # 16.3% ahead
    assert c.rule_8912.advice() == "Double, pass"
    assert c.rule_8912.advice(owned=True) == "Redouble, pass"
    assert "the opponent owns the cube" in format_race(c, "them")


@pytest.mark.parametrize("bad", [Position.start("plakoto"), Position.start("long_nardy"),
                                 "4HPwATDgc/ABMA", None])
def test_other_games_and_non_positions_are_refused(bad):
    with pytest.raises(RaceError):
        race_counts(bad)


def test_a_finished_game_is_refused():
    with pytest.raises(RaceError, match="over"):
        race_counts(_race({}, {1: 1}, off=(15, 14)))


def test_cube_cli_race(capsys):
    args = ["--position", "dctIBwBbU5sBAA", "--probabilities", "0.8,0,0,0,0", "--race"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Kleinman: cubeless winning chance of the side on roll 0.8273" in out
    assert "Thorp: L 124.3, T 126" in out
    assert main(args + ["--json"]) == 0
    race = json.loads(capsys.readouterr().out)["race"]
    assert race["pips"] == [86, 100] and race["kleinman"] == 0.8273
    assert race["keith"]["leader"] == 90 + 90 // 7
    assert race["isight"]["leader"] >= 86 and 0 < race["isight"]["chance"] < 100
    assert main(args[:-1]) == 0
    assert "Kleinman" not in capsys.readouterr().out


def test_cube_cli_race_is_not_taken_with_a_rollout(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--position", "dctIBwBbU5sBAA", "--race", "--rollout"])
    assert exc.value.code == 2 and "--race" in capsys.readouterr().err


def test_thorp_s_tenth_is_exact():
    # the side on roll's Thorp count 90, a tenth more is 99 (90 * 1.1 is 99.00000000000001
    # in floating point, which read L = T + 2 as more than T + 2); GNU Backgammon: double
    c = race_counts(position_from_id("PjPMAEDzvgMAAA"))
    assert (c.thorp.leader, c.thorp.trailer) == (99.0, 97.0)
    assert c.thorp.double and not c.thorp.redouble and c.thorp.take
