"""Match equity tables: the shipped Kazaross-XG2 numbers, Crawford bookkeeping, derived
take points and gammon prices, and the table computed from a gammon rate."""

import numpy as np
import pytest

from engine.cube.computed_met import met_from_gammon_rate, post_crawford_from_gammon_rate
from engine.cube.met import (
    MatchError,
    default_table,
    extended,
    gammon_price,
    kazaross_xg2,
    take_point,
)


@pytest.fixture(scope="module")
def xg2():
    return kazaross_xg2()


def test_shape_and_source(xg2):
    assert xg2.length == 25
    assert xg2.pre_crawford.shape == (25, 25)
    assert xg2.post_crawford.shape == (25,)
    assert "Kazaross" in xg2.name and "gnubg" in xg2.source.lower().replace(" ", "")


@pytest.mark.parametrize("a, b, mwc", [
    (1, 1, 0.5), (2, 2, 0.5), (7, 7, 0.5),
    (1, 2, 0.67736),          # Crawford game, leader 1-away vs 2-away
    (2, 1, 0.32264),
    (2, 3, 0.59947), (3, 2, 0.40053),
    (1, 25, 0.99905), (25, 1, 0.00095),
])
def test_pinned_pre_crawford_entries(xg2, a, b, mwc):
    assert xg2.mwc(a, b) == pytest.approx(mwc, abs=1e-9)


@pytest.mark.parametrize("trailer, mwc", [(1, 0.5), (2, 0.48803), (3, 0.32264),
                                          (4, 0.31002), (5, 0.19012), (25, 0.00123)])
def test_pinned_post_crawford_entries(xg2, trailer, mwc):
    assert xg2.mwc(trailer, 1, post_crawford=True) == pytest.approx(mwc, abs=1e-9)
    assert xg2.mwc(1, trailer, post_crawford=True) == pytest.approx(1 - mwc, abs=1e-9)


def test_table_is_consistent(xg2):
    pre = xg2.pre_crawford
    assert np.allclose(pre + pre.T, 1.0)
    # the further away, the worse
    assert np.all(np.diff(pre, axis=1) > 0) and np.all(np.diff(pre, axis=0) < 0)
    assert np.all(np.diff(xg2.post_crawford) < 0)


def test_match_over(xg2):
    assert xg2.mwc(0, 3) == 1.0
    assert xg2.mwc(3, 0) == 0.0
    assert xg2.mwc(-2, 5) == 1.0
    with pytest.raises(MatchError):
        xg2.mwc(0, 0)
    with pytest.raises(MatchError, match="26"):
        xg2.mwc(26, 3)


def test_after_knows_the_crawford_game(xg2):
    # reaching 1-away from a normal score: the next game is the Crawford game
    assert xg2.after(2, 3, 1) == pytest.approx(xg2.pre_crawford[0, 2])
    # losing the Crawford game: the score after it is post-Crawford
    assert xg2.after(1, 3, -1) == pytest.approx(1 - xg2.post_crawford[1])
    # a post-Crawford game won by the trailer (3-away -> 1-away): DMP
    assert xg2.after(3, 1, 2) == pytest.approx(0.5)
    assert xg2.after(3, 1, -1) == 0.0
    assert xg2.after(4, 4, 4) == 1.0


def test_take_point_from_table(xg2):
    # 2-away 2-away, doubled to 2: winning or losing 2 ends the match; passing leaves
    # the taker 2-away against 1-away in the Crawford game
    assert take_point(xg2, 2, 2, 1) == pytest.approx(0.32264)
    # the gammonless dead take point of a long match is near money's 25%
    assert take_point(xg2, 25, 25, 1) == pytest.approx(0.25, abs=0.02)


def test_gammon_prices(xg2):
    win, lose = gammon_price(xg2, 2, 2, 1)
    assert win == pytest.approx((1 - 0.67736) / (0.67736 - 0.32264))
    assert lose == pytest.approx(win)
    assert gammon_price(xg2, 1, 5, 1)[0] == 0.0        # any win wins the match
    w, l = gammon_price(xg2, 25, 25, 1)
    assert 0.4 < w < 0.6 and 0.4 < l < 0.6             # long match: money-like


def test_to_json_cuts_to_length(xg2):
    j = xg2.to_json(3)
    assert j["pre_crawford"][1][1] == 0.5 and len(j["pre_crawford"]) == 3
    assert j["post_crawford"] == [0.5, 0.48803, 0.32264]
    with pytest.raises(MatchError):
        xg2.to_json(0)
    with pytest.raises(MatchError):
        xg2.to_json(26)


def test_post_crawford_recursion():
    post = post_crawford_from_gammon_rate(0.25, 6)
    assert post[0] == 0.5
    assert post[1] == pytest.approx(0.5 - 0.015)          # free drop at 2-away
    assert post[2] == pytest.approx(0.25 * 0.5 + 0.75 * 0.5 * post[0])


def test_met_from_gammon_rate_is_close_to_xg2(xg2):
    m = met_from_gammon_rate(0.25, 15)
    assert m.mwc(1, 1) == 0.5 and m.mwc(4, 4) == 0.5
    assert np.allclose(m.pre_crawford + m.pre_crawford.T, 1.0)
    assert np.all(np.diff(m.pre_crawford, axis=1) > 0)
    assert np.abs(m.pre_crawford - xg2.pre_crawford[:15, :15]).max() < 0.02
    assert np.abs(m.post_crawford - xg2.post_crawford[:15]).max() < 0.02


def test_met_from_gammon_rate_without_gammons():
    m = met_from_gammon_rate(0.0, 5, free_drop_2=0.0, free_drop_4=0.0)
    # no gammons: 1-away vs 2-away in the Crawford game is 3/4 (lose once, then DMP)
    assert m.mwc(1, 2) == pytest.approx(0.75)
    with pytest.raises(MatchError):
        met_from_gammon_rate(1.5, 5)


def test_a_table_keeps_its_own_read_only_copy():
    """after() remembers what it read: a table built from the caller's arrays must not
    change when the caller changes them (a numpy integer, which the memo skips, read the
    new value where a plain int read the old)."""
    from engine.cube.met import MatchEquityTable, kazaross_xg2
    ref = kazaross_xg2()
    pre, post = np.array(ref.pre_crawford), np.array(ref.post_crawford)
    table = MatchEquityTable("mine", pre, post)
    before = table.after(3, 4, 1)
    pre[1, 3] = 0.9
    assert table.after(3, 4, 1) == table.after(np.int64(3), 4, 1) == before
    with pytest.raises(ValueError):
        table.pre_crawford[0, 0] = 0.1


# GNU Backgammon 1.07's own table extended to 64 away (`show matchequitytable 64` in
# gnubg, its percentages to four places): (away, away, MWC) pre-Crawford and the
# post-Crawford trailer's (away, MWC), its 25-away entry recomputed as gnubg does
GNUBG_64_PRE = [(26, 1, 0.000821), (30, 1, 0.000327), (30, 19, 0.187321),
                (41, 31, 0.252761), (64, 64, 0.5), (3, 40, 0.999738), (50, 45, 0.385975)]
GNUBG_64_POST = [(25, 0.001181), (26, 0.001061), (41, 0.000017)]


def test_the_default_table_reaches_gnu_backgammon_s_longest_match(xg2):
    """GNU Backgammon plays matches to 64 and extends its 25-away table to them; the
    engine's default table is Kazaross-XG2 extended the same way, to GNU Backgammon's
    figures, its own entries kept (the last post-Crawford one recomputed, as there)."""
    table = default_table()
    assert table.length == 64 and table.name == xg2.name
    assert np.array_equal(table.pre_crawford[:25, :25], xg2.pre_crawford)
    assert np.array_equal(table.post_crawford[:24], xg2.post_crawford[:24])
    for a, b, mwc in GNUBG_64_PRE:
        assert table.mwc(a, b) == pytest.approx(mwc, abs=6e-7), (a, b)
    for away, mwc in GNUBG_64_POST:
        assert table.mwc(away, 1, post_crawford=True) == pytest.approx(mwc, abs=6e-7)
    pre = table.pre_crawford
    assert np.allclose(pre + pre.T, 1.0, atol=1e-8)       # one player's MWC, the other's rest
    # farther away is worse, against any opponent (the extension's own rows and columns)
    assert np.all(np.diff(pre[24:], axis=0) <= 0) and np.all(np.diff(pre[:, 24:], axis=1) >= 0)
    post = table.post_crawford                           # two points farther, less
    assert np.all(post[26:] < post[24:-2]) and np.all((post > 0) & (post <= 0.5))
    assert extended(xg2, 20) is xg2                      # nothing to extend
    with pytest.raises(MatchError, match="65 points away"):
        table.mwc(65, 3)
    for bad in (0, 2.5, True):
        with pytest.raises(MatchError, match="length"):
            extended(xg2, bad)
