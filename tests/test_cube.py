"""Cube decisions: Janowski money and match equities, the textbook money cases, cube
ownership, the Crawford game and dead cubes, and the ``cube`` / ``met`` protocol."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.cli.protocol import handle_line
from engine.cube.decision import (
    CubeError,
    CubeState,
    analyse_cube,
    answer_double,
    check_probabilities,
    classify,
    cube_decision,
    cube_efficiency,
    is_race,
    match_cubeful_mwc,
    money_answer,
    money_cubeful_equity,
    money_take_point,
    play_value,
)
from engine.cube.met import MatchError, default_table, kazaross_xg2
from engine.errors import PositionError
from engine.rules.position import Position


def probs(win, wg=0.0, wbg=0.0, lg=0.0, lbg=0.0):
    return [win, wg, wbg, lg, lbg]


MONEY = CubeState()


# --------------------------------------------------------------------- money
def test_money_take_points():
    assert money_take_point(1, 1, 0.0) == pytest.approx(0.25)     # dead cube
    assert money_take_point(1, 1, 1.0) == pytest.approx(0.20)     # fully live
    assert money_take_point(1, 1, 0.68) == pytest.approx(0.5 / 2.34)


@pytest.mark.parametrize("p, action", [
    (0.50, "no_double"), (0.62, "no_double"),       # no double, take
    (0.75, "double_take"),
    (0.85, "double_pass"), (0.95, "double_pass"),
])
def test_textbook_money_cases_without_gammons(p, action):
    d = cube_decision(probs(p), MONEY)
    assert d.action == action
    assert d.double_pass == 1.0
    assert d.take_point == pytest.approx(0.5 / 2.34)
    assert d.gammon_price == 0.5


def test_too_good_with_gammons_and_jacoby():
    gammonish = probs(0.90, 0.50)
    assert cube_decision(gammonish, CubeState(jacoby=False)).action == "too_good_pass"
    # the Jacoby rule: gammons do not count on a centred cube, so cash
    assert cube_decision(gammonish, CubeState(jacoby=True)).action == "double_pass"
    # once the cube is owned the Jacoby rule no longer applies
    owned = cube_decision(gammonish, CubeState(2, "me", jacoby=True))
    assert owned.action == "too_good_pass"


def test_take_point_is_where_double_take_meets_double_pass():
    p = probs(0.7, 0.25, 0.02, 0.08, 0.01)
    d = cube_decision(p, MONEY)
    # rescale the winning chance so the opponent sits exactly on his take point,
    # keeping the gammon shares of wins and losses
    w = 1 - d.take_point
    scaled = [w, p[1] / p[0] * w, p[2] / p[0] * w, p[3] / (1 - p[0]) * (1 - w),
              p[4] / (1 - p[0]) * (1 - w)]
    assert cube_decision(scaled, MONEY).double_take == pytest.approx(1.0, abs=1e-9)


def test_money_equity_matches_janowski_by_hand():
    # no gammons, fully live, centred cube: -1 at the take point 0.2, +1 at the cash
    # point 0.8, linear between
    assert money_cubeful_equity(probs(0.5), "centre", 1.0) == pytest.approx(0.0)
    assert money_cubeful_equity(probs(0.65), "centre", 1.0) == pytest.approx(0.5)
    # dead cube: the cubeless equity
    p = probs(0.6, 0.2, 0.0, 0.1, 0.0)
    assert money_cubeful_equity(p, "me", 0.0, jacoby=False) == pytest.approx(0.3)
    # the cube is worth something to its owner and costs the other side
    assert (money_cubeful_equity(p, "me") > money_cubeful_equity(p, "centre", jacoby=False)
            > money_cubeful_equity(p, "them"))


def test_classify():
    assert classify(0.5, 0.4, 1.0) == "no_double"
    assert classify(0.5, 0.7, 1.0) == "double_take"
    assert classify(0.9, 1.2, 1.0) == "double_pass"
    assert classify(1.1, 1.5, 1.0) == "too_good_pass"
    assert classify(1.1, 0.9, 1.0) == "too_good_take"
    # a double/take worth what not doubling is worth is a double: sums that round a few
    # 1e-16 apart said no double at some scores and double at others
    assert classify(0.4 + 2e-16, 0.4, 1.0) == "double_take"
    assert classify(0.4 + 1e-6, 0.4, 1.0) == "no_double"


def test_too_good_needs_a_gammon_to_win():
    """GNU Backgammon is never too good without a gammon to play on for
    (``FindBestCubeDecision``'s ``winGammon``): a no double above the cash with no gammon
    left (a luck-adjusted rollout's mean) is double / pass, or no double, take; nardy
    said too good whatever the gammons."""
    assert classify(1.02, 1.5, 1.0, gammons=False) == "double_pass"
    assert classify(1.02, 0.9, 1.0, gammons=False) == "no_double"
    assert classify(1.02, 1.5, 1.0) == "too_good_pass"
    assert classify(1.02, 0.9, 1.0) == "too_good_take"
    # the rest is as before
    assert classify(0.5, 0.7, 1.0, gammons=False) == "double_take"
    assert classify(0.5, 0.4, 1.0, gammons=False) == "no_double"


# --------------------------------------------------------------------- ownership
def test_cube_ownership_rules():
    assert CubeState().can_double()
    assert CubeState(2, "me").can_double()
    assert not CubeState(2, "them").can_double()
    d = cube_decision(probs(0.9), CubeState(4, "them"))
    assert d.action == "no_double" and d.double_take is None and not d.cube_available
    assert CubeState(2, "me").doubled() == CubeState(4, "them")
    assert CubeState(2, "me", 7, (1, 3)).flip() == CubeState(2, "them", 7, (3, 1))


@pytest.mark.parametrize("kwargs, error", [
    (dict(value=3), CubeError), (dict(value=0), CubeError),
    (dict(owner="nobody", value=2), CubeError), (dict(value=2), CubeError),
    (dict(owner="me"), CubeError),
    (dict(match_length=5, score=(5, 0)), MatchError),
    (dict(match_length=5, score=(2, 2), crawford=True), MatchError),
    (dict(crawford=True), MatchError), (dict(score=(1, 0)), MatchError),
    (dict(jacoby="no"), CubeError), (dict(match_length=5, score=(4, 0), crawford="yes"),
                                     CubeError), (dict(beavers=1), CubeError),
])
def test_invalid_states(kwargs, error):
    with pytest.raises(error):
        CubeState(**kwargs)


# --------------------------------------------------------------------- match play
def test_crawford_game_has_no_cube():
    s = CubeState(1, "centre", 5, (2, 4), crawford=True)
    assert not s.can_double() and not s.post_crawford
    d = cube_decision(probs(0.9), s)
    assert d.action == "no_double" and d.double_take is None
    # the equity is the dead-cube MWC, on the normalised scale
    xg2 = kazaross_xg2()
    # winning leaves 2-away against 1-away after the Crawford game; losing, the match
    mwc = 0.9 * xg2.mwc(2, 1, post_crawford=True) + 0.1 * 0.0
    assert d.mwc["no_double"] == pytest.approx(mwc)


def test_post_crawford():
    leader = CubeState(1, "centre", 5, (4, 2))
    trailer = leader.flip()
    assert leader.post_crawford and trailer.post_crawford
    assert not leader.can_double()           # the leader's cube is dead
    assert trailer.can_double()
    # the trailer doubles at once (3-away vs 1-away), and the leader takes
    for p in (0.3, 0.5, 0.7):
        assert cube_decision(probs(p, 0.1 * p, 0, 0.1 * (1 - p)), trailer).action == \
            "double_take"


def test_a_far_trailer_s_cash_point_after_the_crawford_game():
    """A trailer a-away after the Crawford game cashes where the leader's dead take
    point leaves him: cp = MWC(a - 1 away) / MWC(a - 2 away), so at x = 1 and w < cp his
    MWC is w * MWC(a - 2 away). At 63 and 64 away these MWCs are below 1e-7, and an
    absolute floor on the take point's slope threw the cash point out (cp = 1: no
    double), the no-double equity then off by up to 0.5 on the normalised scale."""
    met = default_table()
    for a in (10, 20, 40, 63, 64):
        expected = 0.3 * met.mwc(a - 2, 1, post_crawford=True)
        got = match_cubeful_mwc(probs(0.3), met, a, 1, efficiency=1.0)
        assert got == pytest.approx(expected, rel=1e-9, abs=0), a


def test_dead_cube_past_the_match_winners_need():
    # 2-away with the cube on 2: winning the game wins the match anyway
    s = CubeState(2, "me", 5, (3, 0))
    assert not s.can_double()
    assert cube_decision(probs(0.95, 0.6), s).action == "no_double"


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 0.99), st.floats(0, 1), st.floats(0, 1), st.integers(1, 9),
       st.integers(1, 9), st.sampled_from([1, 2, 4, 8]), st.booleans())
def test_a_dead_cube_never_doubles(w, gw, gl, a, b, cube, crawford):
    length = 9
    if crawford:
        a, cube = 1, 1
    if b == 1 and crawford:
        crawford = False
    score = (length - a, length - b)
    owner = "centre" if cube == 1 else "me"
    s = CubeState(cube, owner, length, score, crawford)
    p = probs(w, gw * w, 0, gl * (1 - w), 0)
    d = cube_decision(p, s)
    if crawford or a <= cube:
        assert d.action == "no_double" and not d.cube_available


@pytest.mark.parametrize("length, score, cube, owner", [
    (7, (0, 0), 1, "centre"), (7, (4, 0), 1, "centre"), (9, (2, 5), 2, "me"),
])
def test_match_take_point_is_where_double_take_meets_double_pass(length, score, cube, owner):
    p = [0.7, 0.2, 0.01, 0.06, 0.003]
    s = CubeState(cube, owner, length, score)
    d = cube_decision(p, s)
    w = 1 - d.take_point
    scaled = [w, p[1] / p[0] * w, p[2] / p[0] * w, p[3] / (1 - p[0]) * (1 - w),
              p[4] / (1 - p[0]) * (1 - w)]
    assert cube_decision(scaled, s).double_take == pytest.approx(1.0, abs=1e-9)


def test_match_equities_are_on_the_money_scale():
    s = CubeState(1, "centre", 7, (0, 0))
    d = cube_decision(probs(0.8, 0.2, 0, 0.05), s)
    assert d.double_pass == 1.0
    xg2 = kazaross_xg2()
    lo, hi = xg2.after(7, 7, -1), xg2.after(7, 7, 1)
    assert d.mwc["double_pass"] == pytest.approx(hi)
    assert d.no_double == pytest.approx(2 * (d.mwc["no_double"] - lo) / (hi - lo) - 1)
    # a long match behaves almost like money
    long = cube_decision(probs(0.75), CubeState(1, "centre", 25, (0, 0)), table=xg2)
    assert long.action == cube_decision(probs(0.75), MONEY).action == "double_take"


def test_cube_efficiency_zero_gives_the_dead_mwc():
    xg2 = kazaross_xg2()
    p = probs(0.6, 0.15, 0.0, 0.1, 0.0)
    dead = match_cubeful_mwc(p, xg2, 5, 5, 1, "centre", efficiency=0.0)
    assert dead == pytest.approx(0.6 * (0.75 * xg2.mwc(4, 5) + 0.25 * xg2.mwc(3, 5))
                                 + 0.4 * (0.75 * xg2.mwc(5, 4) + 0.25 * xg2.mwc(5, 3)))
    assert match_cubeful_mwc(p, xg2, 5, 5, 1, "me") > dead


def test_cubeful_values_refuse_what_they_cannot_value():
    """An owner of 'x' and an efficiency of 5 gave numbers; a cube of 0 recursed until
    Python stopped it."""
    xg2 = kazaross_xg2()
    p = probs(0.6, 0.15, 0.0, 0.1, 0.0)
    for call in (lambda: money_cubeful_equity(p, "x"),
                 lambda: money_cubeful_equity(p, "centre", 5.0),
                 lambda: money_cubeful_equity(p, "centre", float("nan")),
                 lambda: match_cubeful_mwc(p, xg2, 3, 5, cube=0),
                 lambda: match_cubeful_mwc(p, xg2, 3, 5, cube=3),
                 lambda: match_cubeful_mwc(p, xg2, 3, 5, owner="x")):
        with pytest.raises(CubeError):
            call()


# --------------------------------------------------------------------- positions
def test_efficiency_contact_and_race():
    assert not is_race(Position.start())
    assert cube_efficiency(Position.start()) == 0.68
    race = Position.from_json({"variant": "backgammon",
                               "me": [3, 3, 3, 3, 3] + [0] * 19,
                               "them": [0] * 10 + [15] + [0] * 13})
    assert is_race(race)
    assert cube_efficiency(race) == pytest.approx(0.55 + 0.00125 * 45)
    long_race = Position.from_json({"variant": "backgammon", "me": [0] * 11 + [15] + [0] * 12,
                                    "them": [0] * 10 + [15] + [0] * 13})
    assert is_race(long_race) and cube_efficiency(long_race) == 0.7    # 180 pips: capped
    short = Position.from_json({"variant": "backgammon", "me": [2] + [0] * 23,
                                "them": [0] * 10 + [15] + [0] * 13, "off": [13, 0]})
    assert cube_efficiency(short) == 0.6                                 # 2 pips: floored


def test_a_bear_off_has_gnu_backgammon_s_bear_off_efficiency():
    """Both sides bearing off (GNU Backgammon's one-sided bear-off class) take its 0.6
    whatever the pips; the race formula gave the side on roll's 57 pips 0.62125. GNU
    Backgammon 1.07 at 0-ply (d7cNAADb7g4AAA), its cubeless 47.8178%: no double
    -0.061102, double/take -0.400381 for money; -0.102783 and -0.715971 at 5-away
    against 4-away (helper 99's audit)."""
    pos = Position("backgammon", (2, 2, 2, 3, 3, 3) + (0,) * 18,
                   (3, 3, 3, 2, 2, 2) + (0,) * 18)
    assert pos.pip_counts() == (57, 48) and cube_efficiency(pos) == 0.6
    p = probs(0.478178, 0.0, 0.0, 0.0, 0.0)
    for state, nd, dt in ((CubeState(), -0.061102, -0.400381),
                          (CubeState(1, "centre", 7, (2, 3)), -0.102783, -0.715971)):
        d = cube_decision(p, state, cube_efficiency(pos))
        assert d.action == "no_double"
        assert d.no_double == pytest.approx(nd, abs=2e-6)
        assert d.double_take == pytest.approx(dt, abs=2e-6)
    off = Position("backgammon", (2, 2, 2, 3, 3, 3) + (0,) * 18,
                   (3, 3, 3, 2, 2, 1, 1) + (0,) * 17)          # one checker still out
    assert cube_efficiency(off) == pytest.approx(0.55 + 0.00125 * 57)



def _fixed(p):
    return lambda position, ply: np.array(p)


def test_analyse_cube_and_its_errors():
    d = analyse_cube(Position.start(), MONEY, _fixed(probs(0.75)))
    assert d.action == "double_take" and d.efficiency == 0.68
    with pytest.raises(CubeError, match="long_nardy"):
        analyse_cube(Position.start("long_nardy"), MONEY, _fixed(probs(0.5)))
    with pytest.raises(CubeError):
        check_probabilities([0.5, 0.6, 0, 0, 0], strict=True)   # gammons above wins
    with pytest.raises(CubeError):
        cube_decision([0.5, 1.6, 0, 0, 0], MONEY)
    # network outputs out of order are clipped into order, not refused
    assert list(check_probabilities([0.5, 0.6, 0.7, 0.6, 0.7])) == [0.5, 0.5, 0.5, 0.5, 0.5]
    with pytest.raises(MatchError):
        analyse_cube(Position.start(), CubeState(1, "centre", 65, (0, 0)),
                     _fixed(probs(0.5)))


def test_analyse_cube_with_a_network():
    from engine.cube.decision import network_probability_fn
    from engine.eval.network import Network
    net = Network.create("backgammon", 8, rng=np.random.default_rng(1))
    state = CubeState(1, "centre", 5, (1, 3))
    d = analyse_cube(Position.start(), state, network_probability_fn(net))
    want = cube_decision(net.probabilities([Position.start()])[0], state,
                         cube_efficiency(Position.start()))
    assert d.action == want.action and d.no_double == pytest.approx(want.no_double)
    np.testing.assert_allclose(d.probabilities, check_probabilities(
        net.probabilities([Position.start()])[0]), atol=1e-6)
    with pytest.raises(CubeError):
        analyse_cube(Position.start(), MONEY, network_probability_fn(net), ply=2)


# --------------------------------------------------------------------- protocol
def _ask(req):
    return handle_line(json.dumps(req))


def test_protocol_met():
    r = _ask({"id": 7, "cmd": "met", "length": 2})
    assert r["id"] == 7
    assert r["pre_crawford"] == [[0.5, 0.67736], [0.32264, 0.5]]
    assert r["post_crawford"] == [0.5, 0.48803]
    assert "Kazaross" in r["name"]
    assert _ask({"cmd": "met", "length": 99})["error"]["code"] == "invalid_match"
    longest = _ask({"cmd": "met", "length": 64})      # extended as GNU Backgammon's
    assert len(longest["pre_crawford"]) == 64 and len(longest["post_crawford"]) == 64
    assert _ask({"cmd": "met", "length": 65})["error"]["code"] == "invalid_match"
    assert _ask({"cmd": "met"})["error"]["code"] == "missing_field"
    assert _ask({"cmd": "met", "length": None})["error"]["code"] == "invalid_match"
    g = _ask({"cmd": "met", "length": 3, "gammon_rate": 0.2})
    assert g["pre_crawford"][2][2] == 0.5


def test_protocol_cube(monkeypatch):
    from engine.cli import cube as cube_cli
    monkeypatch.setattr(cube_cli, "model_probability_fn",
                        lambda model=None: _fixed(probs(0.75)))
    r = _ask({"id": 1, "cmd": "cube", "position": "4HPwATDgc/ABMA",
              "cube": {"value": 1, "owner": "centre"}, "match": None, "jacoby": True})
    assert r["action"] == "double_take"
    assert r["equities"]["double_pass"] == 1.0
    assert set(r["equities"]) == {"no_double", "double_take", "double_pass"}
    assert r["take_point"] == pytest.approx(0.5 / 2.34)
    assert r["gammon_price"] == 0.5
    crawford = _ask({"cmd": "cube", "position": "4HPwATDgc/ABMA",
                     "cube": {"value": 1, "owner": "centre"},
                     "match": {"length": 5, "score": [2, 4], "crawford": True}})
    assert crawford["action"] == "no_double" and crawford["equities"]["double_take"] is None
    bad = {"position": "4HPwATDgc/ABMA", "cmd": "cube"}
    assert _ask({**bad, "cube": {"value": 3, "owner": "me"}})["error"]["code"] == \
        "invalid_cube"
    assert _ask({**bad, "cube": {"value": 2, "owner": "us"}})["error"]["code"] == \
        "invalid_cube"
    assert _ask({**bad, "match": {"length": 5, "score": [5, 1]}})["error"]["code"] == \
        "invalid_match"
    assert _ask({**bad, "match": {"score": [1, 1]}})["error"]["code"] == "missing_field"
    assert _ask({**bad, "ply": 7})["error"]["code"] == "invalid_ply"
    assert _ask({"cmd": "cube"})["error"]["code"] == "missing_field"


def test_a_short_bear_off_in_money_play_is_decided_exactly():
    """Both sides home with six checkers or fewer: the two-sided bear-off table's money
    equities (engine.eval.bearoff), whatever the probabilities' model says; in a match,
    the model still (at the efficiencies the table implies)."""
    from engine.cli import _decide
    from engine.eval import bearoff
    from engine.notation.gnubg_id import position_id
    db = bearoff.load()
    for literal, action in (("x 6:1; o 6:1", "double_pass"),
                            ("x 5:1 4:1; o 6:1 1:1", "double_take"),
                            ("x 6:2; o 2:2", "no_double")):
        pos = Position.from_literal(literal)
        nd, dt = db.money_cube(pos, "centre")
        r = _ask({"cmd": "cube", "position": position_id(pos)})
        assert r["action"] == action, literal
        assert r["equities"] == pytest.approx({"no_double": nd, "double_take": dt,
                                               "double_pass": 1.0}, abs=1e-12)
        owned = _ask({"cmd": "cube", "position": position_id(pos),
                      "cube": {"value": 2, "owner": "me"}})
        assert owned["equities"]["no_double"] == pytest.approx(
            db.money_cube(pos, "me")[0], abs=1e-12)
    pos = Position.from_literal("x 5:1 4:1; o 6:1 1:1")
    search = _decide.search_for("backgammon")
    money = CubeState()
    answer = _decide.answer(search, pos, money, 0)
    assert answer.answer == "take"
    assert answer.double_take == pytest.approx(db.money_cube(pos, "centre")[1], abs=1e-12)
    assert _decide.answer(search, Position.from_literal("x 6:1; o 6:1"), money,
                          0).answer == "pass"
    # plays into a short bear-off ranked by their exact value: minus the opponent's
    # under his proper cube action
    ranked = _decide.rank_cubefully(search, Position.from_literal("x 6:2 5:1; o 6:1 1:1"),
                                    (2, 1), 0, money)
    for c in ranked.candidates:
        nd, dt = db.money_cube(c.position, "centre")
        assert c.cubeful_equity == pytest.approx(-max(nd, min(dt, 1.0)), abs=1e-12)
    assert [c.cubeful_equity for c in ranked.candidates] == sorted(
        (c.cubeful_equity for c in ranked.candidates), reverse=True)
    # the game loop's cube policy (the web board's and the terminal game's engine)
    from engine.play.match import DecisionCubePolicy
    policy = DecisionCubePolicy(_fixed(probs(0.5)))
    assert policy.decide(Position.from_literal("x 6:1; o 6:1"), money).action == "double_pass"
    assert policy.double(pos, money) and policy.take(pos, money)
    match = _ask({"cmd": "cube", "position": position_id(pos),
                  "match": {"length": 7, "score": [0, 0]}})
    from engine.search.bearoff_cube import match_efficiencies
    seven = CubeState(1, "centre", 7, (0, 0))
    x, taken = match_efficiencies(pos, seven)
    model = cube_decision(db.probabilities(pos), seven, x, double_efficiency=taken)
    assert match["equities"]["no_double"] == pytest.approx(model.no_double, abs=1e-12)
    assert match["equities"]["no_double"] != pytest.approx(
        db.money_cube(pos, "centre")[0], abs=1e-4)


def test_an_xgid_s_usual_max_cube_keeps_a_short_bear_off_exact():
    """An XGID always carries a max cube (XG writes 10: 1024), and a cube with any
    maximum was decided by the model: the same race as a GNU Backgammon ID got the
    exact equities, as an XGID Janowski's (no double 0.50 where it is 0.38). Five or
    more doubles left change no equity by more than 1e-4 (a cube of 4 under the usual
    1024 was still the model's); a max cube of 8 does."""
    from engine.eval import bearoff
    from engine.notation.xgid import XgidInfo, format_xgid
    pos = Position.from_literal("x 5:1 4:1; o 6:1 1:1")
    nd, dt = bearoff.load().money_cube(pos, "centre")
    for info, exact in ((XgidInfo(), True), (XgidInfo(max_cube=512), True),
                        (XgidInfo(cube_value=2, cube_owner="me"), True),
                        (XgidInfo(cube_value=32, cube_owner="me"), True),
                        (XgidInfo(max_cube=8), False)):
        r = _ask({"cmd": "cube", "position": format_xgid(pos, info)})
        got = r["equities"]["no_double"]
        if info.cube_owner == "me":
            assert (got == pytest.approx(bearoff.load().money_cube(pos, "me")[0],
                                         abs=1e-12)), info
        elif exact:
            assert r["equities"] == pytest.approx({"no_double": nd, "double_take": dt,
                                                   "double_pass": 1.0}, abs=1e-12), info
        else:
            assert got != pytest.approx(nd, abs=1e-3), info


def test_protocol_cube_and_match_objects_refuse_unknown_fields():
    # a misspelt field was ignored: {"Crawford": true} analysed a non-Crawford game
    bad = {"position": "4HPwATDgc/ABMA", "cmd": "cube"}
    for cmd in ({}, {"cmd": "best", "dice": [3, 1]}):
        r = _ask({**bad, **cmd, "match": {"length": 5, "score": [4, 0], "Crawford": True}})
        assert r["error"]["code"] == "invalid_match"
        assert "'Crawford'" in r["error"]["message"] and "crawford" in r["error"]["message"]
        r = _ask({**bad, **cmd, "match": None, "cube": {"value": 2, "owner": "me", "mx": 2}})
        assert r["error"]["code"] == "invalid_cube" and "'mx'" in r["error"]["message"]


def test_protocol_cube_reads_the_match_id(monkeypatch):
    from engine.cli import cube as cube_cli
    from engine.notation.gnubg_id import MatchInfo, match_id
    monkeypatch.setattr(cube_cli, "model_probability_fn",
                        lambda model=None: _fixed(probs(0.75)))
    mid = match_id(MatchInfo(cube_value=2, cube_owner="them", match_length=7,
                             score=(1, 3)))
    r = _ask({"cmd": "cube", "position": f"4HPwATDgc/ABMA:{mid}"})
    assert r["action"] == "no_double" and r["equities"]["double_take"] is None
    assert "mwc" in r


def test_cli_text_and_json(capsys):
    from engine.cli.cube import main
    assert main(["--position", "4HPwATDgc/ABMA", "--probabilities", "0.75,0,0,0,0"]) == 0
    out = capsys.readouterr().out
    assert "1. Double, take" in out and "Proper cube action: Double, take" in out
    assert main(["--position", "4HPwATDgc/ABMA", "--probabilities", "0.6,0.1,0,0.05,0",
                 "--match", "7", "--score", "2,6", "--crawford", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["action"] == "no_double" and not j["cube_available"]
    assert main(["--position", "4HPwATDgc/ABMA", "--probabilities", "0.6,0,0,0,0",
                 "--score", "1,2"]) == 2
    capsys.readouterr()
    # an ID whose dice are rolled: the decision before that roll, and a note saying so
    assert main(["--position", "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10",
                 "--probabilities", "0.6,0,0,0,0"]) == 0
    out, err = capsys.readouterr()
    assert "dice 3-1 are rolled" in err and "Proper cube action" in out
    # options that would be ignored are errors that name them
    probs = ["--probabilities", "0.6,0.1,0,0.05,0"]
    for extra, said in ((["--match", "5", "--jacoby"], "the Jacoby rule is a money-play"),
                        (["--match", "0", "--score", "1,1"], "--score / --crawford need a"),
                        (["--match", "0", "--crawford"], "--score / --crawford need a"),
                        (["--ply", "2"], "--ply 2 with --probabilities"),
                        (["--model", "/none.npz"], "--model /none.npz with --probabilities")):
        assert main(["--position", "4HPwATDgc/ABMA", *probs, *extra]) == 2, extra
        assert said in capsys.readouterr().err
    # a new match length keeps the score the ID holds
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:2:1:0:5:10"
    assert main(["--position", xgid, *probs, "--match", "7"]) == 0
    assert "Match to 7, score 2-1" in capsys.readouterr().out


def test_cli_words_the_proper_action_as_gnubg(capsys):
    """The proper action in GNU Backgammon 1.07's words (``hint`` at 0-ply, its chances
    given): a cube the side on roll owns is redoubled, and a double worth what not
    doubling is worth is optional, not doubling then listed first; nardy said "Too good
    to double, pass", "No double, beaver" and "Double, take"."""
    from engine.cli.cube import main
    # money, cube 2 owned: gnubg "Too good to redouble, pass (11.1%)"
    assert main(["--position", "3MzgA0Af24MQAA", "--cube-value", "2", "--cube-owner", "me",
                 "--probabilities", "0.810788,0.328074,0.000394,0.01546,0"]) == 0
    assert "Proper cube action: Too good to redouble, pass" in capsys.readouterr().out
    # the opening position, cube 2 owned, beavers: gnubg "No redouble, beaver (36.6%)"
    assert main(["--position", "4HPwATDgc/ABMA", "--cube-value", "2", "--cube-owner", "me",
                 "--beavers", "--probabilities",
                 "0.521514,0.153921,0.007563,0.129847,0.007546"]) == 0
    assert "Proper cube action: No redouble, beaver" in capsys.readouterr().out
    # a sure loss of the trailer after the Crawford game: no double and double / take
    # both -1; gnubg "Optional double, take", no double listed first
    assert main(["--position", "CwAAUF8bAAAAAA", "--match", "5", "--score", "1,4",
                 "--probabilities", "0,0,0,0,0"]) == 0
    out = capsys.readouterr().out
    assert "Proper cube action: Optional double, take" in out
    assert "1. No double      -1.000\n2. Double, pass   +1.000" in out


@pytest.mark.parametrize("action, nd, dt, state, gammons, text", [
    # gnubg 3zkHAAFvewAAAA at 9-away 9-away, cube 8 owned: "Optional redouble, pass"
    ("double_pass", 0.999993, 1.124446, CubeState(8, "me", 11, (2, 2)), True,
     "Optional redouble, pass"),
    # a cash worth playing on is optional only with a gammon that counts
    ("double_pass", 1.0, 1.5, CubeState(2, "me"), False, "Redouble, pass"),
    ("double_pass", 1.0, 4.0, CubeState(), True, "Double, pass"),          # Jacoby
    ("double_pass", 1.0, 4.0, CubeState(jacoby=False), True, "Optional double, pass"),
    ("double_take", 0.5, 0.6, CubeState(2, "me"), True, "Redouble, take"),
    ("no_double", 0.5, 0.4, CubeState(2, "me"), True, "No redouble, take"),
    ("too_good_take", 1.1, 0.9, CubeState(2, "me"), True, "Too good to redouble, take"),
    ("too_good_pass", 1.1, 1.5, CubeState(), True, "Too good to double, pass"),
    # GNU Backgammon has no redouble with a beaver
    ("double_beaver", -0.1, -0.04, CubeState(2, "me", beavers=True), True, "Double, beaver"),
    ("double_beaver", -0.1, -0.1, CubeState(beavers=True), True, "Optional double, beaver"),
    ("no_double_beaver", -0.1, -0.06, CubeState(2, "me", beavers=True), True,
     "No double, beaver"),
    ("no_double_beaver", 0.24, -0.19, CubeState(2, "me", beavers=True), True,
     "No redouble, beaver"),
])
def test_the_proper_action_in_gnubg_words(action, nd, dt, state, gammons, text):
    from engine.cli.cube import action_text
    assert action_text(action, nd, dt, state, gammons) == text


def test_cli_rolls_a_cube_decision_out(capsys):
    """--rollout: the two lines with their standard errors and the action; rollout
    options without it, and cube-analysis options with it, are refused by name."""
    from engine.cli.cube import main
    assert main(["--position", "4HPwATDgc/ABMA", "--rollout", "--trials", "36",
                 "--truncate", "2"]) == 0
    out = capsys.readouterr().out
    assert "Cube decision rollout: 36 trials a line, truncated after 2 rolls" in out
    assert "No double" in out and "Double, take" in out and "[0." in out
    assert "Proper cube action: No double, take" in out
    assert main(["--position", "4HPwATDgc/ABMA", "--match", "5", "--score", "1,3",
                 "--rollout", "--trials", "36", "--truncate", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["equities"]) == {"no_double", "double_take", "double_pass"}
    assert data["trials"] == 36 and "mwc" in data and data["se"]["difference"] > 0
    for argv, words in ((["--trials", "36"], "--trials: rollout option(s); add --rollout"),
                        (["--rollout", "--ply", "1"], "--ply with --rollout")):
        with pytest.raises(SystemExit):
            main(["--position", "4HPwATDgc/ABMA", *argv])
        assert words in capsys.readouterr().err
    assert main(["--position", "4HPwATDgc/ABMA", "--rollout", "--trials", "0"]) == 2
    assert "--trials 0: expected an integer" in capsys.readouterr().err
    assert main(["--position", "4HPwATDgc/ABMA", "--rollout", "--cube-owner", "them",
                 "--cube-value", "2"]) == 2
    assert "may not double" in capsys.readouterr().err
    assert main(["--position", "4HPwATDgc/ABMA", "--ply", "9"]) == 2    # not a rollout's
    assert "error: ply = 9: expected an integer 0..3" in capsys.readouterr().err
    assert main(["--position", "4HPwATDgc/ABMA", "--rollout", "--rollout-ply", "3"]) == 2
    assert "--rollout-ply 3: expected an integer 0..2" in capsys.readouterr().err


def test_cli_answers_a_double_an_xgid_or_a_rollout_says_is_offered(capsys):
    """An XGID's D (a double on offer) was not read as one (only a Match ID's flag was),
    and the rolled-out answer to an offered double said Pass where the action was a
    beaver."""
    from engine.cli.cube import main
    from engine.notation.parse import parse_position
    from engine.notation.xgid import XgidInfo, format_xgid
    pos = parse_position("JAAAAIgAAAAAAA:MBkAAAAAAAAA")[0]
    assert main(["--position", format_xgid(pos, XgidInfo(cube_action="double"))]) == 0
    assert "Double offered: the proper response is" in capsys.readouterr().out
    assert main(["--position", "JAAAAIgAAAAAAA:MBkAAAAAAAAA", "--beavers", "--rollout",
                 "--trials", "72", "--truncate", "2"]) == 0
    out = capsys.readouterr().out
    assert "Proper cube action: No double, beaver" in out
    assert "the proper response is Beaver" in out


def test_cli_answers_a_double_the_id_says_is_offered(capsys):
    """A Match ID with a double offered got the doubler's analysis alone, and one whose
    side on roll may not double was analysed as if no double were offered."""
    from engine.cli.cube import main
    from engine.notation.gnubg_id import MatchInfo, match_id
    offered = match_id(MatchInfo(doubled=True, turn=1, match_length=5, score=(1, 2)))
    for probs, answer in (("0.6,0,0,0,0", "Take"), ("0.9,0,0,0,0", "Pass")):
        assert main(["--position", f"4HPwATDgc/ABMA:{offered}", "--probabilities",
                     probs]) == 0
        out = capsys.readouterr().out
        assert f"Double offered: the proper response is {answer} (taking" in out
    assert main(["--position", "4HPwATDgc/ABMA", "--probabilities", "0.6,0,0,0,0"]) == 0
    assert "Double offered" not in capsys.readouterr().out
    owned = match_id(MatchInfo(cube_value=2, cube_owner="them", doubled=True, turn=1))
    assert main(["--position", f"4HPwATDgc/ABMA:{owned}", "--probabilities",
                 "0.6,0,0,0,0"]) == 2
    assert "holds a double offered by the side that does not own the cube" \
        in capsys.readouterr().err


def test_a_cube_at_its_maximum_is_dead():
    """An XGID's max cube was dropped: a cube at it was doubled ("too good", "double,
    take") and valued as a live cube."""
    p = [0.75, 0.0, 0.0, 0.0, 0.0]
    at_max = CubeState(8, "me", max_value=8)
    assert at_max.at_max and not at_max.can_double()
    d = cube_decision(p, at_max)
    assert d.action == "no_double" and not d.cube_available
    assert d.no_double == pytest.approx(money_cubeful_equity(p, "me", 0.0))   # dead: 0.5
    below = CubeState(4, "me", max_value=8)
    assert below.can_double() and below.doubled().max_value == 8
    assert below.flip().max_value == 8 and below.doubled().at_max
    # the taker's cube at 8 is dead: the take is worth the cubeless 2 x 0.5
    assert cube_decision(p, below).double_take == pytest.approx(1.0)
    assert cube_decision(p, CubeState(4, "me")).double_take < 1.0
    assert answer_double(p, below).double_take == pytest.approx(1.0)
    with pytest.raises(CubeError, match="a double of a cube at its maximum value, 8"):
        answer_double(p, at_max)
    match_max = CubeState(2, "me", 9, (0, 0), max_value=2)
    assert cube_decision(p, match_max).action == "no_double"
    for bad in (3, 4, True, "8"):                # not a power of two at least the cube
        with pytest.raises(CubeError, match="max cube value"):
            CubeState(8, "me", max_value=bad)


def test_a_cube_is_never_turned_above_the_limit():
    """A cube of 2**62 sent to a cubeful rollout overflowed its trials' 64-bit values on
    a redouble, and 2**70 crashed it (an OverflowError as an internal error)."""
    from engine.cube.decision import CUBE_LIMIT
    from engine.play.game import CubeRules
    top = CubeState(CUBE_LIMIT, "me")
    assert top.at_max and not top.can_double()
    assert CubeState(CUBE_LIMIT // 2, "me").can_double()
    with pytest.raises(CubeError, match="expected a power of two 1 .. 2\\*\\*30"):
        CubeState(2 * CUBE_LIMIT, "me")
    assert not CubeRules(policies=()).allows(2 * CUBE_LIMIT)


def test_the_match_cube_stops_at_64():
    """RULES.md: "Cube: 2, 4, 8, ... 64 (higher allowed in money play)". A match over 64
    points turned the cube past 64."""
    from engine.cube.decision import MATCH_CUBE_LIMIT
    assert MATCH_CUBE_LIMIT == 64
    long_match = CubeState(64, "me", 201, (0, 0))
    assert long_match.at_max and not long_match.can_double()
    assert CubeState(32, "me", 201, (0, 0)).can_double()
    assert CubeState(64, "me").can_double()                      # money play
    with pytest.raises(MatchError, match="cube value 128 in match play"):
        CubeState(128, "me", 201, (0, 0))
    for value in (2**62, 2**70):
        r = _ask({"cmd": "rollout", "position": "start", "trials": 36, "truncate": 1,
                  "cubeful": True, "cube": {"value": value, "owner": "me"}})
        assert r["error"]["code"] == "invalid_cube" and str(value) in r["error"]["message"]


def test_an_xgid_max_cube_reaches_the_cube_advice(capsys, monkeypatch):
    from engine.cli import cube as cube_cli
    from engine.cli.cube import main
    at_max = "XGID=-b----E-C---eE---c-e----B-:3:1:1:00:0:0:0:0:3"      # cube 8, max 8
    assert main(["--position", at_max, "--probabilities", "0.75,0,0,0,0"]) == 0
    out = capsys.readouterr().out
    assert "No cube action: the cube is at its maximum value, 8." in out
    below = "XGID=-b----E-C---eE---c-e----B-:2:1:1:00:0:0:0:0:3"       # cube 4, max 8
    assert main(["--position", below, "--probabilities", "0.75,0,0,0,0"]) == 0
    # (the side on roll owns the cube: GNU Backgammon's word is redouble)
    assert "Proper cube action: Redouble, pass" in capsys.readouterr().out
    monkeypatch.setattr(cube_cli, "model_probability_fn",
                        lambda model=None: _fixed(probs(0.75)))
    r = _ask({"cmd": "cube", "position": at_max})
    assert not r["cube_available"] and r["equities"]["no_double"] == pytest.approx(0.5)
    assert _ask({"cmd": "cube", "position": below})["action"] == "double_pass"


def test_a_cube_above_the_xgid_s_max_cube_says_so(capsys):
    """--cube-value 16 on an XGID whose max cube is 8 was "max cube value 8: expected
    None or a power of two from the cube's value 16 ...": the user's value and the
    XGID's max, said the other way round."""
    from engine.cli.cube import main
    max8 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:3"
    assert main(["--position", max8, "--cube-value", "16",
                 "--probabilities", "0.75,0,0,0,0"]) == 2
    err = capsys.readouterr().err
    assert "--cube-value 16 is above the XGID's max cube 8 (its last field, 3)" in err
    assert "None" not in err and err.count("\n") == 1
    r = _ask({"cmd": "cube", "position": max8, "cube": {"value": 16, "owner": "me"}})
    assert r["error"]["code"] == "invalid_cube"
    assert r["error"]["message"].startswith("cube value 16 is above the XGID's max cube 8")
    r = _ask({"cmd": "cube", "position": "4HPwATDgc/ABMA",
              "cube": {"value": 16, "owner": "me", "max": 8}})
    assert r["error"]["code"] == "invalid_cube"
    assert r["error"]["message"].startswith("max cube 8 is below the cube value 16")


def test_a_new_match_length_says_which_score_it_keeps(capsys):
    """--match 5 on an ID of a 9-point match kept its score without a word, and the
    ID's own length dropped its Crawford flag (the Crawford game read as post-Crawford)."""
    from engine.cli.cube import main
    probs_ = ["--probabilities", "0.7,0.2,0,0.05,0"]
    at_4_2 = "4HPwATDgc/ABMA:MAEgAUAAEAAA"               # match to 9, score 4-2
    assert main(["--position", at_4_2, *probs_, "--match", "5"]) == 0
    out, err = capsys.readouterr()
    assert "Match to 5, score 4-2" in out
    assert "note: --match 5 keeps the ID's score 4-2 (from its match to 9)" in err
    assert main(["--position", at_4_2, *probs_, "--match", "5", "--score", "1,1"]) == 0
    out, err = capsys.readouterr()
    assert "Match to 5, score 1-1" in out and err == ""
    assert main(["--position", at_4_2, *probs_, "--match", "9"]) == 0   # its own length
    assert capsys.readouterr().err == ""
    at_6_2 = "4HPwATDgc/ABMA:MAEgAWAAEAAA"               # match to 9, score 6-2
    assert main(["--position", at_6_2, *probs_, "--match", "5"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and ("error: --match 5: the ID's score 6-2 (from its match to 9) "
                          "does not fit a match to 5 (each score 0 .. 4); give --score") in err
    crawford = "4HPwATDgc/ABMA:sAEgAYAAKAAA"             # match to 9, 8-5, Crawford game
    assert main(["--position", crawford, *probs_, "--match", "9"]) == 0
    assert "Crawford game" in capsys.readouterr().out
    assert main(["--position", crawford, *probs_, "--match", "11"]) == 0
    out, err = capsys.readouterr()
    assert "Match to 11, score 8-5" in out and "its Crawford flag is not" in err


def test_a_value_that_starts_with_a_dash_reaches_the_cube_cli_s_check(capsys):
    """--score -1,0 stopped in argparse ("expected one argument"), where --score=-1,0
    got the score's own error."""
    from engine.cli.cube import main
    for flags, said in ((["--match", "5", "--score", "-1,0"], "score '-1,0': expected two"),
                        (["--probabilities", "-.5,.1,0,.1,0"], "probabilities [-0.5,"),
                        (["--probabilities", ".5,.1,0,.1,0", "--efficiency", "-1e-3"],
                         "cube efficiency -0.001")):
        assert main(["--position", "4HPwATDgc/ABMA", *flags]) == 2, flags
        err = capsys.readouterr().err
        assert said in err and "expected one argument" not in err, err


# --------------------------------------------------------------------- beavers
def test_beaver_classification_follows_gnubg():
    # the taker would stand at or above zero after taking: a beaver, when allowed
    assert classify(-0.05, -0.1, 1.0, beavers=True) == "no_double_beaver"
    assert classify(-0.05, -0.1, 1.0) == "no_double"
    # doubling beats not doubling (the Jacoby paradox): double, beaver while the
    # beavered cube (twice the take) still beats not doubling, else no double
    assert classify(-0.1, -0.04, 1.0, beavers=True) == "double_beaver"
    assert classify(-0.1, -0.04, 1.0) == "double_take"
    assert classify(-0.1, -0.06, 1.0, beavers=True) == "no_double_beaver"
    # a take that leaves the doubler ahead is never beavered
    assert classify(0.2, 0.4, 1.0, beavers=True) == "double_take"
    assert classify(0.6, 0.4, 1.0, beavers=True) == "no_double"
    assert classify(0.5, 1.2, 1.0, beavers=True) == "double_pass"


def test_beavers_from_probabilities_and_only_for_money():
    underdog = probs(0.4, 0.05, 0.0, 0.08, 0.0)
    plain = cube_decision(underdog, MONEY)
    beaver = cube_decision(underdog, CubeState(beavers=True))
    assert plain.action == "no_double" and plain.double_take < 0
    assert beaver.action == "no_double_beaver" and beaver.takes and beaver.beavers
    assert beaver.no_double == plain.no_double and beaver.double_take == plain.double_take
    # a favourite's take is no beaver
    assert cube_decision(probs(0.75), CubeState(beavers=True)).action == "double_take"
    assert CubeState(beavers=True).doubled().beavers
    with pytest.raises(MatchError, match="beavers"):
        CubeState(match_length=5, beavers=True)


def test_protocol_cube_beavers(monkeypatch):
    from engine.cli import cube as cube_cli
    monkeypatch.setattr(cube_cli, "model_probability_fn",
                        lambda model=None: _fixed(probs(0.4, 0.05, 0.0, 0.08, 0.0)))
    base = {"cmd": "cube", "position": "4HPwATDgc/ABMA"}
    assert _ask(base)["action"] == "no_double"
    assert _ask({**base, "beavers": True})["action"] == "no_double_beaver"
    assert _ask({**base, "beavers": 1})["error"]["code"] == "invalid_cube"
    match = {**base, "beavers": True, "match": {"length": 5, "score": [0, 0]}}
    assert _ask(match)["error"]["code"] == "invalid_match"
    # an XGID's beaver flag (rules field bit 2) alone does not turn beavers on: the
    # protocol's actions are five, and a beaver is none of them
    from engine.notation.xgid import XgidInfo, format_xgid
    xgid = format_xgid(Position.start(), XgidInfo(beaver=True))
    assert _ask({"cmd": "cube", "position": xgid})["action"] == "no_double"
    assert _ask({"cmd": "cube", "position": xgid, "beavers": True})["action"] == \
        "no_double_beaver"
    # the Jacoby rule is money play's: a match leaves it aside, as the spec's
    # "money only" says, where it was refused
    jm = {**base, "match": {"length": 5, "score": [0, 0]}}
    assert _ask({**jm, "jacoby": True}) == _ask(jm)


@settings(max_examples=200, deadline=None)
@given(w=st.floats(0.02, 0.98), gw=st.floats(0, 1), gl=st.floats(0, 1),
       match=st.sampled_from([None, (7, 0, 0), (5, 2, 3), (9, 6, 1)]),
       beavers=st.booleans())
def test_answer_double_agrees_with_the_cube_decision(w, gw, gl, match, beavers):
    """Where the side on roll may double, the answer is the cube decision's take or pass
    (and its beaver): the same equities, the same rule."""
    p = probs(w, gw * w, 0.0, gl * (1 - w), 0.0)
    if match is None:
        state = CubeState(beavers=beavers)
    else:
        length, a, b = match
        state = CubeState(match_length=length, score=(a, b))
    d = cube_decision(p, state)
    ans = answer_double(p, state)
    assert ans.double_take == pytest.approx(d.double_take)
    want = "beaver" if d.beavers else ("take" if d.takes else "pass")
    assert ans.answer == want
    assert (ans.mwc is None) == (match is None)


def test_answer_double_of_a_dead_cube_and_its_errors():
    # the doubler, 2-away holding a 2-cube, has a dead cube; his double is answered all
    # the same, and a pass would lose the taker the match: he takes
    state = CubeState(2, "me", 5, (3, 1))
    assert not state.can_double()
    assert answer_double(probs(0.9), state).answer == "take"
    assert answer_double(probs(0.3), state).answer == "take"
    with pytest.raises(CubeError, match="owns"):
        answer_double(probs(0.5), CubeState(2, "them"))
    with pytest.raises(CubeError, match="Crawford"):
        answer_double(probs(0.5), CubeState(match_length=5, score=(4, 1), crawford=True))


def test_a_tie_of_playing_on_and_cashing_is_a_double_and_pass():
    """No double equal to double/pass was "too good": playing on gains nothing there,
    and GNU Backgammon doubles (a certain win without gammons was "too good, pass")."""
    from engine.cube.decision import classify
    assert classify(1.0, 2.0, 1.0) == "double_pass"
    assert classify(1.2, 2.0, 1.0) == "too_good_pass"
    assert cube_decision(probs(1.0, 0.0, 0.0, 0.0, 0.0)).action == "double_pass"
    # a tie that rounds: the trailer 2-away after the Crawford game, a dead cube (x = 0),
    # 80% with a quarter gammons: no double is 0.8 (3/4 x 0.5 + 1/4) = 0.5, the cash,
    # summed 1e-16 above it ("too good, pass")
    d = cube_decision(probs(0.8, 0.2, 0.02, 0.04, 0.0025), CubeState(1, "centre", 5, (3, 4)),
                      0.0)
    assert d.mwc["no_double"] == pytest.approx(d.mwc["double_pass"], abs=1e-15)
    assert d.action == "double_pass"
    assert classify(1.0 + 4e-16, 2.0, 1.0) == "double_pass"
    assert classify(1.0 + 4e-16, 0.5, 1.0) == "no_double"


@pytest.mark.parametrize("pid, state, action, dt", [
    # money, last roll at 52.8%: double, take; no double 2p - 1, double/take twice that
    ("AQAAiAAAAAAAAA", CubeState(), "double_take", 0.111),
    # 3-point match at 1-0 (2-away against 3-away), the same roll: the taker's redouble
    # comes too late; 0.528 + 0.472 x MWC(3-away vs 2-away... lost 2) = 0.680 as MWC
    ("AQAAiAAAAAAAAA", CubeState(1, "centre", 3, (1, 0)), "double_take", 0.437),
    ("BQAAYAAAAAAAAA", CubeState(1, "centre", 7, (5, 3)), "double_take", 0.272),
])
def test_the_cube_is_dead_on_the_last_roll(pid, state, action, dt):
    """When the opponent surely bears off with his next roll, the cube has no future:
    no double was advised at 52.8% (efficiency 0.6 made the cube live), and in match
    play the opponent's free double was valued as if he doubled before our roll. The
    figures are exact (and GNU Backgammon's at 1 and 2 ply)."""
    from engine.cube.decision import analyse_cube, cube_efficiency, last_roll
    from engine.notation.parse import parse_position
    pos = parse_position(pid)[0]
    assert last_roll(pos) and cube_efficiency(pos) == 0.0
    p = 0.5278 if pid == "AQAAiAAAAAAAAA" else None
    from engine.eval.bearoff import load
    exact = load().probabilities(pos)
    if p is not None:
        assert exact[0] == pytest.approx(p, abs=1e-3)
    d = analyse_cube(pos, state, lambda position, ply: exact)
    assert d.action == action and d.double_take == pytest.approx(dt, abs=2e-3)
    assert not last_roll(parse_position("CgAAkAAAAAAAAA")[0])      # two rolls can be needed
    assert not last_roll(Position.start())


def test_the_match_take_point_is_the_double_take_equity_s_own():
    """The take point came from Janowski's line, which misses the taker's free
    redouble that double/take counts: at 3-away doubled by 2-away it said 27.8%, and
    the action was double, take at 26% for the taker."""
    state = CubeState(1, "centre", 3, (1, 0))
    d = cube_decision(probs(0.74, 0, 0, 0, 0), state, 0.68)
    assert d.take_point == pytest.approx(0.2492, abs=2e-4)
    for w in (0.745, 0.755):        # taker at 25.5% and 24.5%: take, then pass
        got = cube_decision(probs(w, 0, 0, 0, 0), state, 0.68).action
        assert got == ("double_take" if 1 - w > d.take_point else "double_pass"), w
    assert cube_decision(probs(0.74, 0, 0, 0, 0), state, take_point=False).take_point is None


def test_two_away_two_away_values_the_cube_as_gnu_backgammon_does():
    """At 2-away 2-away GNU Backgammon values a position cubeless (``fDoCubeful``): no
    double was the live cube's Janowski line, 0.44 below GNU's, and a gammonish 22%
    was no double where GNU doubles. GNU Backgammon 1.07 at 0-ply, contact (0.68),
    on its own cubeless chances (9zaoBADe2YMAQA, yzYUIQnIfBDAYw; helper 99's audit)."""
    state = CubeState(1, "centre", 4, (2, 2))
    for p, nd, dt, action in (
            (probs(0.346705, 0.064585, 0.003329, 0.018484, 0.000183), -0.222725, -0.864316,
             "no_double"),
            (probs(0.223025, 0.033908, 0.000808, 0.653018, 0.08479), -1.680189, -1.561654,
             "double_take")):
        d = cube_decision(p, state, 0.68)
        assert d.no_double == pytest.approx(nd, abs=2e-6)
        assert d.double_take == pytest.approx(dt, abs=2e-6)
        assert d.action == action


def test_a_free_double_comes_after_our_roll():
    """2-away against 4-away (7-point match at 5-3), a short bear-off with two checkers
    a side: our cube dies once we own it at 2, so the opponent's redouble is free, but
    he makes it only after our roll, which bears off more often than not. Valued as if
    he redoubled before our roll, double/take fell below no double ("no double, take");
    over our 21 rolls it is double, pass, as GNU Backgammon's 2-ply says."""
    from engine.cli.cube import model_probability_fn
    from engine.cube.decision import analyse_cube, rolls_ahead
    from engine.notation.parse import parse_position
    pos = parse_position("CgAAkAAAAAAAAA")[0]
    fn = model_probability_fn()
    state = CubeState(1, "centre", 7, (5, 3))
    now = cube_decision(fn(pos, 0), state, 0.6)
    assert now.action == "no_double"
    ahead = rolls_ahead(pos, fn)
    assert len(ahead) == 21 and sum(w for w, _, _ in ahead) == pytest.approx(1.0)
    assert sum(w for w, _, over in ahead if over) > 0.5        # we bear off more often
    d = analyse_cube(pos, state, fn)
    assert d.action == "double_pass" and d.double_take > 1.0
    # the game loop's policy (the web board's and the terminal game's engine) agrees
    from engine.play.match import DecisionCubePolicy
    policy = DecisionCubePolicy(fn, efficiency=0.6)
    assert policy.decide(pos, state).action == "double_pass" and policy.double(pos, state)
    assert not policy.take(pos, state)
    # and the answer the protocols' engines give (it took: the redouble valued before
    # our roll)
    ans = answer_double(fn(pos, 0), state, 0.6, after_roll=lambda: rolls_ahead(pos, fn))
    assert ans.answer == "pass" and answer_double(fn(pos, 0), state, 0.6).answer == "take"
    from engine.cli import _decide
    assert _decide.answer(_decide.search_for("backgammon"), pos, state, 0).answer == "pass"
    # money play has no free double: no lookahead, the same decision
    money = CubeState()
    assert analyse_cube(pos, money, fn) == cube_decision(fn(pos, 0), money, 0.6)


def test_last_roll_is_the_bear_off_table_s_one_roll_certainty():
    """:func:`last_roll` (a count of the opponent's checkers) agrees with the one-sided
    bear-off table on every home board of up to three checkers."""
    from itertools import combinations_with_replacement

    from engine.cube.decision import last_roll
    from engine.eval.bearoff import load
    db = load()
    for n in (1, 2, 3):
        for pts in combinations_with_replacement(range(1, 7), n):
            them = [0] * 24
            for p in pts:
                them[p - 1] += 1
            pos = Position("backgammon", tuple([15] + [0] * 23), tuple(them),
                           off=(0, 15 - n))
            sure = float(db.rolls(np.array(them[:6], np.int64))[1]) > 1 - 1e-9
            assert last_roll(pos) == sure, pts


# --------------------------------------------------------------------- plays at a score
def _after():
    """A contact position (the start) standing for the one after a play."""
    return Position.start()


@given(st.floats(0.05, 0.95), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
@settings(max_examples=40, deadline=None)
def test_a_play_at_double_match_point_is_worth_its_winning_chance(w, g, l):
    """1-away / 1-away (after the Crawford game): gammons count for nothing and the cube
    is dead, so a play's match winning chance is its winning chance."""
    p = probs(w, w * g, w * g * 0.1, (1 - w) * l, (1 - w) * l * 0.1)
    state = CubeState(match_length=7, score=(6, 6))
    equity, mwc = play_value(p, _after(), state)
    assert mwc == pytest.approx(w, abs=1e-9)
    assert equity == pytest.approx(2 * w - 1, abs=1e-9)


def test_gammons_weigh_as_the_score_makes_them():
    """The same winning chance, more gammons won: worth much more to a player 4-away
    against 2-away than at double match point, where it is worth nothing."""
    plain, gammony = probs(0.55, 0.05), probs(0.55, 0.30)
    dmp = CubeState(match_length=7, score=(6, 6))
    assert play_value(gammony, _after(), dmp)[1] == pytest.approx(
        play_value(plain, _after(), dmp)[1])
    behind = CubeState(match_length=7, score=(3, 5))
    gain = play_value(gammony, _after(), behind)[1] - play_value(plain, _after(), behind)[1]
    assert gain > 0.03
    # 2-away against 1-away after the Crawford game: the trailer's free double comes
    # after the leader's roll, and a play's value leaves it out as GNU Backgammon's
    # 0-ply does, so a gammon (the match at once) counts (valued as made at once, the
    # cube 2, gammons counted for nothing and every play short of the leader's take
    # point was worth the same)
    leader = CubeState(match_length=7, score=(5, 6))
    assert play_value(gammony, _after(), leader)[1] > play_value(plain, _after(),
                                                                 leader)[1] + 0.03


def test_a_play_that_ends_the_game_scores_its_points_at_the_cube():
    table = kazaross_xg2()
    state = CubeState(2, "me", 7, (1, 2))                    # 6-away, 5-away, cube 2
    gammon = probs(1.0, 1.0, 0.0)
    over = Position.from_json({"variant": "backgammon", "me": [0] * 24, "them":
                               [0] * 18 + [0, 0, 0, 0, 0, 15], "bar": [0, 0],
                               "off": [15, 0]})
    equity, mwc = play_value(gammon, over, state)
    assert mwc == pytest.approx(table.after(6, 5, 4))
    lo, hi = table.after(6, 5, -2), table.after(6, 5, 2)
    assert equity == pytest.approx(2 * (mwc - lo) / (hi - lo) - 1)
    # money: the cubeless points, gammons not counted with the Jacoby rule and no double
    assert play_value(gammon, over, MONEY) == (1.0, None)
    assert play_value(gammon, over, CubeState(2, "me"))[0] == pytest.approx(2.0)


def test_a_money_play_is_worth_what_the_opponent_cube_action_leaves():
    """The opponent on roll after the play holds no cube: his no-double equity, negated;
    with the cube centred and his position strong enough he doubles and the mover's
    value is his double/take or double/pass, whichever the mover chooses."""
    p = probs(0.6, 0.15, 0.01, 0.1, 0.005)
    theirs = [0.4, 0.1, 0.005, 0.15, 0.01]
    x = cube_efficiency(_after())
    owned = CubeState(2, "me")
    assert play_value(p, _after(), owned)[0] == pytest.approx(
        -money_cubeful_equity(theirs, "them", x, True))
    weak = probs(0.25, 0.02, 0.0, 0.3, 0.02)                 # the opponent doubles us out
    assert play_value(weak, _after(), MONEY)[0] == pytest.approx(-1.0)


def test_rolls_ahead_rated_in_one_call_are_the_same():
    """The free-double lookahead's plays rated in one batched call (``rows_fn``, the
    search's ``values_of``) give what one call a play gives: the same best plays, the
    same chances to the bit."""
    import numpy as np

    from engine.cli._decide import probabilities, search_for
    from engine.cube.decision import rolls_ahead
    from engine.movegen.generate import successors
    from engine.rules.position import Position
    search = search_for("backgammon")
    pos = Position.start()
    for dice in ((3, 1), (6, 6), (5, 2)):
        pos = successors(pos, dice)[len(successors(pos, dice)) // 2]
        one = rolls_ahead(pos, lambda p, k: probabilities(search, p, k))
        batch = rolls_ahead(pos, lambda p, k: probabilities(search, p, k),
                            lambda rows: search.values_of(rows, 0))
        assert [(w, over) for w, _, over in one] == [(w, over) for w, _, over in batch]
        assert all(np.array_equal(a, b) for (_, a, _), (_, b, _) in zip(one, batch))


def test_given_probabilities_are_the_side_on_roll_s_after_its_roll_too(capsys):
    """``--probabilities`` in match play where the opponent's next double is free: the
    21 positions after our roll (rated from the opponent's side) got our chances as his,
    so 30% was valued as 70% after every roll (double, take at 2-away against 4-away,
    where his free redouble makes us pass) and 70% as 30%."""
    import json

    from engine.cli.cube import main
    race = "XGID=-CCCCC--------------ccccc-:0:0:1:00:5:3:0:7:10"
    got = {}
    for p in (0.3, 0.7):
        assert main(["--position", race, "--probabilities", f"{p},0,0,0,0", "--json"]) == 0
        got[p] = json.loads(capsys.readouterr().out)
    # doubled to 2, he redoubles to 4 at once, free: at 30% we pass (2-away against
    # 2-away: 0.5) rather than play on; at 70% we take and play for the match
    assert got[0.3]["action"] == "no_double"
    assert got[0.3]["mwc"]["double_take"] == pytest.approx(0.5, abs=1e-9)
    assert got[0.7]["mwc"]["double_take"] == pytest.approx(0.7, abs=1e-9)


def test_the_opponent_s_free_double_is_made_only_where_it_pays_him():
    """After our roll the opponent whose double is free (our cube dead) doubles only
    where that leaves us less than playing on: facing a sure gammon, he plays on for it
    (we were valued at the pass, his double assumed). A 1-away leader at 6-3 of 7 after
    the Crawford game, the trailer sure to win a gammon (GNU Backgammon ID
    UAAAKMtiRQYAAA:cAngADAAMAAE): 0.512, GNU Backgammon 1.07's 51.20%; it was 0.677,
    the value of losing one point (helper 97's audit)."""
    from engine.cli._decide import cube_advice, search_for
    from engine.cube.decision import _free_double_after
    from engine.notation.parse import parse_position
    table = default_table()
    sure_gammon = np.array([0.0, 0.0, 0.0, 1.0, 0.0])
    even = np.array([0.5, 0.1, 0.0, 0.1, 0.0])
    # 3-away against 4-away, cube 1: he plays on for a gammon (we lose 2), and doubles
    # an even game, which we take or pass as is better for us (at efficiency 0 his
    # cube, live when he plays on, is valued as a dead one)
    assert _free_double_after([(1.0, sure_gammon, False)], table, 3, 4, 1, 0.0, False) == \
        pytest.approx(table.after(3, 4, -2))
    from engine.cube.decision import _ends, _fractions
    fw, fl = _fractions(even)
    played = [0.5 * x + 0.5 * y for x, y in (_ends(table, 3, 4, n, fw, fl) for n in (1, 2))]
    want = min(played[0], max(played[1], table.after(3, 4, -1)))
    assert _free_double_after([(1.0, even, False)], table, 3, 4, 1, 0.0, False) == \
        pytest.approx(want)
    pos, info = parse_position("UAAAKMtiRQYAAA:cAngADAAMAAE")
    d = cube_advice(search_for("backgammon"), pos, CubeState.from_info(info), 0)
    assert d.mwc["no_double"] == pytest.approx(0.5120, abs=0.002)


def test_free_double_lookahead_values_the_opponent_s_play_on_with_his_live_cube():
    """Where the opponent's double is free (our cube dead, his live) and he plays on
    rather than double, he keeps that live cube: the lookahead values playing on as the
    Janowski line of a cube he holds (his cash point our dead take point at 2n), as GNU
    Backgammon's 1-ply tree values his no double at its leaves, not as the game played
    out at n with a dead cube. 2-away against 6-away in a 7-point match, the cube 2
    his, 30% for us and 50% gammons against us, the same chances after our roll: he is
    too good to redouble and plays on (0.632), where the dead line had him redouble and
    us pass (0.669). Computed here from the table's entries."""
    from engine.cube.decision import _free_double_after
    from engine.cube.met import default_table
    t = default_table()
    M = lambda a, b: float(t.pre_crawford[a - 1][b - 1])
    w, x = 0.3, 0.68
    p = np.array([w, 0.0, 0.0, 0.5, 0.0])
    single, gammon = 0.2 / 0.7, 0.5 / 0.7           # shares of our losses
    lose2 = single * M(2, 4) + gammon * M(2, 2)     # he is 4-away, or 2-away
    dead = w * 1.0 + (1 - w) * lose2                # any win of ours wins the match
    drop = M(2, 4)                                  # we pass his redouble: lose 2
    lose4 = single * M(2, 2) + gammon * 0.0         # taken at 4
    tp = (drop - lose4) / (1.0 - lose4)             # our dead take point at 4
    live = (lose2 + (drop - lose2) * w / tp if w < tp
            else drop + (1.0 - drop) * (w - tp) / (1.0 - tp))
    on = x * live + (1 - x) * dead
    take4 = w * 1.0 + (1 - w) * lose4
    want = min(on, max(take4, drop))
    assert want < drop                              # he plays on: below the pass
    assert _free_double_after([(1.0, p, False)], t, 2, 6, 2, x, False) == \
        pytest.approx(want, abs=1e-12)


def test_beaver_of_a_sure_loss_despite_rounding():
    # EQAAcBQAAAAAAA (money, beavers): the doubler can never win, so after a take he
    # loses 2 for sure; the bear-off table's sum gives -2.0000000000000004 and GNU
    # Backgammon 1.07 says "No double, beaver" (No double -1, Double/take -2)
    nd, dt = -1.0000000000000002, -2.0000000000000004
    assert classify(nd, dt, 1.0, beavers=True) == "no_double_beaver"
    assert money_answer(dt, True).answer == "beaver"
    assert money_answer(dt, False).answer == "take"
    assert money_answer(-2.001, True).answer == "take"
    assert money_answer(5e-17, True).answer == "beaver"


def test_a_play_s_value_leaves_the_mover_s_free_double_unvalued():
    """After a play the opponent is on roll and a free double is the mover's, made only
    after that roll: valued as if made at once, at the opponent's chances before it,
    every play leaving him short of his take point was worth the same (+1.000 here).
    GNU Backgammon 1.07's 0-ply leaves it unvalued: a 2-away trailer against a 1-away
    leader after the Crawford game (W487AABb3rEAAA, 4-1; GNU's chances of each play and
    its cubeful equities; helper 101's audit)."""
    from engine.cube.decision import play_value
    from engine.notation.movetext import parse_move
    from engine.notation.parse import parse_position
    pos, _ = parse_position("W487AABb3rEAAA")
    state = CubeState(1, "centre", 3, (1, 2), False, False, False, None)
    for move, gnubg, win in (("9/4", 0.640559, 0.504167), ("10/6 5/4", 0.640424, 0.503981),
                             ("10/6 9/8", 0.61615, 0.49347), ("9/8 9/5", 0.579682, 0.482334)):
        after = parse_move(move, pos, (4, 1))
        value, _ = play_value([win, 5e-05, 0.0, 5e-05, 0.0], after, state)
        assert value == pytest.approx(gnubg, abs=1e-5), move


def test_a_play_into_a_short_match_bear_off_is_valued_at_the_table_s_efficiencies():
    """In match play GNU Backgammon values a short bear-off (its two-sided database)
    with the cube efficiencies the table's exact money equities imply, one for each
    cube (:func:`match_efficiencies`), not a flat 0.6: the taker's cube is worth little
    there, and the flat 0.6 made the opponent's double look worse than it is (4/off
    below was -0.425, 5/4 3/off -0.606). GNU Backgammon 1.07's 0-ply hint, its chances
    of each play (helper 101's audit, explained by helper 102)."""
    from engine.notation.movetext import parse_move
    from engine.notation.parse import parse_position
    from engine.search.bearoff_cube import cubeful_play_value, match_efficiencies

    def match(a, b):
        return CubeState(1, "centre", max(a, b) + 2, (max(a, b) + 2 - a, max(a, b) + 2 - b))
    for pid, state, dice, plays in (
            ("SAAAoAIAAAAAAA", match(4, 4), (1, 1),      # the taker's cube 0.10
             (("4/off", 0.345449, -0.648683), ("5/4 3/off", 0.286397, -0.952031))),
            # the opponent's no-double efficiency from the table's no-double equity
            ("GwAAgAYAAAAAAA", match(2, 3), (4, 1), (("4/3 4/off", 0.406653, -0.217655),)),
            ("sQAAICYAAAAAAA", match(3, 5), (1, 1), (("6/5 4/1", 0.352728, -0.381467),))):
        pos, _ = parse_position(pid)
        for move, win, gnubg in plays:
            after = parse_move(move, pos, dice)
            x = match_efficiencies(after, state.flip())
            assert x is not None and all(0.0 <= e <= 0.6 for e in x)
            value, _ = cubeful_play_value(probs(win), after, state)
            assert value == pytest.approx(gnubg, abs=5e-5), (pid, move)
    after = parse_move("4/off", parse_position("SAAAoAIAAAAAAA")[0], (1, 1))
    assert match_efficiencies(after, MONEY) is None                    # the table decides
    assert match_efficiencies(Position.from_literal("x 6:1; o 1:1"),
                              match(4, 4)) is None                      # the last roll
    assert match_efficiencies(Position.from_literal("x 6:7; o 6:1"), match(4, 4)) is None


def test_cubeful_play_values_are_cubeful_play_value_play_by_play():
    """The batch (the review's luck, the game loop's cubeful choice) gives each play's
    :func:`cubeful_play_value` exactly: plays into a short bear-off (the table's exact
    money value, its efficiencies in a match), races, contact and a game-ending play."""
    from engine.movegen.generate import successors
    from engine.notation.parse import parse_position
    from engine.search.bearoff_cube import cubeful_play_value, cubeful_play_values
    rng = np.random.default_rng(11)
    plays = []
    for pid, dice in (("SAAAoAIAAAAAAA", (1, 1)), ("GwAAgAYAAAAAAA", (4, 1)),
                      ("4HPwATDgc/ABMA", (6, 5))):
        plays += successors(parse_position(pid)[0], dice)
    plays += successors(Position.from_literal("x 1:1; o 6:4"), (2, 1))     # ends the game
    assert any(p.is_over() for p in plays)
    for state in (MONEY, CubeState(2, "them"), CubeState(1, "centre", 7, (3, 5)),
                  CubeState(2, "me", 5, (1, 1))):
        win = rng.uniform(0.1, 0.9, len(plays))
        chances = np.stack([win, 0.2 * win, 0.0 * win, 0.1 * (1 - win), 0.0 * win], axis=1)
        got, mwc = cubeful_play_values(chances, plays, state)
        for i, after in enumerate(plays):
            want = cubeful_play_value(chances[i], after, state)
            assert got[i] == want[0], (state, i)
            assert (mwc is None) == state.money and (mwc is None or mwc[i] == want[1])
    with pytest.raises(CubeError, match="3 positions for 2 rows"):
        cubeful_play_values(np.zeros((2, 5)), plays[:3], MONEY)
    with pytest.raises(PositionError, match=r"afters\[1\]"):
        cubeful_play_values(np.zeros((2, 5)), [plays[0], "x"], MONEY)
    assert [len(v) for v in cubeful_play_values([], [], MONEY)[:1]] == [0]


def test_a_short_match_bear_off_s_cube_is_decided_at_the_table_s_efficiencies():
    """The engine's own cube decisions in a short bear-off in match play (the ``cube``
    command, the protocols' cube advice and answers, the game loop's policy) used the
    flat 0.6 that plays into those races had left (:func:`cube_efficiencies`): at
    4-away 4-away, the cube 2 ours, five checkers against five, no redouble was -0.269
    where GNU Backgammon has -0.357 (our cube worth 0.28 of a live one there), and
    three checkers against two was no double where GNU doubles (the taker's cube 0.08).
    GNU Backgammon 1.07's 0-ply ``eval`` (helper 105: 2,610 rows in 41 match states;
    outside the states where the engine's own free-double lookahead values a double
    after our roll, all but 4 within 2e-4 and those within 2.3e-4)."""
    from engine.cli import _decide
    from engine.cli.cube import model_probability_fn
    from engine.notation.parse import parse_position
    from engine.play.match import DecisionCubePolicy
    from engine.search.bearoff_cube import cube_analysis, cube_efficiencies

    def ask(pid, value, owner, **extra):
        return _ask({"cmd": "cube", "position": pid, "cube": {"value": value, "owner": owner},
                     "match": {"length": 6, "score": [2, 2], "crawford": False}, **extra})
    for pid, value, owner, nd, dt, action in (
            ("SwIAAOMAAAAAAA", 2, "me", -0.356679, -1.292675, "no_double"),
            ("QgAAUAIAAAAAAA", 1, "centre", 0.27671, 0.50339, "double_take")):
        r = ask(pid, value, owner)
        assert r["equities"]["no_double"] == pytest.approx(nd, abs=2e-4), pid
        assert r["equities"]["double_take"] == pytest.approx(dt, abs=2e-4), pid
        assert r["action"] == action, pid
        # a given efficiency is the user's, for both lines
        flat = ask(pid, value, owner, efficiency=0.6)
        assert abs(flat["equities"]["no_double"] - nd) > 0.01 and flat["cube_efficiency"] == 0.6
        # the protocols' engines and the game loop decide the same
        pos = parse_position(pid)[0]
        state = CubeState(value, owner, 6, (2, 2))
        search = _decide.search_for("backgammon")
        advice = _decide.cube_advice(search, pos, state, 0)
        assert advice.no_double == pytest.approx(nd, abs=2e-4) and advice.action == action
        fn = model_probability_fn()
        assert DecisionCubePolicy(fn).decide(pos, state).action == action
        answer = _decide.answer(search, pos, state, 0)
        assert answer.answer == "take" and answer.double_take == pytest.approx(dt, abs=2e-4)
    # the last roll keeps its dead cube; money play keeps the table's exact equities
    last = parse_position("AQAAiAAAAAAAAA")[0]
    assert cube_efficiencies(last, CubeState(1, "centre", 3, (1, 0))) == (0.0, None)
    assert cube_efficiencies(last, MONEY) == (0.0, None)
    assert cube_efficiencies(Position.from_literal("x 6:2; o 5:3"), MONEY) == (0.6, None)
    # the opponent's free double (we 1-away after the Crawford game, 96% to win) is
    # still valued over our rolls where the table finds our side's cube worthless (0)
    pos = parse_position("qgAAIAQAAAAAAA")[0]
    state = CubeState(1, "centre", 5, (4, 1))
    assert cube_efficiencies(pos, state)[0] == 0.0
    fn = model_probability_fn()
    ahead = cube_analysis(pos, state, fn)
    assert ahead.no_double == pytest.approx(analyse_cube(pos, state, fn, efficiency=0.6).no_double,
                                            abs=1e-12)
    assert abs(ahead.no_double - cube_decision(fn(pos, 0), state, 0.0).no_double) > 0.01


def test_cube_analysis_refuses_a_bad_position_or_state_with_typed_errors():
    """:func:`cube_analysis` reads the bear-off table (:func:`cube_efficiencies`) before
    :func:`analyse_cube` checks its arguments: a string or None for the position or the
    cube state failed as an ``AttributeError`` there."""
    from engine.errors import PositionError
    from engine.search.bearoff_cube import cube_analysis, cube_efficiencies

    def fn(pos, ply):
        return probs(0.6, 0.1, 0.0, 0.05, 0.0)
    state = CubeState(1, "centre", 5, (0, 0))
    with pytest.raises(PositionError, match="'x': expected a Position"):
        cube_analysis("x", state, fn)
    for bad in ("y", None):
        with pytest.raises(CubeError, match="expected a CubeState"):
            cube_analysis(Position.start(), bad, fn)
        with pytest.raises(CubeError, match="expected a CubeState"):
            cube_efficiencies(Position.start(), bad)


def test_check_probabilities_clips_and_refuses_as_numpy_would():
    """The five-number check (plain Python arithmetic, for speed) against the same rule
    in numpy: finite numbers within 1e-6 of [0, 1], clipped into [0, 1] and into order
    (gammons at most the wins, backgammons at most the gammons, on both sides)."""
    def reference(p):
        p = np.clip(np.array(p, np.float64), 0.0, 1.0)
        p[1] = min(p[1], p[0])
        p[2] = min(p[2], p[1])
        p[3] = min(p[3], 1.0 - p[0])
        p[4] = min(p[4], p[3])
        return p
    rng = np.random.default_rng(3)
    for _ in range(2000):
        p = rng.uniform(-1e-6, 1 + 1e-6, 5) * rng.integers(0, 2, 5)
        got = check_probabilities(p)
        assert got.dtype == np.float64 and got.shape == (5,)
        np.testing.assert_array_equal(got, reference(p))
        assert got is not p and list(check_probabilities(list(p))) == list(got)
    for bad, words in (([0.5] * 4, "five finite"), ([[0.5] * 5] * 2, "five finite"),
                       ([0.5, np.nan, 0, 0, 0], "five finite"),
                       ([0.5, 0, 0, np.inf, 0], "five finite"), ("abc", "five numbers"),
                       ([0.5, -0.01, 0, 0, 0], r"in \[0, 1\]"),
                       ([1.01, 0, 0, 0, 0], r"in \[0, 1\]")):
        with pytest.raises(CubeError, match=words):
            check_probabilities(bad)


def test_play_value_checks_the_efficiencies_it_is_given():
    after = Position.start().flip()
    p = probs(0.6)
    for x in (-0.1, 1.5, float("nan")):
        with pytest.raises(CubeError, match="efficiency"):
            play_value(p, after, MONEY, efficiency=x)
        with pytest.raises(CubeError, match="efficiency"):
            play_value(p, after, MONEY, efficiency=0.6, double_efficiency=x)
    state = CubeState(2, "me", 7, (1, 3))
    assert state.flip() is state.flip() and state.flip().flip() == state


def test_the_match_cube_s_line_is_numpy_s_interpolation():
    """:func:`engine.cube.decision._interp` (plain Python) gives what ``numpy.interp``
    gives on the knots of a cubeful match line, at the knots, between and beyond them."""
    from engine.cube.decision import _interp
    rng = np.random.default_rng(5)
    for _ in range(500):
        inner = sorted(rng.uniform(0, 1, rng.integers(0, 3)).tolist())
        xs = [0.0, *inner, 1.0]
        ys = sorted(rng.uniform(0, 1, len(xs)).tolist())
        for x in [*xs, *rng.uniform(-0.1, 1.1, 20).tolist()]:
            assert _interp(x, xs, ys) == float(np.interp(x, xs, ys))


def _states():
    """Money and match cube states of every kind the plays' values branch on."""
    out = [CubeState(), CubeState(jacoby=False), CubeState(2, "me"), CubeState(4, "them"),
           CubeState(beavers=True), CubeState(2, "them", beavers=True),
           CubeState(8, "me", max_value=16), CubeState(1, "centre", max_value=1),
           CubeState(1 << 29, "them"), CubeState(8, "me", 25, (3, 9)),
           CubeState(16, "them", 25, (10, 2)), CubeState(2, "me", 9, (4, 4), max_value=4),
           CubeState(1, "centre", 9, (4, 6), max_value=2)]
    for length in (1, 2, 3, 5, 7, 11):
        for me in range(length):
            for them in range(length):
                out.append(CubeState(1, "centre", length, (me, them)))
                for value in (2, 4):
                    for owner in ("me", "them"):
                        out.append(CubeState(value, owner, length, (me, them)))
                if length - 1 in (me, them) and (me, them) != (length - 1, length - 1):
                    out.append(CubeState(1, "centre", length, (me, them), crawford=True))
    return out


def test_play_values_are_play_value_to_the_last_bit():
    """:func:`play_values` (the review's luck rates every play of the 21 rolls with it)
    gives :func:`play_value`'s numbers exactly, over random chances (gammons and
    backgammons, none, certain wins and losses), efficiencies (a dead cube's 0 among
    them), and money and match states of every kind; and the positions' own
    efficiencies by default, games over included."""
    from engine.cube.decision import play_values
    from engine.movegen.generate import successors
    rng = np.random.default_rng(7)

    def chances(n):
        w = rng.uniform(0, 1, n)
        w[:3] = (0.0, 1.0, 0.5)
        wg = np.minimum(w * rng.uniform(0, 1.2, n), 1) * rng.integers(0, 2, n)  # some > win
        wb = wg * rng.uniform(0, 1, n) * rng.integers(0, 2, n)
        lg = (1 - w) * rng.uniform(0, 1, n) * rng.integers(0, 2, n)
        lb = lg * rng.uniform(0, 1, n) * rng.integers(0, 2, n)
        return np.stack([w, wg, wb, lg, lb], axis=1)

    afters = [s for s in successors(Position.start(), (3, 1))][:4]
    checked = 0
    for state in _states():
        p = chances(40)
        after = [afters[i % len(afters)] for i in range(len(p))]
        x = rng.choice([0.0, 0.6, 0.68, rng.uniform(0, 1)], len(p))
        got, mwc = play_values(p, after, state, efficiencies=x)
        for i in range(len(p)):
            want = play_value(p[i], after[i], state, efficiency=float(x[i]))
            assert got[i] == want[0], (state, p[i], x[i])
            assert (mwc is None) == (want[1] is None)
            assert mwc is None or mwc[i] == want[1]
            checked += 1
    assert checked > 5000
    # beavers: a take worth nothing to the doubler, beavered or not doubled at all
    # (the opponent's chances after the play, seen from him, at a dead cube)
    for t, action in (([0.485191, 0.475845, 0.077262, 0.495070, 0.041124], "no_double_beaver"),
                      ([0.363043, 0.320436, 0.053990, 0.132154, 0.030838], "double_beaver")):
        assert cube_decision(t, CubeState(beavers=True), 0.0).action == action
        mine = [[1 - t[0], t[3], t[4], t[1], t[2]]]
        got, _ = play_values(mine, afters[:1], CubeState(beavers=True), efficiencies=[0.0])
        assert got[0] == play_value(mine[0], afters[0], CubeState(beavers=True),
                                    efficiency=0.0)[0]
    # the positions' own efficiencies (contact, race, a bear-off), and a game over
    race = Position("backgammon", (0, 2, 3, 3, 2, 2, 1, 2) + (0,) * 16,
                    (0, 1, 2, 3, 3, 2, 2, 2) + (0,) * 16)
    won = Position("backgammon", (0,) * 24, (2,) + (0,) * 23, (0, 0), (15, 13))
    plays = [afters[0], race, won]
    for state in (CubeState(), CubeState(2, "me", 7, (2, 4))):
        p = chances(3)
        got, mwc = play_values(p, plays, state)
        for i, after in enumerate(plays):
            want = play_value(p[i], after, state)
            assert got[i] == want[0] and (mwc is None or mwc[i] == want[1])
    with pytest.raises(CubeError, match="n x 5"):
        play_values([0.5] * 5, afters[:1], CubeState())
    with pytest.raises(CubeError, match="2 positions for 1 rows"):
        play_values([[0.5] * 5], afters[:2], CubeState())
    with pytest.raises(CubeError, match=r"row 1: .*in \[0, 1\]"):
        play_values([[0.5] * 5, [0.5, 2.0, 0, 0, 0]], afters[:2], CubeState())
    for bad, words in ((["abc"] * 5, "rows of five numbers"), ([[0.5] * 5, [0.5] * 4],
                                                               "rows of five numbers"),
                       ([[1j] * 5], "rows of five numbers")):
        with pytest.raises(CubeError, match=words):
            play_values(bad, afters[:len(bad)], CubeState())
    with pytest.raises(PositionError, match=r"afters\[0\]"):
        play_values([[0.5] * 5], ["start"], CubeState())
    for x, words in ((0.6, "one number a play"), ([0.6, 0.6], "2 efficiencies for 1 plays"),
                     ([2.0], "efficiency")):
        with pytest.raises(CubeError, match=words):
            play_values([[0.5] * 5], afters[:1], CubeState(), efficiencies=x)
    assert play_values(np.zeros((0, 5)), [], CubeState())[0].shape == (0,)


def test_a_play_is_valued_by_the_opponent_s_cube_decision_on_his_checked_chances():
    """:func:`play_value` is minus the opponent's :func:`cube_decision` on his side of
    the chances, checked as any chances are (his gammons at most ``1 - (1 - win)``,
    one bit below the mover's ``win`` at times: all wins gammons, as the check makes a
    network's gammon output above its wins), to the last bit."""
    from engine.cube.decision import cubeful_value, normalised
    rng = np.random.default_rng(2)
    after = Position.start().flip()
    for state in (CubeState(jacoby=False), CubeState(2, "them"), MONEY,
                  CubeState(1, "centre", 7, (2, 4))):
        for _ in range(300):
            w = float(rng.uniform(0, 1))
            p = [w, w, w * rng.uniform(0, 1), (1 - w) * rng.uniform(0, 1), 0.0]
            theirs = check_probabilities([1 - w, p[3], p[4], p[1], p[2]])
            d = cube_decision(theirs, state.flip(), 0.68, take_point=False,
                              free_double=False)
            equity, his = cubeful_value(d)
            got = play_value(p, after, state, efficiency=0.68)
            assert got == ((-equity, None) if his is None
                           else (normalised(1.0 - his, state), 1.0 - his))


def _game_positions(seed: int, games: int = 30) -> list:
    """Backgammon positions after each play of random games (contact, races, bear-offs,
    last rolls, games over), as the move generator gives them (the opponent on roll)."""
    from engine.movegen.generate import successors
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        pos = Position.start()
        while not pos.is_over():
            succ = successors(pos, (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
            out += succ[:3]
            pos = succ[int(rng.integers(len(succ)))]
    return out


def test_efficiencies_of_rows_are_cube_efficiency_of_each():
    from engine.cube.decision import efficiencies_of_rows
    plays = [p for p in _game_positions(4) if not p.is_over()]
    got = efficiencies_of_rows(np.array([p.to_array() for p in plays]))
    want = [cube_efficiency(p) for p in plays]
    assert got.tolist() == want
    assert {0.0, 0.6, 0.68} <= set(want) and any(0.6 < x < 0.7 for x in want)


def test_cubeful_play_values_of_rows_are_those_of_the_positions():
    """The review's luck values every play of the 21 rolls from the move generator's
    rows, without a position object each: the same numbers as
    :func:`cubeful_play_values` of the positions, games over and short bear-offs (the
    table's) included."""
    from engine.search.bearoff_cube import (
        _short_race,
        cubeful_play_values,
        cubeful_play_values_of_rows,
    )
    plays = _game_positions(5, 12)
    assert any(p.is_over() for p in plays)
    assert any(_short_race(p) and not p.is_over() for p in plays)
    rows = np.array([p.to_array() for p in plays])
    rng = np.random.default_rng(6)
    win = rng.uniform(0, 1, len(plays))
    chances = np.stack([win, 0.3 * win, 0.05 * win, 0.2 * (1 - win), 0.01 * (1 - win)], 1)
    for state in (MONEY, CubeState(2, "me"), CubeState(1, "centre", 5, (3, 4)),
                  CubeState(2, "them", 9, (2, 6))):
        got = cubeful_play_values_of_rows(chances, rows, state)
        want = cubeful_play_values(chances, plays, state)
        assert got[0].tolist() == want[0].tolist()
        assert (got[1] is None and want[1] is None) or got[1].tolist() == want[1].tolist()
    with pytest.raises(CubeError, match="3 positions for 2 rows"):
        cubeful_play_values_of_rows(chances[:2], rows[:3], MONEY)
    with pytest.raises(CubeError, match="state rows of shape"):
        cubeful_play_values_of_rows(chances[:2], rows[:2, :100], MONEY)
    with pytest.raises(CubeError, match="backgammon only"):
        cubeful_play_values(chances[:1], [Position.start("portes")], MONEY)


def test_a_cubeful_ranking_is_the_one_play_at_a_time_ranking():
    """:func:`engine.cli._decide.rank_cubefully` ranks over arrays what
    :meth:`Search.analyse` ranks one play at a time by
    :func:`engine.search.bearoff_cube.cubeful_play_value`: the same order, the same
    cubeful equities and match winning chances, at 0- and 1-ply, money and match."""
    from engine.cli import _decide
    from engine.search.bearoff_cube import cubeful_play_value
    search = _decide.search_for("backgammon")
    for pos, dice in ((Position.start(), (6, 4)),
                      (Position.from_literal("x 6:4 5:3 4:2 13:4 24:2; o 6:5 4:3 8:4 11:3"),
                       (2, 2))):
        for state in (MONEY, CubeState(2, "them"), CubeState(1, "centre", 5, (3, 4))):
            for ply in (0, 1):
                got = _decide.rank_cubefully(search, pos, dice, ply, state).candidates
                want = search.analyse(pos, dice, ply, rank=lambda after, p: cubeful_play_value(
                    p, after, state)[0]).candidates
                assert [c.position for c in got] == [c.position for c in want]
                for c in got:
                    assert (c.cubeful_equity, c.mwc) == cubeful_play_value(
                        c.probabilities, c.position, state)


def test_bad_chances_are_named_by_their_row_among_all_the_plays():
    """A batch's bad chances are named by their row among all the plays given, short
    bear-offs (valued by the table in money play) counted and checked too; no plays is
    no values."""
    from engine.search.bearoff_cube import cubeful_play_values, cubeful_play_values_of_rows
    short = Position.from_literal("x 1:1 2:1; o 1:1 2:1")
    good, bad = [0.5, 0.1, 0.0, 0.1, 0.0], [0.5, 0.1, 0.0, 0.1, 2.0]
    for plays, rows in (([short, short, Position.start()], [good, good, bad]),
                        ([short, Position.start(), short], [good, good, bad])):
        with pytest.raises(CubeError, match=r"row 2: "):
            cubeful_play_values(rows, plays, MONEY)
    for state in (MONEY, CubeState(1, "centre", 5, (0, 0))):
        got = cubeful_play_values_of_rows(np.zeros((0, 5)), [], state)
        assert got[0].shape == (0,) and (got[1] is None) == state.money
    from engine.cube.decision import efficiencies_of_rows
    with pytest.raises(CubeError, match="state rows of shape"):
        efficiencies_of_rows(Position.start().to_array())
