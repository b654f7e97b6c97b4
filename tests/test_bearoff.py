"""The one-sided bear-off tables: hand-computed cases, a slow reference built on the
engine's own move generator, race probabilities and the cache file."""

from functools import lru_cache
from itertools import product

import numpy as np
import pytest

from engine import Position
from engine.eval import bearoff as B
from engine.movegen.generate import successors
from engine.rules.dice import ALL_21


@pytest.fixture(scope="module")
def db():
    return B.build()


def test_hand_computed_boards(db):
    # one checker on the 1 point: always one roll
    assert db.rolls([1, 0, 0, 0, 0, 0])[1] == pytest.approx(1.0, abs=1e-15)
    # one checker on the 6 point: off in one roll unless 2-1, 3-1, 3-2, 4-1 or 1-1
    assert db.rolls([0, 0, 0, 0, 0, 1])[1] == pytest.approx(27 / 36, abs=1e-15)
    assert db.rolls([0, 0, 0, 0, 0, 1])[2] == pytest.approx(9 / 36, abs=1e-15)
    assert db.expected_rolls([0, 0, 0, 0, 0, 1]) == pytest.approx(1.25)
    # two checkers on the 6 point: one roll only with 3-3, 4-4, 5-5 or 6-6
    assert db.rolls([0, 0, 0, 0, 0, 2])[1] == pytest.approx(4 / 36, abs=1e-15)
    # two checkers on the 1 point: one roll, always
    assert db.rolls([2, 0, 0, 0, 0, 0])[1] == pytest.approx(1.0, abs=1e-15)
    # the empty board is done
    assert db.rolls([0] * 6)[0] == 1.0


def test_first_checker_off(db):
    # 15 on the 1 point: the first checker comes off at once
    assert db.first_off([15, 0, 0, 0, 0, 0])[1] == pytest.approx(1.0, abs=1e-15)
    # 15 on the 6 point: a 6, a non-double summing to 6 (5-1, 4-2), or 2-2, 3-3, 6-6
    assert db.first_off([0, 0, 0, 0, 0, 15])[1] == pytest.approx(17 / 36, abs=1e-15)
    # a board with a checker off already has it off
    assert db.first_off([0, 0, 0, 0, 0, 14])[0] == 1.0


def test_distributions_are_distributions(db):
    for table in (db.off, db.first):
        assert table.min() >= 0
        assert np.allclose(table.sum(axis=1), 1.0, atol=1e-12)
    assert db.off[:, 31].max() == 0.0          # 30 rolls at most
    assert db.off.shape == (54264, B.MAX_ROLLS)


def test_rank_is_a_bijection():
    boards = np.zeros((B.N_POSITIONS, B.POINTS + 1), np.int64)
    B._unrank_all(boards)
    assert len({tuple(b) for b in boards}) == B.N_POSITIONS
    assert boards[:, 1:].sum(axis=1).max() == 15


def _race(board):
    """A backgammon position with ``board`` (points 1..6) for the side to move and the
    opponent far from done, so that only the mover's race matters."""
    return Position("backgammon", tuple(board) + (0,) * 18, (0,) * 5 + (15,) + (0,) * 18,
                    off=(15 - sum(board), 0))


@lru_cache(maxsize=None)
def _reference_mean(board):
    """Expected rolls to bear off, by brute force over the real move generator."""
    if sum(board) == 0:
        return 0.0
    total = 0.0
    for dice, p in ALL_21:
        best = min(_reference_mean(tuple(s.them[:6])) for s in successors(_race(board),
                                                                           tuple(dice)))
        total += p * best
    return 1.0 + total


def test_means_match_a_reference_on_the_real_move_generator(db):
    boards = [b for b in product(range(4), repeat=6) if 0 < sum(b) <= 3]
    for board in boards:
        assert db.expected_rolls(board) == pytest.approx(_reference_mean(board), abs=1e-12), board


def test_race_probabilities_exact(db):
    def probs(me, them, **kw):
        pos = Position.from_literal(f"x {me}; o {them}", **kw)
        return db.probabilities(pos)

    # a checker on my 1 point: I win, whatever the opponent has
    assert probs("1:1", "6:3") == pytest.approx([1, 0, 0, 0, 0], abs=1e-12)
    # my checker on 6 against his on 1: I win if I bear off at once
    assert probs("6:1", "1:1")[0] == pytest.approx(27 / 36)
    # he has all 15 on his 6 point: my last checker wins a gammon
    assert probs("2:1", "6:15") == pytest.approx([1, 1, 0, 0, 0], abs=1e-12)
    # mirrored, but I roll first: I save the gammon with 17 rolls in 36
    p = probs("6:15", "1:1")
    assert p == pytest.approx([0, 0, 0, 19 / 36, 0], abs=1e-12)
    # I save the gammon only with a checker off at once: 24 non-doubles (any 5 or 6,
    # 4-1, 3-2, 4-2) and 2-2, 3-3, 5-5, 6-6 do it
    p = probs("6:14 5:1", "2:1")
    assert p[0] == pytest.approx(0, abs=1e-12) and p[3] == pytest.approx(8 / 36, abs=1e-12)


def test_applies_only_to_home_races():
    assert B.applies(Position.from_literal("x 6:2; o 1:1"))
    assert not B.applies(Position.start("backgammon"))
    assert not B.applies(Position.from_literal("x 7:1; o 1:1"))
    assert B.applies(Position.from_literal("x 6:2; o 1:1", variant="long_nardy"))
    # gul bara: once every double of both sides cascades (each side's 4th turn on)
    from dataclasses import replace

    from engine.rules.variants import CASCADE_GAME, get_rules
    gul = Position.from_literal("x 6:2; o 1:1", variant="gul_bara")
    assert not B.applies(gul)
    assert not B.applies(replace(gul, turns=(3, 2)))
    assert B.applies(replace(gul, turns=(3, 3)))
    game = get_rules("gul_bara").with_options(cascade=CASCADE_GAME)
    assert B.applies(replace(gul, turns=(2, 1)), game)
    assert not B.applies(replace(gul, turns=(1, 1)), game)


@pytest.fixture(scope="module")
def cascade_db():
    return B.build(cascade=True)


def test_cascade_hand_computed_boards(cascade_db):
    """Gul bara's tables: every double is a cascade (four d, four d + 1, ..., four 6)."""
    # two on the 6 point: off in one roll with any double (four 3s already do it)
    assert cascade_db.rolls([0, 0, 0, 0, 0, 2])[1] == pytest.approx(6 / 36, abs=1e-15)
    # 15 on the 6 point: a first checker off with a 6, 5-1, 4-2, or any double (1-1
    # moves one checker 6 -> 2 with its ones and off with a two)
    assert cascade_db.first_off([0, 0, 0, 0, 0, 15])[1] == pytest.approx(20 / 36, abs=1e-15)
    # one checker anywhere is off in one roll of a double
    for p in range(6):
        board = [0] * 6
        board[p] = 1
        assert cascade_db.off[cascade_db.index(board), 2:].sum() <= 30 / 36 + 1e-15
    for table in (cascade_db.off, cascade_db.first):
        assert table.min() >= 0 and np.allclose(table.sum(axis=1), 1.0, atol=1e-12)
    assert cascade_db.cascade and not B.build.__defaults__[0]


def _gul_race(board):
    """A gul bara position, every double a cascade, with ``board`` (points 1..6) for the
    side to move and the opponent far from done."""
    return Position("gul_bara", tuple(board) + (0,) * 18, (0,) * 5 + (15,) + (0,) * 18,
                    off=(15 - sum(board), 0), turns=(5, 5))


@lru_cache(maxsize=None)
def _cascade_reference_mean(board):
    """Expected rolls to bear off in gul bara, by brute force over the real move
    generator's cascades."""
    if sum(board) == 0:
        return 0.0
    total = 0.0
    for dice, p in ALL_21:
        kids = successors(_gul_race(board), tuple(dice))
        best = min(_cascade_reference_mean(tuple(s.them[:6])) for s in kids)
        assert all(not s.pending for s in kids)      # a home board plays every die
        total += p * best
    return 1.0 + total


def test_cascade_means_match_a_reference_on_the_real_move_generator(cascade_db):
    boards = [b for b in product(range(4), repeat=6) if 0 < sum(b) <= 3]
    for board in boards:
        assert cascade_db.expected_rolls(board) == pytest.approx(
            _cascade_reference_mean(board), abs=1e-12), board


def test_gul_bara_home_races_are_valued_by_the_cascade_tables(cascade_db):
    """The network valued them: two checkers on my 6 point against fifteen on his, none
    off, a gammon chance of 0.93 at 0-ply where the tables give about 0.46."""
    from dataclasses import replace

    from engine.eval.evaluator import Evaluator
    ev = Evaluator.load("gul_bara")
    assert ev.bearoff is not None and ev.bearoff.cascade
    pos = replace(Position.from_literal("x 6:2; o 6:15", variant="gul_bara"), turns=(30, 30))
    got = ev.probabilities([pos])[0]
    assert got == pytest.approx(cascade_db.probabilities(pos), abs=1e-12)
    # he can finish in two rolls of cascades (4.4%): I lose only needing three or more
    assert 0.99 < got[0] < 1.0 and 0.40 < got[1] < 0.50
    # before every double cascades the network values it (the tables would be wrong)
    early = replace(pos, turns=(2, 5))
    assert not B.applies(early)
    with pytest.raises(B.BearoffError):
        cascade_db.probabilities(early)
    with pytest.raises(B.BearoffError, match="cascade"):
        B.build().probabilities(pos)                  # backgammon's tables


def test_cache_file_round_trip(tmp_path, db):
    path = B.save(db, tmp_path / "bo.npz")
    again = B.read(path)
    assert np.array_equal(again.off, db.off) and np.array_equal(again.first, db.first)
    (tmp_path / "bad.npz").write_bytes(b"nope")
    with pytest.raises(B.BearoffError, match="bad.npz"):
        B.read(tmp_path / "bad.npz")
    # a damaged cache (a corrupt deflate stream here) is the typed error, never zlib's
    data = bytearray(path.read_bytes())
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
    (tmp_path / "new.npz").write_bytes(bytes(data))
    with pytest.raises(B.BearoffError, match="new.npz"):
        B.read(tmp_path / "new.npz")
    loaded = B.load(tmp_path / "new.npz")          # built again and cached over it
    assert np.array_equal(loaded.off, db.off)
    assert np.array_equal(B.read(tmp_path / "new.npz").first, db.first)
    assert np.array_equal(again.two, db.two) and again.two.shape == (B.N_SMALL, B.N_SMALL)
    # a two-sided table out of range, or missing from the plain tables' file
    bad = np.array(db.two)
    bad[5, 7] = 1.5
    np.savez(tmp_path / "two.npz", format=np.array(B.FORMAT), version=np.array(B.VERSION),
             off=db.off, first=db.first, two=bad, cubeful=db.cubeful)
    with pytest.raises(B.BearoffError, match="two-sided table holds values outside"):
        B.read(tmp_path / "two.npz")
    bad = np.array(db.cubeful)
    bad[1, 5, 7] = np.nan
    np.savez(tmp_path / "cube.npz", format=np.array(B.FORMAT), version=np.array(B.VERSION),
             off=db.off, first=db.first, two=db.two, cubeful=bad)
    with pytest.raises(B.BearoffError, match="cubeful table holds equities outside"):
        B.read(tmp_path / "cube.npz")
    np.savez(tmp_path / "none.npz", format=np.array(B.FORMAT), version=np.array(B.VERSION),
             off=db.off, first=db.first, two=db.two)
    with pytest.raises(B.BearoffError, match=r"arrays \['first', 'format', 'off', "
                       r"'two', 'version'\]; expected .*'cubeful'.*: damaged"):
        B.read(tmp_path / "none.npz")
    assert np.array_equal(again.cubeful, db.cubeful)
    # the plain tables' file asked for as gul bara's is kept, not built over
    with pytest.raises(B.BearoffError, match="refusing to overwrite"):
        B.load(path, cascade=True)
    assert np.array_equal(B.read(path).two, db.two)


def test_an_old_or_other_kind_of_cache_file_is_named_as_such(tmp_path, db):
    """A version-1 cache (no two-sided table) and the other kind's tables were both
    "not a bear-off file (arrays [...])": the array count was checked before the tag."""
    np.savez(tmp_path / "v1.npz", format=np.array(B.FORMAT), version=np.array(1),
             off=db.off, first=db.first)
    with pytest.raises(B.BearoffError, match=r"format 'nardy-bearoff-os6' version 1; "
                                             r"expected 'nardy-bearoff-os6' 2"):
        B.read(tmp_path / "v1.npz")
    assert np.array_equal(B.load(tmp_path / "v1.npz").two, db.two)    # rebuilt over it
    np.savez(tmp_path / "c.npz", format=np.array(B.FORMAT_CASCADE),
             version=np.array(B.VERSION), off=db.off, first=db.first)
    with pytest.raises(B.BearoffError, match="format 'nardy-bearoff-os6-cascade'"):
        B.read(tmp_path / "c.npz")
    with pytest.raises(B.BearoffError, match="format 'nardy-bearoff-os6' version 2; "
                                             "expected 'nardy-bearoff-os6-cascade'"):
        B.read(B.save(db, tmp_path / "plain.npz"), cascade=True)


# --------------------------------------------------------------------- two-sided table
def _literal(board) -> str:
    return " ".join(f"{p + 1}:{c}" for p, c in enumerate(board) if c)


def _best_over_rolls(me, them, worth):
    """The mean over the 21 rolls of the side to move's best ``worth(board after)``
    (his home board, points 1..6) among the roll's plays, by the real move generator,
    in the home race ``me`` against ``them``."""
    pos = Position.from_literal(f"x {_literal(me)}; o {_literal(them)}")
    return sum(p * max(worth(tuple(s.them[:6])) for s in successors(pos, tuple(dice)))
               for dice, p in ALL_21)


@lru_cache(maxsize=None)
def _reference_win(me, them):
    """The side to move's chance to win the race ``me`` against ``them`` (home boards,
    points 1..6), both playing to win, by brute force over the real move generator."""
    return _best_over_rolls(me, them, lambda mine: 1.0 if sum(mine) == 0
                            else 1.0 - _reference_win(them, mine))


def test_two_sided_table_matches_a_reference_on_the_real_move_generator(db):
    small = [b for b in product(range(3), repeat=6) if 0 < sum(b) <= 2]
    for me in small:
        for them in small:
            assert db.win_chance(me, them) == pytest.approx(_reference_win(me, them),
                                                            abs=1e-12), (me, them)
    rng = np.random.default_rng(3)
    for _ in range(2):
        me, them = (tuple(int(x) for x in np.bincount(rng.integers(0, 6, 3), minlength=6))
                    for _ in range(2))
        assert db.win_chance(me, them) == pytest.approx(_reference_win(me, them), abs=1e-12)


@lru_cache(maxsize=None)
def _reference_no_double(me, them, owner):
    """The side to move's money equity (cube units) if he does not double now, with the
    cube ``owner`` ("C" centred, "M" his, "O" the opponent's), both sides playing and
    doubling for the most from then on, by brute force over the real move generator."""
    theirs = {"C": "C", "M": "O", "O": "M"}[owner]

    def worth(mine):
        if sum(mine) == 0:
            return 1.0
        nd = _reference_no_double(them, mine, theirs)
        if theirs != "O":               # he may double: take at twice, or pass
            nd = max(nd, min(2.0 * _reference_no_double(them, mine, "O"), 1.0))
        return -nd

    return _best_over_rolls(me, them, worth)


def test_two_sided_money_cube_matches_a_reference_on_the_real_move_generator(db):
    small = [b for b in product(range(3), repeat=6) if 0 < sum(b) <= 2]
    for me in small:
        for them in small:
            pos = Position.from_literal(f"x {_literal(me)}; o {_literal(them)}")
            for owner, key in (("C", "centre"), ("M", "me"), ("O", "them")):
                nd, dt = db.money_cube(pos, key)
                assert nd == pytest.approx(_reference_no_double(me, them, owner), abs=1e-12)
                if key == "them":
                    assert dt is None
                else:
                    assert dt == pytest.approx(2 * _reference_no_double(me, them, "O"),
                                               abs=1e-12)
    # one checker each on the 6 point: I bear off with 27 rolls of 36, he then with 27:
    # no double 27/36 - 9/36 (he doubles me out after a miss); doubled, his redouble
    # after my miss leaves me the same, 2 x 1/2: a tie of take and pass
    pos = Position.from_literal("x 6:1; o 6:1")
    assert db.money_cube(pos, "centre") == pytest.approx((0.5, 1.0), abs=1e-15)
    # with my cube he cannot double me out after my miss: he bears off with 27 rolls
    # of 36, else I do (my checker is on my 1 to 4 point by then)
    assert db.money_cube(pos, "me")[0] == pytest.approx(27 / 36 - 9 / 36 * (27 / 36 - 9 / 36),
                                                        abs=1e-15)
    # not a short bear-off: no exact equities
    assert db.money_cube(Position.from_literal("x 6:7; o 6:1"), "centre") is None
    assert db.money_cube(Position.start(), "centre") is None
    for where in (pos, Position.start()):          # a bad owner, whatever the position
        with pytest.raises(B.BearoffError, match="owner = 'center'"):
            db.money_cube(where, "center")


def test_two_sided_table_where_the_opponent_is_off_next_roll(db):
    """Against one checker on the ace point the mover wins only by bearing off now:
    the one-sided chance of one roll, for every board of six checkers or fewer."""
    boards = np.zeros((B.N_POSITIONS, B.POINTS + 1), np.int64)
    B._unrank_all(boards)
    for r in B.small_ranks()[1:]:
        board = boards[r, 1:]
        assert db.win_chance(board, [1, 0, 0, 0, 0, 0]) == pytest.approx(db.off[r, 1],
                                                                          abs=1e-12)


def test_two_sided_table_values_home_races_of_six_checkers_or_fewer(db):
    from engine.eval.evaluator import Evaluator
    ev = Evaluator.load("backgammon")
    # six against five: the two-sided table; the one-sided chance differs here
    pos = Position.from_literal("x 6:2 5:2 2:2; o 6:1 4:2 3:1 1:1")
    exact = db.win_chance([0, 2, 0, 0, 2, 2], [1, 0, 1, 2, 0, 1])
    assert db.probabilities(pos) == pytest.approx([exact, 0, 0, 0, 0], abs=1e-15)
    assert ev.probabilities([pos])[0] == pytest.approx([exact, 0, 0, 0, 0], abs=1e-15)
    one_sided = np.zeros(5)
    from engine.rules.states import position_state
    B.race_probs(position_state(pos), *db.arrays(), np.zeros((1, 1)), db.small, one_sided)
    assert abs(one_sided[0] - exact) > 1e-4
    # seven checkers: the one-sided distributions
    pos = Position.from_literal("x 6:3 5:2 2:2; o 6:1 4:2 3:1 1:1")
    B.race_probs(position_state(pos), *db.arrays(), np.zeros((1, 1)), db.small, one_sided)
    assert db.probabilities(pos) == pytest.approx(one_sided, abs=1e-15)
    # the cascade tables have none, and the table refuses boards it does not hold
    with pytest.raises(B.BearoffError, match="at most 6 checkers"):
        db.win_chance([0, 0, 0, 0, 0, 7], [1, 0, 0, 0, 0, 0])
    with pytest.raises(B.BearoffError, match="no checker left"):
        db.win_chance([0, 0, 0, 0, 0, 1], [0] * 6)


# --------------------------------------------------------------------- race bounds
def _race_of(me: dict, them: dict, off=(0, 0), variant="backgammon") -> Position:
    """A position from ``{point: checkers}`` of each side (its own points)."""
    boards = [[0] * 24, [0] * 24]
    for board, side in zip(boards, (me, them)):
        for q, n in side.items():
            board[q - 1] = n
    return Position(variant, boards[0], boards[1], [0, 0], list(off))


def _random_race(rng) -> Position:
    """A backgammon race: the mover's checkers below his point ``top``, the opponent's
    below his ``25 - top``, each side with 1..15 on the board (the rest off), often far
    apart, the races a gammon is decided in."""
    top = int(rng.integers(1, 24))
    sides, off = [], []
    for hi in (top, 24 - top):
        n = int(rng.integers(1, 16))
        lo = int(rng.integers(1, hi + 1))
        board = {}
        for q in rng.integers(lo, hi + 1, n):
            board[int(q)] = board.get(int(q), 0) + 1
        sides.append(board)
        off.append(15 - n)
    return _race_of(sides[0], sides[1], off)


@pytest.fixture(scope="module")
def shipped():
    from engine.eval.evaluator import Evaluator
    return Evaluator.load("backgammon")


def test_counted_turns_make_race_results_certain(shipped):
    cases = [
        # two on my ace against his fifteen on his 13-point: I am off at once, a gammon
        (_race_of({1: 2}, {13: 15}, (13, 0)), (1, 1, 0, 0, 0)),
        # ... and with one of his on his 20-point, in my home board: a backgammon
        (_race_of({1: 2}, {20: 1, 13: 14}, (13, 0)), (1, 1, 1, 0, 0)),
        # his two on his ace: he is off with his first roll, before my 20-point checker
        (_race_of({20: 1, 6: 2}, {1: 2}, (12, 13)), (0, 0, 0, 0, 0)),
        # my fifteen on my 13-point lose a gammon to his two on his ace
        (_race_of({13: 15}, {1: 2}, (0, 13)), (0, 0, 0, 1, 0)),
        # four on my ace (two turns at most) against his fifteen on his 9-point (a
        # checker off in four turns at the least): only the tables' distribution says it
        (_race_of({1: 4}, {9: 15}, (11, 0)), (1, 1, 0, 0, 0)),
        # three on my 6-point (the tables: at most 6 turns, pips two a turn: 9) against
        # his fifteen on his 13-point (8 turns before one is off)
        (_race_of({6: 3}, {13: 15}, (12, 0)), (1, 1, 0, 0, 0)),
    ]
    for pos, want in cases:
        assert tuple(shipped.probabilities([pos])[0]) == pytest.approx(want, abs=1e-6), pos


def test_portes_races_are_counted_too():
    """Portes has backgammon's board and races, without the triple game: the same
    counting, no backgammon."""
    from engine.eval.evaluator import Evaluator
    portes = Evaluator.load("portes")
    cases = [
        (_race_of({1: 2}, {20: 1, 13: 14}, (13, 0), "portes"), (1, 1, 0, 0, 0)),
        (_race_of({13: 15}, {1: 2}, (0, 13), "portes"), (0, 0, 0, 1, 0)),
        (_race_of({1: 4}, {9: 15}, (11, 0), "portes"), (1, 1, 0, 0, 0)),
    ]
    for pos, want in cases:
        assert tuple(portes.probabilities([pos])[0]) == pytest.approx(want, abs=1e-6), pos


def test_race_bounds_match_the_slow_reference(shipped):
    from test_search import sane_probs
    rng = np.random.default_rng(5)
    races = [_random_race(rng) for _ in range(400)]
    assert shipped.race is not None
    got = shipped.probabilities(races)
    want = sane_probs(shipped.race.probabilities(races), races, shipped.bearoff)
    assert np.allclose(got, want, atol=1e-5)
    # the bounds did something: some races certain, some bounded, most left alone
    assert 20 < np.sum((got == 0) | (got == 1)) < 5 * len(races)


def _play_out(pos: Position, rng) -> tuple[int, int]:
    """``(winner, points)`` of ``pos`` played to its end by random legal plays: winner
    0 is the side to move in ``pos``."""
    from engine.rules.scoring import result
    side = 0
    while True:
        dice = tuple(int(d) for d in rng.integers(1, 7, 2))
        kids = successors(pos, dice)
        pos = kids[int(rng.integers(len(kids)))]
        side ^= 1
        r = result(pos)
        if r is not None:
            # the winner is given from the side to move in the finished position
            return (side ^ r.winner), r.points


def test_certain_results_hold_whatever_the_play(shipped):
    """Where the counting makes a race certain, random play never ends it otherwise:
    the counts bound what any play can do."""
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(3000):
        pos = _random_race(rng)
        p = shipped.probabilities([pos])[0]
        certain = [k for k in range(5) if p[k] in (0.0, 1.0)]
        if p[0] not in (0.0, 1.0):
            continue
        checked += 1
        for _ in range(4):
            winner, points = _play_out(pos, rng)
            assert winner == (0 if p[0] == 1.0 else 1), pos
            if winner == 0 and 1 in certain:
                assert (points >= 2) == (p[1] == 1.0), pos
            if winner == 1 and 3 in certain:
                assert (points >= 2) == (p[3] == 1.0), pos
        if checked >= 60:
            break
    assert checked >= 60
