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
    assert not B.applies(Position.from_literal("x 6:2; o 1:1", variant="gul_bara"))
    assert B.applies(Position.from_literal("x 6:2; o 1:1", variant="long_nardy"))


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
