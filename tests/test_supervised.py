"""Training from the engine's own search: position sets, their labels, supervised
training in torch and its export to the engine's model format."""

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from engine.cli._common import folder_lock
from engine.errors import NardyError
from engine.eval.evaluator import model_path
from engine.eval.network import Network
from engine.movegen.generate import successors
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.scoring import equities, result
from engine.search.nply import Search
from training.label import label
from training.positions import (
    BEAROFF,
    CONTACT,
    CRASHED,
    RACE,
    SOURCES,
    PositionSet,
    PositionSetError,
    classify,
    selfplay_positions,
    setup_positions_set,
)


def position(me: dict, them: dict) -> np.ndarray:
    """A backgammon state: ``me`` / ``them`` map points (own numbering, 25 = bar) to
    checkers; the rest are borne off."""
    s = np.zeros(L.STATE_LEN, np.int16)
    for base, side in ((L.ME, me), (L.THEM, them)):
        for p, n in side.items():
            s[base + p] = n
        s[base + L.OFF] = 15 - sum(side.values())
    return s


def test_classes_follow_the_geometry():
    start = Position.start("backgammon").to_array()
    race = position({6: 5, 8: 5, 12: 5}, {6: 5, 8: 5, 12: 5})        # 12 + 12 < 25
    home = position({1: 3, 5: 2}, {2: 4, 6: 1})
    crashed = position({1: 5, 2: 4, 3: 1, 24: 2}, {6: 5, 8: 5, 13: 5})   # 3 live + 2 back
    contact = position({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    bar = position({25: 1, 6: 14}, {4: 5, 5: 5, 6: 5})
    got = classify(np.stack([start, race, home, crashed, contact, bar]))
    assert got.tolist() == [CONTACT, RACE, BEAROFF, CRASHED, CONTACT, CONTACT]


def test_selfplay_and_setup_sets_are_reproducible_and_round_trip(tmp_path):
    net = Network.load("models/backgammon.npz")
    a = selfplay_positions(net, 20, seed=4, epsilon=0.2, keep=0.5, model="released")
    b = selfplay_positions(net, 20, seed=4, epsilon=0.2, keep=0.5, model="released")
    np.testing.assert_array_equal(a.states, b.states)
    assert len(a) > 100 and (a.states[:, L.NPEND] == 0).all()
    for row in a.states[:50]:
        Position.from_array(row, "backgammon").check()
    s = setup_positions_set("backgammon", 60, seed=2)
    assert len(s) == 60 and set(s.counts()) == {"contact", "crashed", "race", "bearoff"}
    both = PositionSet.join([a, s])
    assert [p["source"] for p in both.info["parts"]] == ["selfplay", "setup"]
    path = both.save(tmp_path / "p.npz")
    back = PositionSet.load(path)
    np.testing.assert_array_equal(back.states, both.states)
    np.testing.assert_array_equal(back.klass, classify(both.states))
    assert back.targets is None and back.info["parts"][0]["epsilon"] == 0.2


def test_candidates_are_the_networks_best_plays_of_the_roll_thrown():
    net = Network.load("models/backgammon.npz")
    plain = selfplay_positions(net, 6, seed=4, keep=0.5)
    cand = selfplay_positions(net, 6, seed=4, keep=0.5, candidates=3)
    assert cand.info["parts"][0]["source"] == "candidate"
    assert (cand.source == SOURCES.index("candidate")).all()
    assert len(plain) < len(cand) <= 3 * len(plain)
    assert all(result(Position.from_array(r, "backgammon")) is None for r in cand.states)
    # the first kept position's candidates are its best plays for one of the rolls
    pos = Position.from_array(plain.states[0], "backgammon")
    keys = [Position.from_array(r, "backgammon").key() for r in cand.states]
    found = 0
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            kids = [k for k in successors(pos, (d1, d2)) if result(k) is None]
            mover = -equities(net.probabilities(kids))
            top = [kids[i].key() for i in np.argsort(-mover, kind="stable")[:3]]
            found += keys[:len(top)] == top
    assert found >= 1
    # each decision's candidates are numbered together, decision after decision
    d = cand.decision
    assert d is not None and d.dtype == np.int64 and len(d) == len(cand)
    assert d[0] == 0 and set(np.diff(d).tolist()) <= {0, 1}
    assert np.bincount(d).max() <= 3 and np.bincount(d).min() >= 1
    assert plain.decision is None


def test_decisions_survive_saving_labelling_subsets_and_joins(tmp_path):
    net = Network.load("models/backgammon.npz")
    cand = selfplay_positions(net, 2, seed=5, keep=0.3, candidates=2)
    n = int(cand.decision.max()) + 1
    back = PositionSet.load(cand.save(tmp_path / "c.npz"))
    np.testing.assert_array_equal(back.decision, cand.decision)
    labelled = label(back, None, 0)
    np.testing.assert_array_equal(labelled.decision, cand.decision)
    np.testing.assert_array_equal(back.subset(np.arange(3, 9)).decision, cand.decision[3:9])
    setups = setup_positions_set("backgammon", 5, seed=1)
    both = PositionSet.join([cand, setups, cand])       # the second copy's numbers follow
    np.testing.assert_array_equal(both.decision, np.r_[cand.decision, [-1] * 5,
                                                       cand.decision + n])
    assert PositionSet.join([setups, setups]).decision is None
    # numbers near 2**63 wrapped to negative ones past the next part's (read as "no
    # decision"); where they would, each part's decisions are numbered afresh, in their
    # order, and elsewhere as before (a subset's gaps kept: the data digests of runs on
    # joined sets stay what they were)
    gaps = cand.subset(np.flatnonzero(cand.decision >= 3))
    np.testing.assert_array_equal(PositionSet.join([gaps, gaps]).decision,
                                  np.r_[gaps.decision, gaps.decision + n])
    high = cand.subset(np.arange(len(cand)))
    high.decision = np.where(cand.decision >= 0, cand.decision + np.int64(2**63 - 1 - n), -1)
    np.testing.assert_array_equal(PositionSet.join([high, high, cand]).decision,
                                  np.r_[cand.decision, cand.decision + n,
                                        cand.decision + 2 * n])
    bad = cand.subset(np.arange(len(cand)))
    bad.decision = bad.decision.copy()
    bad.decision[2] = -3
    with pytest.raises(PositionSetError, match="decision of position 2 is -3; expected -1"):
        bad.save(tmp_path / "bad.npz")
    bad.decision = bad.decision[:4]
    with pytest.raises(PositionSetError, match=r"decision is int64 \(4,\); expected int64"):
        bad.save(tmp_path / "bad.npz")


def test_a_set_keeps_the_classes_asked_for(tmp_path):
    s = setup_positions_set("backgammon", 200, seed=5)
    races = s.of_classes(["race", "bearoff"])
    assert 0 < len(races) < len(s)
    assert set(races.klass.tolist()) <= {RACE, BEAROFF}
    np.testing.assert_array_equal(races.states, s.states[np.isin(s.klass, [RACE, BEAROFF])])
    back = PositionSet.load(races.save(tmp_path / "r.npz"))
    assert back.info["classes"] == ["race", "bearoff"]
    with pytest.raises(PositionSetError, match="class 'races': expected one of contact"):
        s.of_classes(["races"])


def _meets(variant: str, state: np.ndarray) -> bool:
    """Slow reference of contact: some checker of one side can still come to a point
    where a checker of the other side stands or will pass (its own point counted only
    for the checker that stands there: a pinned checker and the one on top of it never
    meet again). Points are followed one by one in a common frame (my numbering): my
    checker on my point p (25: the bar) passes p - 1 .. 1; the other side's checker on
    its q passes its q - 1 .. 1, which are my 25 - q' (opposite directions) or q' + 12 /
    q' - 12 (the same direction)."""
    same = variant in ("fevga", "long_nardy", "gul_bara")

    def mine(q):                       # the other side's point q in my numbering
        return (q + 12 if q <= 12 else q - 12) if same else 25 - q

    paths = []
    for base, conv in ((L.ME, lambda p: p), (L.THEM, mine)):
        side = []
        for p in range(1, 26):
            if state[base + p] > 0:
                ahead = {conv(r) for r in range(1, min(p, 25))}
                side.append((conv(p) if p < 25 else None, ahead))
        paths.append(side)
    return any(ahead_x & ({at_y} | ahead_y) or ahead_y & ({at_x} | ahead_x)
               for at_x, ahead_x in paths[0] for at_y, ahead_y in paths[1])


@pytest.mark.parametrize("variant", ["backgammon", "portes", "plakoto", "fevga",
                                     "long_nardy", "gul_bara"])
def test_classes_agree_with_a_slow_reference_in_every_game(variant):
    """Races as the slow reference :func:`_meets` finds them, over random set-ups and
    self-play of every game; bear-off: a race with both sides home; crashed only in the
    games that hit."""
    ps = setup_positions_set(variant, 600, seed=3)
    states = np.concatenate([ps.states, selfplay_positions(
        Network.load(model_path(variant)), 6, seed=4, keep=0.5).states])
    klass = classify(states, variant)
    race = np.array([not _meets(variant, s) for s in states])
    np.testing.assert_array_equal(np.isin(klass, [RACE, BEAROFF]), race)
    home = np.array([s[L.ME + 7:L.ME + 26].sum() == 0 and s[L.THEM + 7:L.THEM + 26].sum() == 0
                     for s in states])
    np.testing.assert_array_equal(klass == BEAROFF, race & home)
    assert race.any() and (~race).any() and (klass == BEAROFF).any()
    assert ((klass == CRASHED).any()
            == (variant in ("backgammon", "portes")))


def test_bad_position_files_get_a_typed_error(tmp_path):
    with pytest.raises(PositionSetError, match="no such file"):
        PositionSet.load(tmp_path / "none.npz")
    np.savez(tmp_path / "x.npz", states=np.zeros((2, 3), np.int16),
             klass=np.zeros(2, np.int8), source=np.zeros(2, np.int8),
             card=np.frombuffer(json.dumps({"format": "nardy-positions",
                                            "variant": "backgammon"}).encode(), np.uint8))
    with pytest.raises(PositionSetError, match="expected int16"):
        PositionSet.load(tmp_path / "x.npz")
    good = setup_positions_set("backgammon", 4, seed=5)
    for row, col, value, why in ((2, L.ME + 3, 40, "add up to 15"),
                                 (1, L.THEM + 5, -1, "negative"),
                                 (3, L.STATE_LEN - 1, 7, "not zero")):
        bad = good.subset(np.arange(4))
        bad.states = bad.states.copy()
        bad.states[row, col] = value
        with pytest.raises(PositionSetError, match=f"states: row {row} is not a legal "
                                                   f"backgammon position: .*{why}"):
            PositionSet.load(bad.save(tmp_path / "bad.npz"))
    with pytest.raises(PositionSetError, match="'tavla': position sets serve backgammon, portes, plakoto"):
        setup_positions_set("tavla", 3, seed=1)


def test_labels_are_the_search_values_whatever_the_workers(tmp_path):
    ps = setup_positions_set("backgammon", 12, seed=5)
    search = Search.load("backgammon", prune=False)    # labels rate every play by default
    one = label(ps, None, 1, workers=1, chunk=5)
    np.testing.assert_allclose(one.targets, search.values_of(ps.states, 1), atol=1e-6)
    for row, t in zip(ps.states[:3], one.targets[:3]):
        e = search.evaluate(Position.from_array(row, "backgammon"), ply=1)
        np.testing.assert_allclose(t, e.probabilities, atol=1e-6)
    parts = tmp_path / "parts"
    two = label(ps, None, 1, workers=2, chunk=5, parts=parts)
    np.testing.assert_array_equal(one.targets, two.targets)
    assert len(list(parts.glob("part-*.npz"))) == 3
    again = label(ps, None, 1, workers=2, chunk=5, parts=parts)   # resumed: all read
    assert again.info["labels"]["labelled_now"] == 0
    np.testing.assert_array_equal(again.targets, one.targets)
    # the chunks of another labelling are not taken for this one's (they were: a
    # 0-ply labelling's chunks were read back as 1-ply labels, without a word)
    for other in (dict(ply=0), dict(prune=True), dict(model=str(model_path("backgammon")
                                                                   .with_suffix(".prune.npz")))):
        kw = {"ply": 1, "model": None, **other}
        with pytest.raises(PositionSetError, match="another labelling"):
            label(ps, kw.pop("model"), kw.pop("ply"), workers=1, chunk=5, parts=parts, **kw)
    with pytest.raises(PositionSetError, match="ply"):
        label(ps, None, 9)
    # the same model file named another way, or a copy of it, is the same labelling
    # (helper 132: refused for the path's text)
    import shutil
    byname = tmp_path / "byname"
    named = label(ps, "models/backgammon.npz", 1, workers=1, chunk=5, parts=byname)
    shutil.copy("models/backgammon.npz", tmp_path / "copy.npz")
    for model in (str(Path("models/backgammon.npz").resolve()), str(tmp_path / "copy.npz")):
        again = label(ps, model, 1, workers=1, chunk=5, parts=byname)
        assert again.info["labels"]["labelled_now"] == 0
        np.testing.assert_array_equal(again.targets, named.targets)
    # --prune: the values of the search that picks its plays with the pruning network
    pruned = label(ps, None, 1, workers=1, chunk=5, prune=True)
    np.testing.assert_allclose(pruned.targets, Search.load("backgammon", prune=True)
                               .values_of(ps.states, 1), atol=1e-6)
    assert pruned.info["labels"]["prune"] and not one.info["labels"]["prune"]
    assert not np.allclose(pruned.targets, one.targets, atol=1e-4)
    # the held-out measure: 0-ply against the 1-ply labels, overall and by class
    from training.supervised import errors
    err = errors(Network.load("models/backgammon.npz"), one)
    assert 0 < err["all"] < 0.5 and "source:setup" in err
    assert PositionSet.join([one]).info["labels"]["ply"] == 1


def test_rollout_labels_are_the_positions_rollouts(tmp_path):
    from engine.search.rollout import Rollout, RolloutSettings
    ps = setup_positions_set("backgammon", 6, seed=8)
    search = Search.load("backgammon")
    settings = RolloutSettings(trials=36, truncate=2, seed=3)
    got = label(ps, None, 0, workers=1, chunk=4, rollout=settings)
    for row, t in zip(ps.states, got.targets):
        r = Rollout(search, settings).position(Position.from_array(row, "backgammon"))
        want = np.clip(r.probabilities, 0, 1)
        want[1], want[2] = min(want[1], want[0]), min(want[2], want[1], want[0])
        want[3] = min(want[3], 1 - want[0])
        want[4] = min(want[4], want[3])
        np.testing.assert_allclose(t, want, atol=1e-6)
    assert got.info["labels"]["trials"] == 36 and got.info["labels"]["truncate"] == 2
    two = label(ps, None, 0, workers=2, chunk=4, rollout=settings)
    np.testing.assert_array_equal(got.targets, two.targets)
    # in the cumulative order (a luck-adjusted mean need not be; helper 53 found
    # win_backgammon above win_gammon in 20 of 705 such labels)
    t = got.targets.astype(np.float64)
    assert np.all(t[:, 1] <= t[:, 0]) and np.all(t[:, 2] <= t[:, 1])
    assert np.all(t[:, 3] <= 1 - t[:, 0] + 1e-7) and np.all(t[:, 4] <= t[:, 3])


def test_chunks_of_another_race_or_pruning_network_are_not_reused(tmp_path, monkeypatch):
    """The chunk folder recorded the model's digest but not its race and pruning
    networks': after the race network changed, a rerun read every old chunk back."""
    import shutil
    folder = tmp_path / "models"
    folder.mkdir()
    for f in Path("models").glob("backgammon*"):
        shutil.copy(f, folder / f.name)
    monkeypatch.setenv("NARDY_MODELS", str(folder))
    ps = setup_positions_set("backgammon", 6, seed=8)
    parts = tmp_path / "lab.parts"
    first = label(ps, None, 1, workers=1, chunk=3, parts=parts, prune=True)
    assert first.info["labels"]["race_network"] == str(folder / "backgammon.race.npz")
    other = Network.load(folder / "backgammon.race.npz")
    other.b2 = other.b2 + 0.5                      # another race network, same shapes
    other.save(folder / "backgammon.race.npz")
    with pytest.raises(PositionSetError, match="another labelling.*race_sha256"):
        label(ps, None, 1, workers=1, chunk=3, parts=parts, prune=True)


def test_labels_of_a_certain_loss_are_probabilities(tmp_path):
    """A 2-ply value summed over 21 certain losses came out at 1 + 2e-16 (its win at
    -2e-16), and saving the labels failed ('expected five probabilities 0..1'), as a
    luck-adjusted rollout mean past 0 or 1 would."""
    from engine.notation.parse import parse_position
    from engine.search.rollout import RolloutSettings
    from training.positions import classify
    pos = parse_position("AwAAGDwHBykAAA")[0]          # o bears off next roll, we lose
    states = np.stack([pos.to_array()])
    ps = PositionSet("backgammon", states, classify(states), np.zeros(1, np.int8))
    for kw in (dict(ply=2), dict(ply=0, rollout=RolloutSettings(trials=36))):
        got = label(ps, None, kw.pop("ply"), workers=1, chunk=4, **kw)
        assert got.targets.min() >= 0 and got.targets.max() <= 1
        got.save(tmp_path / "lab.npz")
        assert got.targets[0, 0] == pytest.approx(0, abs=1e-6)


def test_supervised_training_learns_and_exports_the_same_network(tmp_path):
    torch = pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, _Model, encode_all, train

    # targets from a hidden "teacher" network: a student of the same shape can fit them
    teacher = Network.create("backgammon", 6, "tesauro198", np.random.default_rng(3),
                             scale=0.4)
    ps = setup_positions_set("backgammon", 400, seed=7)
    ps.targets = teacher.probabilities_of_arrays(ps.states)
    settings = Settings(hidden=6, encoder="tesauro198", epochs=6, batch=32, lr=0.01,
                        patience=6, seed=2)
    logs = []
    net = train(ps, tmp_path / "run", settings, log=logs.append)
    card = json.loads((tmp_path / "run" / "model.json").read_text())
    hist = card["info"]["history"]
    assert hist[-1]["valid_loss"] < hist[0]["valid_loss"]
    assert hist[-1]["valid_eq_error"]["all"] < 0.5 * hist[0]["valid_eq_error"]["all"]
    # the exported network (numba) gives what the torch model gives
    model = _Model(torch, net)
    x = torch.from_numpy(encode_all(net, ps.states[:50]))
    with torch.no_grad():
        p = torch.sigmoid(model.module(x)).numpy()
    np.testing.assert_allclose(net.probabilities_of_arrays(ps.states[:50]), p, atol=2e-5)
    # a finished run resumes without training again, to the same weights
    more = train(ps, tmp_path / "run", settings, log=logs.append)
    assert any("resumed after epoch" in line for line in logs)
    np.testing.assert_array_equal(more.w1t, net.w1t)


def test_supervised_resume_continues_as_if_not_stopped(tmp_path):
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, train

    teacher = Network.create("backgammon", 4, "tesauro198", np.random.default_rng(8),
                             scale=0.4)
    ps = setup_positions_set("backgammon", 200, seed=9)
    ps.targets = teacher.probabilities_of_arrays(ps.states)
    full = Settings(hidden=4, encoder="tesauro198", epochs=4, batch=32, lr=0.01,
                    patience=9, seed=3)
    straight = train(ps, tmp_path / "a", full, log=lambda s: None)
    half = Settings(**{**full.__dict__, "epochs": 2})
    train(ps, tmp_path / "b", half, log=lambda s: None)
    resumed = train(ps, tmp_path / "b", full, log=lambda s: None)   # two epochs more
    for x, y in zip((straight.w1t, straight.b1, straight.w2, straight.b2),
                    (resumed.w1t, resumed.b1, resumed.w2, resumed.b2)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    from training.supervised import SupervisedError
    other = Settings(**{**full.__dict__, "lr": 0.02})
    # the setting that differs is named (helper 132: the whole settings were printed)
    with pytest.raises(SupervisedError, match=r"other settings: lr [0-9.e-]+ \(now 0.02\);"):
        train(ps, tmp_path / "b", other, log=lambda s: None)
    # the split is a setting: a run of the random split is not resumed with the hash one
    with pytest.raises(SupervisedError, match="other settings"):
        train(ps, tmp_path / "b", Settings(**{**full.__dict__, "split": "hash"}),
              log=lambda s: None)
    hashed = Settings(**{**half.__dict__, "split": "hash"})
    train(ps, tmp_path / "c", hashed, log=lambda s: None)
    assert json.loads((tmp_path / "c" / "model.json").read_text())["info"]["settings"][
        "split"] == "hash"
    ck = tmp_path / "b" / "checkpoint.npz"
    ck.write_bytes(ck.read_bytes()[:300])                  # a damaged checkpoint
    with pytest.raises(NardyError):
        train(ps, tmp_path / "b", full, log=lambda s: None)
    assert (tmp_path / "b" / "model.npz").exists()         # the model is not lost


def test_choices_and_the_ranking_term_measure_the_order_within_decisions():
    from training.supervised import _split, choices, decision_rows
    decision = np.array([-1, 0, 0, 0, -1, 2, 2, 5, 1, 1])
    lines = decision_rows(decision, np.arange(10))
    assert lines.tolist() == [[1, 2, 3], [8, 9, -1], [5, 6, -1]]   # 5: one candidate
    assert decision_rows(decision, np.array([0, 1, 5, 6])).tolist() == [[5, 6]]
    assert decision_rows(None, np.arange(3)).shape == (0, 0)
    labels = np.array([0, .3, .1, .2, 0, .5, .4, 0, -.2, .2])
    net = np.array([9, .1, .2, .3, 9, .5, .7, 9, .0, .1])   # picks rows 1, 8, 5
    got = choices(net, labels, lines)
    # the mover's best is the least: decision 0 picks 0.3 against 0.1, decision 1 is
    # right, decision 2 picks 0.5 against 0.4
    assert got == {"decisions": 3, "agree": round(1 / 3, 4),
                   "loss_milli": round((0.2 + 0 + 0.1) / 3 * 1000, 3)}
    # a decision's candidates are held out together, and rows without one as before
    many = np.repeat(np.arange(300), 3)
    many[::7] = -1
    train_rows, valid_rows = _split(len(many), 0.2, 4, many)
    assert len(np.intersect1d(train_rows, valid_rows)) == 0
    assert len(train_rows) + len(valid_rows) == len(many)
    assert not set(many[train_rows][many[train_rows] >= 0]) & set(
        many[valid_rows][many[valid_rows] >= 0])
    assert 0.1 < len(valid_rows) / len(many) < 0.3
    for a, b in zip(_split(50, 0.2, 4), _split(50, 0.2, 4, None)):
        np.testing.assert_array_equal(a, b)


def test_the_hash_split_holds_out_the_same_positions_whatever_they_are_joined_with():
    """``split="hash"``: a position is held out by a hash of itself, so two joins of
    overlapping sets (another order, other sets beside) hold out the same rows of the
    sets they share; a decision's candidates stay together, rows without one go alone."""
    from training.supervised import Settings, SupervisedError, _split
    rng = np.random.default_rng(9)
    a = rng.integers(0, 15, (900, L.STATE_LEN)).astype(np.int16)
    b = rng.integers(0, 15, (600, L.STATE_LEN)).astype(np.int16)
    dec_a = np.repeat(np.arange(300), 3)
    dec_a[::7] = -1
    dec_b = np.full(600, -1)

    def held(states, decision, seed=4):
        rows = _split(len(states), 0.2, seed, decision, states)[1]
        return {states[r].tobytes() for r in rows}

    alone = held(a, dec_a)
    ab = held(np.concatenate([a, b]), np.concatenate([dec_a, dec_b]))
    ba = held(np.concatenate([b, a]),                  # renumbered, as a join does
              np.concatenate([dec_b, np.where(dec_a >= 0, dec_a + 1000, -1)]))
    keys_a = {row.tobytes() for row in a}
    assert alone == ab & keys_a == ba & keys_a
    assert 0.1 < len(alone) / len(a) < 0.3
    assert held(a, dec_a, seed=5) != alone                      # the seed moves it
    tr, va = _split(len(a), 0.2, 4, dec_a, a)
    assert len(tr) + len(va) == len(a) and not set(tr) & set(va)
    assert not set(dec_a[tr][dec_a[tr] >= 0]) & set(dec_a[va][dec_a[va] >= 0])
    # a random split of the two joins holds out other rows of the shared set
    rand = {a[r].tobytes() for r in _split(len(a) + 600, 0.2, 4,
                                           np.concatenate([dec_a, dec_b]))[1] if r < 900}
    assert rand != ab & keys_a
    with pytest.raises(SupervisedError, match="split = 'halves'"):
        Settings(split="halves").check()


def _ranked_decisions():
    """The ranking term of a small random network over two decisions of five set-ups
    (three candidates and two): ``(term, p)``, ``term(y, temp)`` its value for labels
    ``y`` and ``p`` the network's own outputs."""
    torch = pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import _Model, _rank_term
    net = Network.create("backgammon", 3, "tesauro198", np.random.default_rng(1), scale=0.3)
    states = setup_positions_set("backgammon", 5, seed=2).states
    model = _Model(torch, net)
    x = torch.from_numpy(np.stack([net.encoder.encode(s) for s in states]))
    lines = torch.tensor([[0, 1, 2], [3, 4, -1]])

    def term(y, temp=0.0):
        with torch.no_grad():
            return float(_rank_term(torch, model, x, torch.from_numpy(y.astype(np.float32)),
                                    lines, temp))
    return term, net.probabilities_of_arrays(states).astype(np.float64)


def test_the_ranking_term_weighs_differences_not_levels():
    term, p = _ranked_decisions()
    eq = equities(p)
    # labels whose equities differ from the network's by one constant a decision
    shifted = p.copy()
    shifted[:3, 0] += 0.05                    # +0.1 equity on decision 0
    shifted[3:, 0] -= 0.02
    assert term(shifted) == pytest.approx(0, abs=1e-9)
    # otherwise the mean square of the errors less their decision's mean
    moved = p.copy()
    moved[0, 0] += 0.05
    moved[4, 0] += 0.03
    e = equities(moved) - eq
    want = (np.sum((e[:3] - e[:3].mean()) ** 2) + np.sum((e[3:] - e[3:].mean()) ** 2)) / 5
    assert term(moved) == pytest.approx(want, rel=1e-3)


def test_the_listwise_ranking_term_is_the_divergence_of_the_choices_softmax():
    """``rank_temp`` > 0: the mean over decisions of KL(softmax(label equity / T) ||
    softmax(network equity / T)) over each decision's candidates, a numpy reference;
    zero when the labels differ from the network by a constant a decision."""
    term, p = _ranked_decisions()
    from training.supervised import Settings, SupervisedError

    def kl(label, pred, t):
        a, b = np.exp(label / t), np.exp(pred / t)
        a, b = a / a.sum(), b / b.sum()
        return float(np.sum(a * np.log(a / b)))

    shifted = p.copy()
    shifted[:3, 0] += 0.05
    shifted[3:, 0] -= 0.02
    assert term(shifted, 0.05) == pytest.approx(0, abs=1e-6)
    moved = p.copy()
    moved[0, 0] += 0.05
    moved[4, 0] += 0.03
    for t in (0.02, 0.1):
        want = (kl(equities(moved[:3]), equities(p[:3]), t)
                + kl(equities(moved[3:5]), equities(p[3:5]), t)) / 2
        assert want > 0.01 and term(moved, t) == pytest.approx(want, rel=1e-3)
    with pytest.raises(SupervisedError, match="rank_temp = -0.1"):
        Settings(rank_temp=-0.1).check()


def test_supervised_ranking_trains_the_choice_and_needs_decisions(tmp_path):
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, SupervisedError, train
    # the candidates of a fixed network's play (not the released one's, which changes)
    net = Network.create("backgammon", 8, "tesauro198", np.random.default_rng(7), scale=0.3)
    ps = selfplay_positions(net, 12, seed=3, keep=0.5, candidates=4)
    teacher = Network.create("backgammon", 8, "tesauro198", np.random.default_rng(4),
                             scale=0.5)
    ps.targets = teacher.probabilities_of_arrays(ps.states)
    base = dict(hidden=8, encoder="tesauro198", epochs=8, batch=32, lr=0.01, patience=8,
                seed=2)
    runs = {}
    for rank in (0.0, 20.0):
        train(ps, tmp_path / str(rank), Settings(**base, rank=rank), log=lambda m: None)
        runs[rank] = json.loads((tmp_path / str(rank) / "model.json").read_text())["info"]
    first, last = (runs[20.0]["history"][i]["valid_eq_error"]["choice"] for i in (0, -1))
    assert first["decisions"] == last["decisions"] > 20
    assert last["loss_milli"] < first["loss_milli"]
    plain = runs[0.0]["history"][-1]["valid_eq_error"]["choice"]
    assert last["loss_milli"] < plain["loss_milli"] and last["agree"] >= plain["agree"]
    assert "ranking term" in runs[20.0]["method"] and runs[20.0]["settings"]["rank"] == 20.0
    setups = _labelled()
    with pytest.raises(SupervisedError, match="no decision with two or more candidates"):
        train(setups, tmp_path / "none", Settings(**base, rank=1.0), log=lambda m: None)
    with pytest.raises(SupervisedError, match="rank = -1.0: expected a number >= 0"):
        Settings(rank=-1.0).check()


def test_a_supervised_network_is_released_with_every_stages_card(tmp_path, capsys):
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.release import main as release
    from training.supervised import Settings, train
    first = Network.create("backgammon", 4, "tesauro198", np.random.default_rng(5), scale=0.3)
    first.info = {"method": "TD(lambda) self-play", "trained_games": 123}
    models = tmp_path / "models"
    first.save(models / "backgammon.npz", card_file=True)       # the released one
    settings = Settings(init=str(models / "backgammon.npz"), epochs=2, batch=32, lr=0.01,
                        seed=3)
    net = train(_labelled(), tmp_path / "run", settings, log=lambda m: None,
                command="python -m training.supervised ...")
    assert release(["--run", str(tmp_path / "run"), "--out", str(models), "--pubeval-games",
                    "0", "--random-games", "20", "--heuristic-games", "0",
                    "--replaces-games", "20"]) == 0
    got = Network.load(models / "backgammon.npz")
    np.testing.assert_array_equal(got.w1t, net.w1t)
    info = json.loads((models / "backgammon.json").read_text())["info"]
    assert info["method"].startswith("supervised") and info["settings"]["init"]
    assert info["train_command"] == "python -m training.supervised ..."
    assert info["stages"] == [{"model": str(models / "backgammon.npz"),
                               "card": {"method": "TD(lambda) self-play",
                                        "trained_games": 123}}]
    assert [m["opponent"] for m in info["strength_0ply"]][0] == "random"
    assert "replaces" in info["strength_0ply"][1]["opponent"]
    assert info["history"] and info["training_seconds"] >= 0
    # released again, its --init path holds the network itself: the first stage is gone
    capsys.readouterr()
    assert release(["--run", str(tmp_path / "run"), "--out", str(models), "--pubeval-games",
                    "0", "--random-games", "0", "--heuristic-games", "0"]) == 2
    assert "holds this run's network (released already?)" in capsys.readouterr().err
    assert json.loads((models / "backgammon.json").read_text())["info"] == info
    # a folder that holds neither kind of run is named as such
    (tmp_path / "empty").mkdir()
    capsys.readouterr()
    assert release(["--run", str(tmp_path / "empty"), "--out", str(models)]) == 2
    assert "neither a training.selfplay run nor a training.supervised" in \
        capsys.readouterr().err


def test_a_widened_network_plays_as_the_one_it_widens():
    from training.supervised import widen
    net = Network.create("backgammon", 5, "tesauro198+f13", np.random.default_rng(1),
                         scale=0.3)
    wide = widen(net, 9, np.random.default_rng(2))
    assert wide.hidden == 9 and wide.n_inputs == net.n_inputs
    states = setup_positions_set("backgammon", 30, seed=3).states
    np.testing.assert_allclose(wide.probabilities_of_arrays(states),
                               net.probabilities_of_arrays(states), atol=1e-6)


def test_a_reencoded_initial_network_starts_from_its_play(tmp_path):
    """``reencode``: the initial network reads a wider encoder's inputs, zero weights on
    the new ones, and trains from there; an encoder that does not extend it is refused
    by name, as is ``reencode`` without ``init``."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, SupervisedError, train
    net = Network.create("backgammon", 6, "tesauro198+f21", np.random.default_rng(3),
                         scale=0.3)
    init = tmp_path / "init.npz"
    net.save(init)
    ps = setup_positions_set("backgammon", 60, seed=5)
    ps.targets = net.probabilities_of_arrays(ps.states)
    s = Settings(init=str(init), reencode="tesauro198+f39", epochs=1, batch=32, lr=1e-9,
                 seed=1)
    train(ps, tmp_path / "run", s, log=lambda m: None)
    got = Network.load(tmp_path / "run" / "model.npz")
    assert got.encoder.name == "tesauro198+f39" and got.sizes == "237-6-5"
    np.testing.assert_allclose(got.probabilities_of_arrays(ps.states), ps.targets,
                               atol=1e-4)
    with pytest.raises(SupervisedError, match=r"reencode = 'tesauro198\+f13'.*cannot read"):
        train(ps, tmp_path / "back", Settings(**{**s.__dict__, "reencode": "tesauro198+f13"}),
              log=lambda m: None)
    with pytest.raises(SupervisedError, match=r"reencode = 'tesauro198\+f39': needs init"):
        Settings(reencode="tesauro198+f39").check()


def test_supervised_runs_keep_what_they_would_have_lost(tmp_path):
    """A supervised run refuses a self-play run's folder, resuming on other data, a
    fresh start (``resume=False``) over a run's best network, and settings it cannot
    use (they gave tracebacks or NaN networks); a loss gone non-finite stops the run
    with nothing of that epoch saved."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, SupervisedError, errors, train

    teacher = Network.create("backgammon", 4, "tesauro198", np.random.default_rng(8),
                             scale=0.4)
    ps = setup_positions_set("backgammon", 60, seed=9)
    ps.targets = teacher.probabilities_of_arrays(ps.states)
    s = Settings(hidden=4, encoder="tesauro198", epochs=1, batch=32, lr=0.01, seed=3)
    selfplay_dir = tmp_path / "td"
    selfplay_dir.mkdir()
    (selfplay_dir / "checkpoint-0000000005.npz").write_bytes(b"x")
    with pytest.raises(SupervisedError, match="self-play run"):
        train(ps, selfplay_dir, s, log=lambda m: None)
    train(ps, tmp_path / "a", s, log=lambda m: None)
    best = (tmp_path / "a" / "model.npz").read_bytes()
    with pytest.raises(SupervisedError, match="holds a run"):
        train(ps, tmp_path / "a", s, resume=False, log=lambda m: None)
    other = ps.subset(np.arange(50))
    with pytest.raises(SupervisedError, match="other data"):
        train(other, tmp_path / "a", s, log=lambda m: None)
    assert (tmp_path / "a" / "model.npz").read_bytes() == best
    for bad in ({"lr": float("inf")}, {"weight_decay": -1.0}, {"weight_decay": float("nan")},
                {"seed": -1}):
        with pytest.raises(SupervisedError, match=next(iter(bad))):
            Settings(**{**s.__dict__, **bad}).check()
    with pytest.raises(NardyError, match="hidden = 90,000"):
        train(ps, tmp_path / "wide", Settings(hidden=90_000, epochs=1), log=lambda m: None)
    with pytest.raises(SupervisedError, match="lr"):
        Settings(**{**s.__dict__, "lr": 1e38}).check()      # torch's step overflowed
    broken = PositionSet(ps.variant, ps.states, ps.klass, ps.source, ps.targets.copy())
    broken.targets[:] = np.nan                    # a loss that is not a number
    with pytest.raises(SupervisedError, match="epoch 0: the validation loss is not finite"):
        train(broken, tmp_path / "nan", s, log=lambda m: None)
    assert not (tmp_path / "nan" / "model.npz").exists()
    assert not (tmp_path / "nan" / "checkpoint.npz").exists()    # no NaN best kept
    from training.supervised import _split
    broken.targets[:] = ps.targets                # the training rows' loss only
    broken.targets[_split(len(ps), s.valid, s.seed)[0]] = np.nan
    with pytest.raises(SupervisedError, match="epoch 1: the loss is not finite"):
        train(broken, tmp_path / "nan1", s, log=lambda m: None)
    assert not (tmp_path / "nan1" / "model.npz").exists()
    with pytest.raises(SupervisedError, match="empty"):
        errors(teacher, ps.subset(np.arange(0)))


def _labelled(n: int = 60, seed: int = 9) -> PositionSet:
    """``n`` set-up positions labelled by a hidden 4-unit "teacher" network: a set a
    4-unit student trains on in a second."""
    teacher = Network.create("backgammon", 4, "tesauro198", np.random.default_rng(8),
                             scale=0.4)
    ps = setup_positions_set("backgammon", n, seed=seed)
    ps.targets = teacher.probabilities_of_arrays(ps.states)
    return ps


SMALL = ["--hidden", "4", "--encoder", "tesauro198", "--epochs", "2", "--batch", "32",
         "--lr", "0.01", "--seed", "3"]
"""The command line's settings of :func:`finished_run`'s run."""


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished two-epoch supervised run on :func:`_labelled`: (data, settings,
    folder); tests copy the folder before they change it."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, train
    ps = _labelled()
    s = Settings(hidden=4, encoder="tesauro198", epochs=2, batch=32, lr=0.01, seed=3)
    folder = tmp_path_factory.mktemp("sup") / "run"
    train(ps, folder, s, log=lambda m: None)
    return ps, s, folder


def _edit_checkpoint(folder, key, edit) -> bytes:
    """Rewrite ``folder``'s checkpoint with the array ``key`` replaced by ``edit(array)``
    (``key`` "run": the record updated with the dict ``edit``); returns the new bytes."""
    path = folder / "checkpoint.npz"
    with np.load(path) as z:
        arrays = dict(z)
    if key == "run":
        run = json.loads(arrays["run"].tobytes())
        run.update(edit)
        arrays["run"] = np.frombuffer(json.dumps(run).encode(), np.uint8)
    else:
        arrays[key] = edit(arrays[key])
    np.savez(path, **arrays)
    return path.read_bytes()


def test_a_damaged_checkpoint_is_refused_naming_its_field(tmp_path, finished_run):
    """Each array and field of a checkpoint is checked before a run resumes from it:
    one damaged field gave an IndexError or a reshape traceback (an empty step, short
    moments), "resumed after epoch -5" and a traceback, or was taken silently (a NaN
    best loss that no epoch beats, so no better network was ever written; a NaN step
    that dropped Adam's state; a history of the wrong kind). Now a typed error names
    the file and the field, and the checkpoint and the model are left as they were."""
    import re
    import shutil

    from training.supervised import Settings, SupervisedError, train
    ps, s, run = finished_run
    more = Settings(**{**s.__dict__, "epochs": 4})
    cases = [("step", "step", lambda a: np.array([])),
             ("step", "step", lambda a: np.array([np.nan])),
             ("step", "step", lambda a: np.array([0.0])),
             ("m", "m", lambda a: a[:-1]),
             ("v", "v", lambda a: -np.abs(a) - 1),
             ("best_w1", "best_w1", lambda a: np.full_like(a, np.inf)),
             ("w2", "w2", lambda a: a.astype(np.float64)),
             ("run", "run.epoch", {"epoch": -5}),
             ("run", "run.epoch", {"epoch": 1.5}),
             ("run", "run.best", {"best": float("nan")}),
             ("run", "run.best", {"best": 0.0}),         # no later epoch would beat it
             ("run", "run.history", {"history": [1, 2]}),
             ("run", "run.history", {"epoch": 3}),        # one epoch more than recorded
             ("run", "run.stale", {"stale": -1}),
             ("run", "run.elapsed", {"elapsed": float("inf")}),
             ("run", "run.data", {"data": 5}),
             ("run", "run.version", {"version": 2})]
    for i, (key, field, edit) in enumerate(cases):
        folder = tmp_path / f"c{i}"
        shutil.copytree(run, folder)
        damaged = _edit_checkpoint(folder, key, edit)
        model = (folder / "model.npz").read_bytes()
        logs = []
        with pytest.raises(SupervisedError, match=rf"checkpoint\.npz: {re.escape(field)} = "
                                                  rf".*: expected .*damaged"):
            train(ps, folder, more, log=logs.append)
        assert not any("resumed" in m for m in logs), field
        assert (folder / "checkpoint.npz").read_bytes() == damaged, field
        assert (folder / "model.npz").read_bytes() == model, field
    # the same arrays written back unchanged resume (the edits above are the damage)
    folder = tmp_path / "same"
    shutil.copytree(run, folder)
    _edit_checkpoint(folder, "run", {})
    train(ps, folder, more, log=lambda m: None)


def test_a_new_run_does_not_replace_a_model_in_its_folder(tmp_path, finished_run, capsys):
    """A run with no checkpoint to resume refuses a folder holding a ``model.npz`` or
    ``model.json`` (a released model copied there was replaced by a fresh run's, exit
    0), in one line saying what to do; a resumed run still updates its own model."""
    from training.supervised import SupervisedError, main, train
    ps, s, run = finished_run
    released = (tmp_path / "s3")
    released.mkdir()
    (released / "model.npz").write_bytes(Path("models/backgammon.npz").read_bytes())
    with pytest.raises(SupervisedError, match="holds model.npz but no checkpoint.npz.*"
                                              "another --out, or move it away"):
        train(ps, released, s, log=lambda m: None)
    data = ps.save(tmp_path / "L.npz")
    assert main(["--data", str(data), "--out", str(released), *SMALL]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "model.npz" in err
    assert (released / "model.npz").read_bytes() == Path("models/backgammon.npz").read_bytes()
    assert sorted(p.name for p in released.iterdir()) == ["model.npz"]
    card = tmp_path / "card"
    card.mkdir()
    (card / "model.json").write_text("{}")
    with pytest.raises(SupervisedError, match="holds model.json"):
        train(ps, card, s, log=lambda m: None)


def test_a_run_killed_before_its_first_checkpoint_resumes(tmp_path, finished_run):
    """A new run writes its checkpoint (epoch 0) before any network, so a run killed
    after writing its first ``model.npz`` holds a checkpoint, and the same command
    resumes it (to the network it would have made) rather than being refused as a
    folder with someone's model in it."""
    from training.supervised import train
    ps, s, run = finished_run

    class Killed(Exception):
        pass

    def kill(line):
        if line.startswith("epoch 1:"):     # model.npz written, epoch 1 not saved
            raise Killed

    with pytest.raises(Killed):
        train(ps, tmp_path / "k", s, log=kill)
    assert (tmp_path / "k" / "model.npz").exists()
    assert (tmp_path / "k" / "checkpoint.npz").exists()
    logs = []
    net = train(ps, tmp_path / "k", s, log=logs.append)
    assert any("resumed after epoch 0" in m for m in logs)
    straight = Network.load(run / "model.npz")
    for x, y in zip((straight.w1t, straight.b1, straight.w2, straight.b2),
                    (net.w1t, net.b1, net.w2, net.b2)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_supervised_command_refuses_bad_out_and_data_in_one_line(tmp_path, capsys):
    """``--out`` under a file (a NotADirectoryError traceback), an unlabelled set among
    labelled ones (a "no targets" naming no file), and a set given twice or copied (its
    positions trained on twice, validation sharing positions with training): one line
    each, naming the path, before any training."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import main
    ps = _labelled()
    lab = str(ps.save(tmp_path / "L.npz"))
    unl = str(PositionSet(ps.variant, ps.states, ps.klass, ps.source).save(tmp_path / "U.npz"))
    copy = tmp_path / "L2.npz"
    copy.write_bytes(Path(lab).read_bytes())
    afile = tmp_path / "afile"
    afile.write_text("x")
    out = str(tmp_path / "out")
    for argv, why in ((["--data", lab, "--out", str(afile / "s")],
                       f"{str(afile)!r} is a file; expected a folder"),
                      (["--data", lab, unl, "--out", out], f"{unl!r}: the position set has "
                                                           f"no targets"),
                      (["--data", unl, "--errors", "models/backgammon.npz"],
                       f"{unl!r}: the position set has no targets"),
                      (["--data", lab, lab, "--out", out], f"{lab!r} is given twice"),
                      (["--data", lab, str(copy), "--out", out],
                       f"{str(copy)!r} holds the same labelled positions as {lab!r}")):
        assert main([*argv, *SMALL]) == 2, why
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert why in err, err
    assert not (tmp_path / "out").exists()


def test_supervised_trains_and_measures_on_the_classes_asked_for(tmp_path, capsys):
    """``--classes race,bearoff`` (a race network's data): the run trains on those rows of
    the sets alone, ``--errors`` measures on them alone, and an unknown class or one the
    sets lack is refused in one line before any training."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import main
    ps = _labelled(200, seed=5)
    races = np.isin(ps.klass, [RACE, BEAROFF])
    assert 10 < races.sum() < len(ps)
    lab = str(ps.save(tmp_path / "L.npz"))
    assert main(["--data", lab, "--classes", "race,bearoff", "--errors",
                 "models/backgammon.npz"]) == 0
    report = json.loads(capsys.readouterr().out.split(": ", 1)[1])
    assert {k for k in report if k.startswith("class:")} <= {"class:race", "class:bearoff"}
    assert main(["--data", lab, "--classes", "race,bearoff", "--out", str(tmp_path / "r"),
                 *SMALL]) == 0
    card = json.loads((tmp_path / "r" / "model.json").read_text())
    assert card["info"]["positions"] == int(races.sum())
    assert "--classes race,bearoff" in card["info"]["command"]
    only = str(ps.subset(ps.klass == CONTACT).save(tmp_path / "C.npz"))
    capsys.readouterr()
    for argv, why in ((["--data", lab, "--classes", "races"], "class 'races': expected one "
                                                              "of contact"),
                      (["--data", only, "--classes", "race"], "no positions of those "
                                                              "classes")):
        assert main([*argv, "--out", str(tmp_path / "x"), *SMALL]) == 2, why
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and why in err, err
    assert not (tmp_path / "x").exists()


def test_position_and_label_commands_refuse_what_they_cannot_do(tmp_path, capsys):
    """A folder for --out, no positions asked for or none met, rollout settings without
    --rollout: usage errors, not tracebacks or empty files; a model of another game is
    refused before the chunk folder records its settings (a corrected command was then
    refused as "another labelling")."""
    from training.label import main as label_main
    from training.positions import main as positions_main
    for argv in (["--games", "0", "--setups", "0", "--out", str(tmp_path / "a.npz")],
                 ["--seed", "-1", "--out", str(tmp_path / "a.npz")]):
        with pytest.raises(SystemExit) as exc:
            positions_main(argv)
        assert exc.value.code == 2
    assert positions_main(["--setups", "3", "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert positions_main(["--games", "0", "--setups", "5", "--classes", ",",
                           "--out", str(tmp_path / "a.npz")]) == 2
    assert "--classes" in capsys.readouterr().err and not (tmp_path / "a.npz").exists()
    setup_positions_set("backgammon", 12, seed=5).save(tmp_path / "p.npz")
    with pytest.raises(SystemExit):
        label_main(["--positions", str(tmp_path / "p.npz"), "--truncate", "3",
                    "--out", str(tmp_path / "l.npz")])
    assert "add --rollout" in capsys.readouterr().err
    out = str(tmp_path / "l.npz")
    assert label_main(["--positions", str(tmp_path / "p.npz"), "--model",
                       "models/plakoto.npz", "--workers", "2", "--out", out]) == 2
    assert "is for plakoto" in capsys.readouterr().err
    assert label_main(["--positions", str(tmp_path / "p.npz"), "--ply", "0",
                       "--workers", "1", "--out", out]) == 0
    # a labelled set is not replaced by the labels of other positions or another depth,
    # its chunk folder gone or not (helper 132: 2-ply labels were silently replaced);
    # the same labelling again is a rerun
    import shutil
    shutil.rmtree(out + ".parts")
    setup_positions_set("backgammon", 7, seed=6).save(tmp_path / "q.npz")
    before = (tmp_path / "l.npz").read_bytes()
    for positions, ply in (("q.npz", "0"), ("p.npz", "1")):
        assert label_main(["--positions", str(tmp_path / positions), "--ply", ply,
                           "--workers", "1", "--out", out]) == 2
        assert "holds the labels of other positions" in capsys.readouterr().err
        assert (tmp_path / "l.npz").read_bytes() == before
    assert label_main(["--positions", str(tmp_path / "p.npz"), "--ply", "0",
                       "--workers", "1", "--out", out]) == 0
    # a join of labelled sets says no one labelling: refused, not a trace (helper 137)
    from training.positions import PositionSet
    joined = PositionSet.join([PositionSet.load(out), PositionSet.load(out)])
    joined.save(tmp_path / "j.npz")
    assert label_main(["--positions", str(tmp_path / "p.npz"), "--ply", "0", "--workers",
                       "1", "--out", str(tmp_path / "j.npz")]) == 2
    assert "whose labelling it does not say" in capsys.readouterr().err


def test_label_and_supervised_refuse_a_folder_another_run_holds(tmp_path, capsys):
    """A labelling (its chunk folder) or a supervised run (its --out) that another
    process is writing into now: refused at once, naming that process, nothing
    written; once it is free the same command runs."""
    from training.label import main as label_main
    setup_positions_set("backgammon", 12, seed=5).save(tmp_path / "p.npz")
    out = tmp_path / "l.npz"
    argv = ["--positions", str(tmp_path / "p.npz"), "--ply", "0", "--workers", "1",
            "--out", str(out)]
    with folder_lock(str(out) + ".parts"):
        assert label_main(argv) == 2
        err = capsys.readouterr().err
        assert f"--out's chunk folder {str(out) + '.parts'!r} is in use by process " \
               f"{os.getpid()}" in err and err.count("\n") == 1, err
        assert not out.exists() and not list(Path(str(out) + ".parts").glob("part-*"))
    assert label_main(argv) == 0 and out.exists()
    capsys.readouterr()
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import main
    run = tmp_path / "run"
    with folder_lock(run):
        assert main(["--data", str(out), "--out", str(run), *SMALL]) == 2
        err = capsys.readouterr().err
        assert f"is in use by process {os.getpid()}" in err and err.count("\n") == 1, err
        assert not (run / "model.npz").exists() and not (run / "checkpoint.npz").exists()
    # free, it trains; the card names the command line and the encoder the network
    # has (an initial network's: --encoder goes unused, and its default was written)
    argv = ["--data", str(out), "--out", str(run), "--init",
            "models/candidates/backgammon-f21.npz", "--epochs", "1", "--batch", "32"]
    assert main(argv) == 0
    info = Network.load(run / "model.npz").info
    assert info["settings"]["encoder"] == "tesauro198+f21"
    assert info["command"] == "python -m training.supervised " + " ".join(argv)


def test_torch_threads_follow_omp_num_threads(monkeypatch):
    from training import supervised
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert supervised.torch_threads() == 3
    for unset in ("", "0", "x"):
        monkeypatch.setenv("OMP_NUM_THREADS", unset)
        monkeypatch.setattr(supervised, "usable_cores", lambda: 64)
        assert supervised.torch_threads() == 2
        monkeypatch.setattr(supervised, "usable_cores", lambda: 1)
        assert supervised.torch_threads() == 1


def test_supervised_refuses_an_unwritable_out_before_any_training(tmp_path, capsys,
                                                                  read_only, monkeypatch):
    """Regression: a read-only ``--out`` was found out when the first checkpoint was
    written, after the data was read and encoded, with a traceback."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training import supervised
    lab = str(_labelled().save(tmp_path / "L.npz"))

    def no_training(*args, **kwargs):
        raise AssertionError("trained into a folder it cannot write")

    monkeypatch.setattr(supervised, "train", no_training)
    locked = read_only(tmp_path / "locked")
    for out in (locked, locked / "run"):
        assert supervised.main(["--data", lab, "--out", str(out), *SMALL]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --out ") and err.count("\n") == 1, err
        assert "cannot write into the folder" in err and "(Permission denied)" in err, err


def test_supervised_on_a_full_disk_says_so_in_one_line(tmp_path, capsys, disk_full):
    """Regression: an OSError writing the checkpoint (a full disk) was a traceback."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import main
    ps = _labelled()
    lab = tmp_path / "L.npz"
    np.savez(lab, states=ps.states, klass=ps.klass, source=ps.source, targets=ps.targets,
             card=np.frombuffer(json.dumps({"format": "nardy-positions", "version": 1,
                                            "variant": ps.variant}).encode(), np.uint8))
    out = tmp_path / "out"
    assert main(["--data", str(lab), "--out", str(out), *SMALL]) == 2
    err = capsys.readouterr().err.splitlines()[-1]       # (after epoch 0's line)
    assert err == f"error: cannot write {out / 'checkpoint.npz'}: No space left on device"


@pytest.mark.parametrize("encoder, variant", [("nardy255+m14", "backgammon"),
                                              ("tesauro198+f13", "plakoto")])
def test_supervised_refuses_inputs_of_another_family_of_games(tmp_path, encoder, variant):
    """Regression: ``nardy255+m14`` (sides moving the same way) was taken for backgammon
    data, where its inputs are wrong, as ``training.config`` refused only backgammon's
    features for the other games."""
    pytest.importorskip("torch", reason="torch (the 'train' extra) not installed")
    from training.supervised import Settings, SupervisedError, train
    ps = _labelled(12)
    ps = PositionSet(variant, ps.states, ps.klass, ps.source, ps.targets)
    with pytest.raises(SupervisedError, match=f"encoder = '{re.escape(encoder)}' for "
                                              f"{variant}"):
        train(ps, tmp_path / "out", Settings(hidden=4, encoder=encoder, epochs=1))
    assert not (tmp_path / "out").exists()
