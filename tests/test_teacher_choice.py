"""``benchmarks/teacher_choice.py``: a labelled set's pick in a decision is the candidate
its labels rate best for the mover (the labels are the opponent's, who is to roll), and
sets of other positions are refused by name. The judging needs GNU Backgammon and is
not run here."""

import numpy as np
import pytest
from conftest import benchmark_module


@pytest.fixture(scope="module")
def teacher():
    return benchmark_module("teacher_choice")


def outputs(win: float) -> list:
    """The five cumulative outputs of a position its side to move wins ``win`` of,
    never a gammon: equity ``2 * win - 1``."""
    return [win, 0.0, 0.0, 0.0, 0.0]


def test_the_pick_is_the_candidate_worst_for_the_opponent(teacher):
    # decision 7: the opponent wins 60%, 30%, 30% after the three plays: the mover picks
    # the second (the first of the two ties); decision 3: one candidate
    targets = np.array([outputs(0.6), outputs(0.3), outputs(0.3), outputs(0.9)], np.float32)
    decision = np.array([7, 7, 7, 3])
    assert teacher.picks(targets, decision) == {7: 1, 3: 3}
    gammons = np.array([[0.5, 0.4, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.3, 0.0]], np.float32)
    assert teacher.picks(gammons, np.array([1, 1])) == {1: 1}    # equity +0.4 against -0.3


def test_sets_of_other_positions_are_refused_by_name(teacher, tmp_path):
    states = np.zeros((3, 4), np.int16)
    decision = np.array([0, 0, 1])
    targets = np.zeros((3, 5), np.float32)
    first = tmp_path / "a.npz"
    np.savez(first, states=states, targets=targets, decision=decision)
    s, t, d = teacher.load(str(first))
    other = tmp_path / "b.npz"
    np.savez(other, states=states + 1, targets=targets, decision=decision)
    with pytest.raises(SystemExit, match="b.npz: not the positions and decisions"):
        teacher.load(str(other), s, d)
    bare = tmp_path / "c.npz"
    np.savez(bare, states=states, decision=decision)
    with pytest.raises(SystemExit, match="c.npz: not a labelled position set"):
        teacher.load(str(bare))
    short = tmp_path / "d.npz"
    np.savez(short, states=states, targets=targets[:2], decision=decision)
    with pytest.raises(SystemExit, match=r"d.npz: expected targets \(n x 5\)"):
        teacher.load(str(short))
