"""Rollouts (engine.search.rollout): their dice, their agreement with exact values, what
variance reduction buys, reproducibility, and the cube inside them."""

import numpy as np
import pytest

from engine import Position
from engine.cube.decision import CubeState
from engine.cube.met import default_table
from engine.rules import _layout as L
from engine.search import rollout as rollout_module
from engine.search.nply import Search, SearchSettings
from engine.search.rollout import (
    Rollout,
    RolloutError,
    RolloutSettings,
    distinct_rows,
    rollout,
    trial_dice,
)

pytestmark = pytest.mark.xdist_group("search")


@pytest.fixture(scope="module")
def search():
    return Search.load("backgammon", threads=1)


def _combo(d):
    return (d[:, 0] - 1) * 6 + d[:, 1] - 1


def test_standard_errors_follow_the_stratified_rolls(search):
    """The first two rolls are stratified, so a result that depends on them alone has
    no error left once every stratum is seen; the trials taken as independent
    overstated the error of truncated rollouts up to tenfold (helper 134)."""
    from engine.search.rollout import _se
    t = np.arange(1296)
    first = _combo(trial_dice(3, t, 0)).astype(float)
    second = _combo(trial_dice(3, t, 1)).astype(float)
    assert _se(first) == 0 and _se(np.sin(first) + second ** 2) < 1e-12   # additive
    assert _se(first[:72]) == 0                          # every first roll twice
    additive = np.sin(first) + second ** 2             # fewer than 36 blocks: the second
    assert _se(additive[:144]) > 0                     # roll's effect is not taken out
    noise = np.random.default_rng(5).normal(size=2592)
    assert _se(noise) == pytest.approx(noise.std(ddof=1) / np.sqrt(2592), rel=0.05)
    assert _se(noise[:100]) == noise[:100].std(ddof=1) / 10        # no complete design
    # one roll and the network's value: every trial of a first roll alike
    r = Rollout(search, RolloutSettings(trials=1296, truncate=1, seed=2)).position(
        Position.start())
    assert r.se["equity"] < 1e-12 and r.se_plain["equity"] < 1e-12      # was 0.0026
    # three rolls, every pair of first rolls once: the error reported is about the
    # spread of the means over seeds
    means, errors = [], []
    for seed in range(20):
        r = Rollout(search, RolloutSettings(trials=1296, truncate=3, seed=seed,
                                            variance_reduction=False)).position(
            Position.start())
        means.append(r.equity)
        errors.append(r.se["equity"])
    assert 0.6 < np.std(means, ddof=1) / np.mean(errors) < 1.5


def test_first_two_rolls_are_stratified():
    t = np.arange(1296)
    first, second = _combo(trial_dice(7, t, 0)), _combo(trial_dice(7, t, 1))
    assert np.array_equal(np.bincount(first, minlength=36), np.full(36, 36))
    assert np.array_equal(np.bincount(second, minlength=36), np.full(36, 36))
    assert len(set(zip(first.tolist(), second.tolist()))) == 1296     # every pair once
    third = _combo(trial_dice(7, t, 2))
    assert 20 < np.bincount(third, minlength=36).min()                  # random, all seen
    assert not np.array_equal(trial_dice(8, t, 0), trial_dice(7, t, 0))


def test_fewer_than_1296_trials_do_not_share_their_second_rolls():
    """The second roll was ``perm1[t div 36]``: 36 trials all had the same one, 144 four,
    so the trials were not independent and the plain mean of 36 trials truncated after
    two rolls spread 5.5 times its standard error over seeds (helper 93's audit)."""
    for lo in (0, 36, 1260):
        t = np.arange(lo, lo + 36)
        for k in (0, 1):
            assert sorted(_combo(trial_dice(7, t, k)).tolist()) == list(range(36))
    t = np.arange(144)
    second = _combo(trial_dice(7, t, 1))
    assert np.array_equal(np.bincount(second, minlength=36), np.full(36, 4))


def test_dice_depend_on_seed_trial_and_roll_only():
    some = np.array([5, 700, 1299])
    for k in range(4):
        assert np.array_equal(trial_dice(3, some, k), trial_dice(3, np.arange(1300), k)[some])
    d = trial_dice(3, np.arange(5000), 9)
    assert d.min() == 1 and d.max() == 6


def _same_grouping(rows, uniq, inv):
    ref, ref_inv = np.unique(rows, axis=0, return_inverse=True)
    assert uniq.shape == ref.shape and (uniq[inv] == rows).all()
    assert sorted(map(bytes, uniq)) == sorted(map(bytes, ref))
    # two rows share a group exactly when np.unique puts them together
    assert (ref_inv.reshape(-1)[:, None] == ref_inv.reshape(-1)[None, :]).tolist() == \
        (inv[:, None] == inv[None, :]).tolist()


def test_distinct_rows_groups_equal_rows_only(monkeypatch):
    """The rollout's dedupe of trial positions: the rows np.unique finds, each row
    mapped to its own; and when every row hashes alike (a collision forced) the
    fallback still keeps different rows apart."""
    rng = np.random.default_rng(5)
    base = rng.integers(0, 3, (40, L.STATE_LEN)).astype(np.int16)
    rows = base[rng.integers(0, 40, 300)]
    rows[7, 100] += 1                               # a row differing in one slot
    _same_grouping(rows, *distinct_rows(rows))
    monkeypatch.setattr(rollout_module, "_ROW_MIX", np.zeros_like(rollout_module._ROW_MIX))
    _same_grouping(rows, *distinct_rows(rows))


def test_bad_settings_are_errors_that_name_the_field():
    for field, value in [("trials", 0), ("ply", 3), ("seed", -1), ("truncate", 1.5),
                         ("variance_reduction", "yes"), ("stop_sigmas", 0)]:
        with pytest.raises(RolloutError, match=field):
            RolloutSettings(**{field: value})


def test_a_bearoff_rollout_agrees_with_the_tables(search):
    """Both sides home: the rollout plays every race out with the network (bearoff
    off) and lands within 3 standard errors of the one-sided tables' value."""
    pos = Position.from_json({"variant": "backgammon",
                              "me": [2, 2, 1, 2, 1, 0] + [0] * 18,
                              "them": [1, 2, 2, 1, 1, 1] + [0] * 18,
                              "bar": [0, 0], "off": [7, 7]})
    exact = search.evaluate(pos, 0).probabilities           # the tables' value
    r = Rollout(search).position(pos, RolloutSettings(trials=1296, bearoff=False,
                                                      variance_reduction=False))
    assert r.trials == 1296
    assert abs(r.probabilities[0] - exact[0]) < 3 * r.se["win"]
    assert r.se["win"] > 0
    # with the tables on, every trial ends at once with their value
    t = Rollout(search).position(pos, RolloutSettings(trials=36))
    assert t.probabilities == pytest.approx(exact)


def test_variance_reduction_cuts_the_standard_error(search):
    pos = Position.start()
    r = Rollout(search).position(pos, RolloutSettings(trials=144, truncate=4))
    assert r.se_plain["equity"] > 3 * r.se["equity"]
    # the adjusted mean estimates the same value as the plain one
    assert abs(r.equity - r.equity_plain) < 3 * r.se_plain["equity"]


def test_a_rollout_is_reproducible_and_its_trials_do_not_depend_on_company(search):
    pos = Position.start()
    settings = RolloutSettings(trials=72, truncate=3, seed=11)
    a = Rollout(search).position(pos, settings)
    b = Rollout(search).position(pos, settings)
    assert a.results.tobytes() == b.results.tobytes()
    two = Rollout(Search.load("backgammon", threads=2)).position(pos, settings)
    assert a.results.tobytes() == two.results.tobytes()
    longer = Rollout(search).position(pos, RolloutSettings(trials=144, truncate=3, seed=11))
    assert np.array_equal(longer.results[:72], a.results)
    other = Rollout(search).position(pos, RolloutSettings(trials=72, truncate=3, seed=12))
    assert not np.array_equal(other.results, a.results)


_PRUNED_DIFFERS = {           # a position whose 1-ply value pruned differs by 0.003
    "variant": "backgammon", "bar": [0, 0], "off": [0, 0],
    "me": [0, 0, 1, 3, 2, 3, 0, 1, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0],
    "them": [0, 1, 0, 0, 4, 3, 0, 2, 2, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}


def test_a_rollout_plays_as_the_search_picks_inside_its_tree(search):
    """Truncated after one roll, 36 trials see each first roll once, so the plain mean is
    the 1-ply value of the search that picks the plays the same way: pruned by the
    released pruning network (its best four rated again by the network) or not."""
    pos = Position.from_json(_PRUNED_DIFFERS)
    got = {}
    for prune in (True, False):
        r = Rollout(search).position(pos, RolloutSettings(trials=36, truncate=1,
                                                          prune=prune))
        want = search.evaluate(pos, settings=SearchSettings(ply=1, prune=prune))
        assert r.equity_plain == pytest.approx(want.equity, abs=1e-5)
        got[prune] = r.equity_plain
    assert got[True] != pytest.approx(got[False], abs=1e-5)   # pruning picks other plays


def test_candidates_are_ranked_and_rolled_out_on_the_same_dice(search):
    pos = Position.start()
    cands = Rollout(search).candidates(pos, (3, 1), 3, RolloutSettings(trials=72, truncate=3))
    assert len(cands) == 3
    eqs = [c.result.equity for c in cands]
    assert eqs == sorted(eqs, reverse=True)
    assert cands[0].behind == 0 and cands[1].behind == pytest.approx(eqs[0] - eqs[1])
    assert cands[0].move == "8/5 6/5"
    # the same dice: each candidate is the rollout of its position with the same
    # settings (trial numbers, hence dice), seen from the mover's side
    for c in cands:
        alone = Rollout(search).position(c.position, RolloutSettings(trials=72, truncate=3))
        assert c.result.equity == pytest.approx(-alone.equity, abs=1e-12)
    j = cands[1].to_json()
    assert set(j) >= {"position", "move", "equity", "se", "probabilities"}


def test_many_candidates_are_played_in_groups_with_the_same_results(search, monkeypatch):
    """All candidates' trials were advanced at once: 100 candidates of 1,296 trials took
    402 MB, 1,000 would take some 4 GB. In groups of at most ``IN_FLIGHT`` trials the numbers, the cubeful
    ones and the progress are the same."""
    pos = Position.start()
    settings = RolloutSettings(trials=36, truncate=2)
    cube = CubeState(2, "me")
    whole = Rollout(search).candidates(pos, (3, 1), 5, settings, cube=cube)
    seen = []
    monkeypatch.setattr(rollout_module, "IN_FLIGHT", 2 * 36)          # groups of 2, 2, 1
    grouped = Rollout(search).candidates(pos, (3, 1), 5, settings, seen.append, cube=cube)
    assert [c.move for c in grouped] == [c.move for c in whole]
    for g, w in zip(grouped, whole):
        assert g.result.results.tobytes() == w.result.results.tobytes()
        assert g.result.cubeful_results.tobytes() == w.result.cubeful_results.tobytes()
    assert seen[-1] == 36 and seen == sorted(seen)


def test_a_rollout_of_candidates_stops_when_the_best_is_clear(search):
    pos = Position.start()
    settings = RolloutSettings(trials=3 * 1296, truncate=1, stop_sigmas=3.0)
    cands = Rollout(search).candidates(pos, (3, 1), 2, settings)
    assert cands[0].move == "8/5 6/5" and cands[0].result.trials == 1296
    assert cands[1].behind > 3.0 * cands[1].se_behind


def test_a_cube_that_cannot_turn_changes_nothing(search):
    """Money: the opponent holds the cube and the side to move bears off its last two
    checkers with any roll: every trial's cubeful result is its cubeless one."""
    pos = Position.from_json({"variant": "backgammon", "me": [2] + [0] * 23,
                              "them": [0] * 18 + [3, 0, 0, 0, 0, 0],
                              "bar": [0, 0], "off": [13, 12]})
    r = Rollout(search).position(pos, RolloutSettings(trials=36),
                                 cube=CubeState(2, "them"))
    assert r.cubeful_equity == pytest.approx(r.equity) == pytest.approx(1.0)


def test_a_dead_cube_in_match_play_is_the_cubeless_game(search):
    """The Crawford game has no cube: the cubeful match winning chance is the
    gammon-weighted one of the cubeless results, trial by trial."""
    table = default_table()
    cube = CubeState(match_length=5, score=(4, 2), crawford=True)
    pos = Position.start()
    settings = RolloutSettings(trials=72, truncate=3, variance_reduction=False)
    r = Rollout(search).position(pos, settings, cube=cube)
    a, b = cube.away
    p = np.asarray(r.results)
    win = (p[:, 0] - p[:, 1]) * table.after(a, b, 1) + (p[:, 1] - p[:, 2]) * \
        table.after(a, b, 2) + p[:, 2] * table.after(a, b, 3)
    lose_single = 1 - p[:, 0] - p[:, 3]
    lose = lose_single * table.after(a, b, -1) + (p[:, 3] - p[:, 4]) * \
        table.after(a, b, -2) + p[:, 4] * table.after(a, b, -3)
    assert r.mwc == pytest.approx(float(np.mean(win + lose)), abs=1e-9)


def test_cubeful_money_rollout_doubles_and_reports(search):
    r = Rollout(search).position(Position.start(), RolloutSettings(trials=72, truncate=5),
                                 cube=CubeState())
    assert r.cubeful_equity is not None and r.se["cubeful_equity"] > 0
    assert -3 < r.cubeful_equity < 3
    # far ahead in a race: the side to move doubles at once and the other passes, so
    # every trial is worth exactly the cube (a rollout that never turned it: about 0.95)
    ahead = Position.from_literal("x 6:5 5:5 4:5; o 8:4 7:4 6:4 5:3")
    r = Rollout(search).position(ahead, RolloutSettings(trials=72, truncate=5),
                                 cube=CubeState())
    assert r.cubeful_equity == 1.0 and r.equity < 1.0
    with pytest.raises(RolloutError, match="only backgammon"):
        Rollout(Search.load("portes", threads=1)).position(
            Position.start("portes"), RolloutSettings(trials=1), cube=CubeState())


def _race(me: dict, them: dict) -> Position:
    m, t = [0] * 24, [0] * 24
    for point, n in me.items():
        m[point - 1] = n
    for point, n in them.items():
        t[point - 1] = n
    return Position.from_json({"variant": "backgammon", "me": m, "them": t,
                              "off": [15 - sum(me.values()), 15 - sum(them.values())]})


def test_a_trial_ended_by_the_tables_or_truncation_takes_its_cube_action(search):
    """Where the bear-off tables end a trial (here at once: a home race) its cubeful
    value is that of the proper cube action there, as the cube command gives it; it was
    the no-double value, with no double (0.893 where double/pass gives 1.0), and a cube
    at its maximum was valued live (0.505 where the dead cube gives 0.309)."""
    from engine.cube.decision import analyse_cube, cubeful_value

    def probs(pos, ply=0):
        return np.asarray(search.evaluate(pos, 0).probabilities)
    for pos, cube in ((_race({5: 1, 2: 1}, {6: 1, 3: 1}), CubeState()),
                      (_race({5: 1, 2: 1}, {6: 1, 3: 1}), CubeState(match_length=7)),
                      (_race({6: 1, 4: 1}, {5: 1, 3: 1}), CubeState(max_value=1)),
                      (_race({6: 1, 4: 1}, {5: 1, 3: 1}), CubeState(2, "me", max_value=2))):
        r = Rollout(search).position(pos, RolloutSettings(trials=36), cube=cube)
        d = analyse_cube(pos, cube, probs)
        equity, mwc = cubeful_value(d)
        if cube.money:
            assert r.cubeful_equity == pytest.approx(equity, abs=1e-9)   # per cube
        else:
            assert r.mwc == pytest.approx(mwc, abs=1e-9)
    assert Rollout(search).position(_race({5: 1, 2: 1}, {6: 1, 3: 1}), RolloutSettings(
        trials=36), cube=CubeState()).cubeful_equity == 1.0            # double, pass
    dead = Rollout(search).position(_race({6: 1, 4: 1}, {5: 1, 3: 1}), RolloutSettings(
        trials=36), cube=CubeState(max_value=1))
    assert dead.cubeful_equity == pytest.approx(dead.equity, abs=1e-9)
    # truncated in contact: the cube action at the truncation point counts
    ahead = Position.from_literal("x 6:3 5:3 4:3 3:3 2:3; o 24:2 8:4 7:4 6:3 5:2")
    r = Rollout(search).position(ahead, RolloutSettings(trials=36, truncate=1),
                                 cube=CubeState(2, "them"))
    assert r.cubeful_equity > 0


def test_a_pass_leaves_the_cubeless_results_of_the_cubeless_rollout(search):
    """A pass fixes a trial's cubeful result, and its checkers play on: the cubeless
    figures of a cubeful rollout are those of the cubeless rollout (they were the 0-ply
    evaluation where the pass came, with a standard error of 0 when every trial passed
    at once: 0.609 where the rollout gives 0.322)."""
    pos = _race({10: 1, 4: 1}, {8: 1, 5: 1})
    settings = RolloutSettings(trials=144)
    plain = Rollout(search).position(pos, settings)
    for cube in (CubeState(), CubeState(match_length=5, score=(1, 2))):
        cf = Rollout(search).position(pos, settings, cube=cube)
        assert cf.equity == plain.equity and cf.se["equity"] == plain.se["equity"] > 0
        assert cf.probabilities == plain.probabilities
    start = Position.start()
    settings = RolloutSettings(trials=72, truncate=6)
    cf = Rollout(search).position(start, settings, cube=CubeState())
    assert cf.equity == Rollout(search).position(start, settings).equity


def test_a_short_match_bear_off_s_worthless_cube_still_faces_a_free_double(search):
    """In match play a short bear-off's cube efficiency comes from the two-sided table
    (bearoff_cube.cube_efficiencies), and 0 there is a cube worth nothing in money play,
    not a dead one: the opponent's free double after the Crawford game is still valued.
    A trial ending at once on the tables is worth the cube analysis' no double (valued
    dead, 0.9935 where the analysis has 0.9902)."""
    from engine.notation.gnubg_id import position_from_gnubg
    from engine.search.bearoff_cube import cube_analysis, cube_efficiencies
    pos = position_from_gnubg("qgAAIAQAAAAAAA")[0]
    post = CubeState(1, "centre", 5, (4, 1))       # we are 1-away, he 4-away
    assert cube_efficiencies(pos, post)[0] == 0.0
    r = Rollout(search).position(pos, RolloutSettings(trials=36, seed=1), cube=post)
    d = cube_analysis(pos, post, lambda p, ply=0: np.asarray(
        search.evaluate(p, 0).probabilities))
    assert r.mwc == pytest.approx(d.mwc["no_double"], abs=1e-9)


def test_a_cube_decision_rolled_out_as_two_lines_on_the_same_dice(search):
    """Rollout.cube_decision: the no-double line (the first decision held) and the
    double/take line; at a home race both end on the tables at once and give the cube
    analysis' own equities; in a race the 0-ply cube says double/take at the root, the
    no-double line differs from the position's cubeful rollout (which doubles there)
    and the double/take line is the rollout of the doubled cube, on the current scale."""
    from engine.cube.decision import analyse_cube
    from engine.search.bearoff_cube import cube_analysis
    from engine.search.rollout import RolloutCubeError

    def probs(pos, ply=0):
        return np.asarray(search.evaluate(pos, 0).probabilities)
    home = _race({5: 1, 2: 1}, {6: 1, 3: 1})
    for cube in (CubeState(), CubeState(match_length=7, score=(3, 1))):
        r = Rollout(search).cube_decision(home, cube, RolloutSettings(trials=36))
        # (money play: the two-sided table's exact equities, as the cube analysis of
        # the command lines has them; a match: the model's, at the efficiencies the
        # table implies)
        d = cube_analysis(home, cube, probs)
        assert r.equities["no_double"] == pytest.approx(d.no_double, abs=1e-9)
        assert r.equities["double_take"] == pytest.approx(d.double_take, abs=1e-9)
        assert r.action == d.action
        assert (r.mwc is None) == cube.money
    race = Position.from_literal("x 10:3 7:1 6:3 5:4 4:4; o 9:3 7:4 6:4 5:4")   # 91 v 99 pips
    assert analyse_cube(race, CubeState(), probs).action == "double_take"
    settings = RolloutSettings(trials=72, truncate=4)
    r = Rollout(search).cube_decision(race, CubeState(), settings)
    whole = Rollout(search).position(race, settings, cube=CubeState())
    doubled = Rollout(search).position(race, settings, cube=CubeState(2, "them"))
    assert r.equities["no_double"] != whole.cubeful_equity
    assert r.equities["double_take"] == pytest.approx(2 * doubled.cubeful_equity)
    assert r.se["difference"] > 0 and r.no_double.equity == whole.equity
    # the opening: no double at the root, so the no-double line is the cubeful rollout
    start = Rollout(search).cube_decision(Position.start(), CubeState(), settings)
    assert start.equities["no_double"] == Rollout(search).position(
        Position.start(), settings, cube=CubeState()).cubeful_equity
    assert start.action == "no_double"
    with pytest.raises(RolloutCubeError, match="may not double"):
        Rollout(search).cube_decision(race, CubeState(2, "them"), settings)


@pytest.mark.parametrize("gammon, taken, action", [
    (0.0, 0.8, "double_pass"), (0.01, 0.8, "too_good_pass"),
    (0.0, 0.4, "no_double"), (0.01, 0.4, "too_good_take")])
def test_a_rolled_out_cube_is_too_good_only_with_a_gammon_to_win(gammon, taken, action):
    """Luck adjusted, the no-double line's mean can pass the cash where no gammon is
    left; GNU Backgammon, which reads that line's gammon chance, then says double / pass
    (or no double, take), where nardy said too good."""
    def line(values):
        return rollout_module.RolloutResult((0.99, gammon, 0.0, 0.0, 0.0), 0.98, {}, {},
                                            0.98, len(values),
                                            cubeful_results=np.array(values))
    # no double 1.02 on average; double / take twice ``taken`` (units of the doubled cube)
    r = rollout_module._cube_rollout(CubeState(), default_table(), line([1.01, 1.03]),
                                     line([taken - 0.05, taken + 0.05]))
    assert r.equities["no_double"] == pytest.approx(1.02)
    assert r.action == action


def test_the_one_call_api():
    r = rollout(Search.load("backgammon", threads=1), Position.start(), trials=36,
                truncate=2)
    assert r.trials == 36 and 0.4 < r.probabilities[0] < 0.6


def _ask(req: dict) -> dict:
    import json

    from engine.cli.protocol import handle_line
    return handle_line(json.dumps(req))


def test_the_protocol_rollout_command():
    r = _ask({"id": 1, "cmd": "rollout", "position": "start", "trials": 36, "truncate": 2})
    assert r["id"] == 1 and r["trials"] == 36
    assert set(r["se"]) >= {"equity", "win", "win_gammon"} and 0.4 < r["probabilities"]["win"]
    c = _ask({"cmd": "rollout", "position": "start", "trials": 36, "truncate": 2,
              "dice": [3, 1], "candidates": 2})
    assert [x["move"] for x in c["candidates"]][0] == "8/5 6/5"
    assert {"position", "move", "equity", "se", "probabilities"} <= set(c["candidates"][1])
    cf = _ask({"cmd": "rollout", "position": "start", "trials": 36, "truncate": 2,
               "cubeful": True, "match": {"length": 5, "score": [1, 2]}})
    assert "cubeful_equity" in cf and "mwc" in cf and "cubeful_equity" in cf["se"]
    cfc = _ask({"cmd": "rollout", "position": "start", "trials": 36, "truncate": 2,
                "dice": [3, 1], "candidates": 2, "cubeful": True,
                "match": {"length": 5, "score": [1, 2]}})
    for x in cfc["candidates"]:        # each candidate as the rollout without dice
        assert {"cubeful_equity", "mwc"} <= set(x) and {"cubeful_equity", "mwc"} <= set(x["se"])
        assert 0.0 <= x["mwc"] <= 1.0
    one = _ask({"id": 3, "cmd": "rollout", "position": "start", "trials": 1, "truncate": 2})
    assert one["trials"] == 1 and one["se"]["equity"] is None, one   # one trial: no se
    one = _ask({"cmd": "rollout", "position": "start", "trials": 1, "truncate": 2,
                "dice": [3, 1], "candidates": 2})
    assert all(x["se"]["equity"] is None for x in one["candidates"]), one
    assert one["candidates"][1]["se_behind"] is None, one
    bad = _ask({"id": 2, "cmd": "rollout", "position": "start", "trials": 0})
    assert bad["error"]["code"] == "invalid" and "trials" in bad["error"]["message"]
    bad = _ask({"cmd": "rollout", "position": "start", "ply": 3})
    assert bad["error"]["code"] == "invalid_ply" and "ply" in bad["error"]["message"]
    bad = _ask({"cmd": "rollout", "position": Position.start("plakoto").to_json(),
                "cubeful": True})
    assert bad["error"]["code"] == "invalid_cube", bad
    pending = {"variant": "gul_bara", "me": [5, 0, 3] + [0] * 14 + [1, 0, 0, 0, 0, 0, 6],
               "them": [11, 1, 1, 1, 0, 0, 0, 0, 0, 1] + [0] * 14, "turns": [23, 24],
               "pending": [4, 5, 5, 5, 5, 6, 6, 6, 6]}
    bad = _ask({"cmd": "rollout", "position": pending, "trials": 36})
    assert '"dice": null' in bad["error"]["message"]


def test_the_analyse_rollout_command_line(capsys):
    from engine.cli.analyse import main
    assert main(["--rollout", "--dice", "31", "--trials", "36", "--truncate", "2",
                 "--candidates", "2"]) == 0
    out = capsys.readouterr().out
    assert "Rollout  8/5 6/5" in out and "36 trials, truncated after 2 rolls" in out
    assert main(["--rollout", "--trials", "36", "--truncate", "2", "--cubeful"]) == 0
    assert "CF " in capsys.readouterr().out


def test_the_analyse_command_line_can_leave_pruning_out(search, capsys):
    """``--no-prune``: the search and a rollout's trials rate every play with the
    network, where by default the pruning network passes each roll's best four to it."""
    import json

    from engine.cli.analyse import main
    pos = json.dumps(_PRUNED_DIFFERS)
    position = Position.from_json(_PRUNED_DIFFERS)
    got = {}
    for flags, prune in (([], True), (["--no-prune"], False)):
        assert main(["--position", pos, "--ply", "1", "--json", *flags]) == 0
        out = json.loads(capsys.readouterr().out)
        want = search.evaluate(position, settings=SearchSettings(ply=1, prune=prune))
        assert out["equity"] == pytest.approx(want.equity, abs=2e-6)
        assert main(["--position", pos, "--rollout", "--trials", "36", "--truncate", "1",
                     "--json", *flags]) == 0
        got[prune] = json.loads(capsys.readouterr().out)
    assert got[True] != got[False]


def test_settings_a_rollout_cannot_honour_are_refused(search):
    """The early stop compares a roll's candidates on cubeless equities: asked of a
    position's rollout or of a cubeful one it would be ignored, so it is refused; so is a
    request whose kept trials would not fit in memory."""
    stop = RolloutSettings(trials=36, truncate=1, stop_sigmas=2.0)
    with pytest.raises(RolloutError, match="stop_sigmas"):
        Rollout(search, stop).position(Position.start())
    with pytest.raises(RolloutError, match="stop_sigmas"):
        Rollout(search, stop).candidates(Position.start(), (3, 1), 2, cube=CubeState())
    big = RolloutSettings(trials=rollout_module.MAX_TRIALS)
    with pytest.raises(RolloutError, match="candidates"):
        Rollout(search, big).candidates(Position.start(), (3, 1), 11)


def test_a_finished_game_has_no_cube_decision_to_roll_out(search):
    """Rollout.cube_decision of a finished game answered 'no_double' with a double/take
    of -2.0 (the loss doubled) where the command line and cube_decision refuse it
    (helper 93's audit)."""
    over = Position.from_json({"variant": "backgammon", "me": [1] + [0] * 23,
                               "them": [0] * 24, "bar": [0, 0], "off": [14, 15]})
    with pytest.raises(RolloutError, match="the game is over"):
        Rollout(search).cube_decision(over, CubeState(), RolloutSettings(trials=3))


@pytest.mark.parametrize("argv", [
    ["--cubeful", "--dice", "31"], ["--trials", "36"], ["--address", "1.2.3.4:1"],
    ["--rollout", "--stop", "2", "--cubeful", "--dice", "31"],
    ["--rollout", "--stop", "2"], ["--rollout", "--candidates", "2"]])
def test_the_command_line_refuses_rollout_options_it_would_ignore(argv, capsys):
    from engine.cli.analyse import main
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and ("--rollout" in err or "--dice" in err or "cubeless" in err)


def test_a_single_trial_prints_no_standard_error(capsys):
    from engine.cli.analyse import main
    assert main(["--rollout", "--dice", "31", "--trials", "1", "--truncate", "1",
                 "--candidates", "2"]) == 0
    out = capsys.readouterr().out
    assert "[n/a]" in out and "nan" not in out


def test_too_many_trials_in_all_are_named_by_their_options(capsys):
    """The limit on candidates times trials read ``--candidates 100 of trials =
    1000000``: the option's name for the first number, the setting's for the second
    (helper 93's audit)."""
    from engine.cli.analyse import main
    assert main(["--rollout", "--dice", "31", "--candidates", "100", "--trials",
                 "1000000", "--json"]) == 2
    err = capsys.readouterr().err
    assert "--candidates 100 of 1,000,000 trials each: at most 10,000,000" in err
    assert "trials = " not in err


def test_a_match_longer_than_the_table_is_refused_before_the_trials(search):
    """A cubeful rollout of a match to 70 failed inside its trials, naming a score the
    user never gave (``away_me = 69 points away``), where the cube analysis names the
    match (helper 93's audit)."""
    from engine.cube.met import MatchError
    long = CubeState(1, "centre", 70, (0, 0))
    with pytest.raises(MatchError, match="match to 70: the table"):
        Rollout(search).position(Position.start(), RolloutSettings(trials=2), cube=long)
    with pytest.raises(MatchError, match="match to 70: the table"):
        Rollout(search).cube_decision(Position.start(), long, RolloutSettings(trials=2))


def test_the_reported_chances_are_chances():
    """Luck-adjusted means can stray below 0 or out of order by their noise; the result
    holds them to 0..1 in the cumulative order, its equity theirs (a 2-trial protocol
    rollout reported lose_backgammon -0.0026: helper 96)."""
    from engine.rules.scoring import equities
    from engine.search.rollout import bounded
    o = bounded(np.array([1.02, 0.5, 0.6, 0.1, -0.003]))
    assert o.tolist() == [1.0, 0.5, 0.5, 0.0, 0.0]
    o = bounded(np.array([0.4, 0.45, 0.01, 0.7, 0.2]))
    assert o.tolist() == pytest.approx([0.4, 0.4, 0.01, 0.6, 0.2])
    search = Search.load("backgammon")
    for seed in range(1, 6):
        r = Rollout(search, RolloutSettings(trials=2, truncate=0, seed=seed)).position(
            Position.start())
        p = np.array(r.probabilities)
        assert (p >= 0).all() and (p <= 1).all() and p[1] <= p[0] and p[4] <= p[3]
        assert r.equity == pytest.approx(float(equities(p)))
