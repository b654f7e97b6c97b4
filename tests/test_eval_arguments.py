"""Bad arguments to the evaluation layer's Python entry points (position sets, bear-off
tables, encoders, networks) raise the project's typed errors naming the argument, and
never a raw IndexError / TypingError / RecursionError or a silently wrong result."""

import os

import numpy as np
import pytest

from engine.errors import PositionError, VariantError
from engine.eval import bearoff as B
from engine.eval.encoding import TESAURO198, EncodingError, get_encoder
from engine.eval.network import MAX_ARRAY_BYTES, Network, NetworkFileError
from engine.rules import _layout as L
from engine.rules.position import Position
from training.positions import PositionSet, PositionSetError


# --------------------------------------------------------------------- position sets
def _set(n=2, **kw):
    st = Position.start("backgammon").to_array()
    args = dict(variant="backgammon", states=np.repeat(st[None], n, 0),
                klass=np.zeros(n, np.int8), source=np.zeros(n, np.int8), targets=None)
    args.update(kw)
    return PositionSet(**args)


def test_position_set_save_refuses_what_load_refuses(tmp_path):
    ok = _set()
    assert len(PositionSet.load(ok.save(tmp_path / "ok.npz"))) == 2
    bad = {
        "states": _set(states=ok.states.astype(np.float64)),
        "variant": _set(variant="chess"),
        "klass": _set(klass=np.zeros(2, np.int64)),
        "targets": _set(targets=np.zeros((2, 3), np.float32)),
    }
    for what, ps in bad.items():
        path = tmp_path / f"{what}.npz"
        with pytest.raises(PositionSetError, match=what if what != "variant" else "chess"):
            ps.save(path)
        assert not path.exists()
    # over the 64 MiB an array of the file may take: refused before writing
    n = MAX_ARRAY_BYTES // (2 * L.STATE_LEN) + 1
    path = tmp_path / "big.npz"
    with pytest.raises(PositionSetError, match=r"states would take .*split the set"):
        _set(n).save(path)
    assert not path.exists()


def test_position_set_load_deep_card_and_join(tmp_path):
    ok = _set()
    card = b"[" * 100_000 + b"]" * 100_000
    np.savez(tmp_path / "deep.npz", states=ok.states, klass=ok.klass, source=ok.source,
             card=np.frombuffer(card, np.uint8))
    with pytest.raises(PositionSetError, match="card is not JSON"):
        PositionSet.load(tmp_path / "deep.npz")
    with pytest.raises(PositionSetError, match=r"parts\[1\] = 5"):
        PositionSet.join([ok, 5])
    assert len(PositionSet.join([ok, ok])) == 4


# --------------------------------------------------------------------- bear-off
@pytest.fixture(scope="module")
def db():
    return B.build()


def _save_tables(path, version=B.VERSION, off=None, first=None, db=None):
    np.savez_compressed(path, format=np.array(B.FORMAT), version=np.array(version),
                        off=db.off if off is None else off,
                        first=db.first if first is None else first,
                        two=db.two, cubeful=db.cubeful)
    return path


def test_bearoff_damaged_cache_is_bearoff_error_and_rebuilt(tmp_path, db):
    for i, version in enumerate(("x", np.nan)):
        path = _save_tables(tmp_path / f"v{i}.npz", version=version, db=db)
        with pytest.raises(B.BearoffError, match="version"):
            B.read(path)
        rebuilt = B.load(path, build_missing=True)         # rebuilt, not a crash
        np.testing.assert_array_equal(rebuilt.off, db.off)
        assert B.read(path).off.shape == db.off.shape
    path = _save_tables(tmp_path / "nan.npz", off=np.full_like(db.off, np.nan), db=db)
    with pytest.raises(B.BearoffError, match="table off"):
        B.read(path)
    assert B.read(_save_tables(tmp_path / "ok.npz", db=db)).off.shape == db.off.shape


def test_bearoff_refuses_bad_boards_and_positions(db):
    for board in ([1.5] * 6, [1] * 5, None):
        with pytest.raises(B.BearoffError, match="board"):
            db.index(board)
    assert db.index([0, 0, 0, 0, 0, 1]) == db.index(np.array([0, 0, 0, 0, 0, 1]))
    with pytest.raises(B.BearoffError, match="position"):
        B.applies(None)
    with pytest.raises(B.BearoffError, match="position"):
        db.probabilities(None)
    sixteen = Position("backgammon", (8, 8) + (0,) * 22, (8, 8) + (0,) * 22)
    with pytest.raises(PositionError, match="16 checkers"):
        db.probabilities(sixteen)
    race = Position("backgammon", (2, 3, 3, 3, 2, 2) + (0,) * 18,
                    (2, 3, 3, 3, 2, 2) + (0,) * 18)
    p = db.probabilities(race)
    assert np.isfinite(p).all() and 0.5 < p[0] < 1


def test_bearoff_load_does_not_overwrite_another_file(tmp_path):
    other = tmp_path / "x.npz"
    other.write_bytes(b"precious")
    with pytest.raises(B.BearoffError, match="not a bear-off cache"):
        B.load(other)
    assert other.read_bytes() == b"precious"


# --------------------------------------------------------------------- encoders
def test_encode_checks_the_state():
    bad = [np.zeros(3, np.int16), np.full(L.STATE_LEN, -20000, np.int16), None,
           np.zeros(L.STATE_LEN), np.zeros((2, L.STATE_LEN), np.int16),
           Position.start("backgammon")]
    for enc in (TESAURO198, get_encoder("tesauro198+f13")):
        for state in bad:
            with pytest.raises(EncodingError, match="state"):
                enc.encode(state)
        x = enc.encode(Position.start("backgammon").to_array())
        assert x.shape == (enc.n_inputs,) and np.isfinite(x).all()
    assert TESAURO198.encode(Position.start("backgammon").to_array()).sum() == 27


# --------------------------------------------------------------------- networks
def test_network_checks_its_fields(tmp_path):
    n = Network.create("backgammon", 4)
    with pytest.raises(VariantError, match="chess"):
        Network("chess", n.encoder, n.w1t, n.b1, n.w2, n.b2)
    with pytest.raises(NetworkFileError, match="w1t holds .*non-finite"):
        Network("backgammon", n.encoder, n.w1t * np.nan, n.b1, n.w2, n.b2)
    with pytest.raises(NetworkFileError, match="scale"):
        Network.create("backgammon", 4, scale=1e39)
    with pytest.raises(NetworkFileError, match="info = 5"):
        Network("backgammon", n.encoder, n.w1t, n.b1, n.w2, n.b2, 5)
    with pytest.raises(NetworkFileError, match="b1"):
        Network("backgammon", n.encoder, n.w1t, np.zeros((), np.float32), n.w2, n.b2)
    # mutated after construction: save refuses what load would
    m = n.copy()
    m.w2[0, 0] = np.inf
    with pytest.raises(NetworkFileError, match="w2"):
        m.save(tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()
    back = Network.load(n.save(tmp_path / "n.npz"))
    np.testing.assert_array_equal(back.w1t, n.w1t)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_network_load_refuses_a_fifo(tmp_path):
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    with pytest.raises(NetworkFileError, match="not a regular file"):
        Network.load(fifo)
