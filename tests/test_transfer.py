"""training.transfer: a network as the starting network of another game on the same
board (portes from backgammon)."""

import numpy as np
import pytest

from engine import Position
from engine.eval.evaluator import Evaluator
from engine.eval.network import Network
from training.transfer import TransferError, main, transfer


def _net(variant="backgammon", encoder="tesauro198+f21", hidden=8, seed=3):
    return Network.create(variant, hidden, encoder, np.random.default_rng(seed), scale=0.5)


def test_a_transferred_network_rates_as_the_source_bar_the_scoring(tmp_path):
    src = _net()
    src.info = {"method": "td", "trained_games": 123}
    path = tmp_path / "bg.npz"
    src.save(path)
    assert main(["--model", str(path), "--variant", "portes", "--out",
                 str(tmp_path / "portes.npz")]) == 0
    net = Network.load(tmp_path / "portes.npz")
    assert net.variant == "portes" and net.encoder.name == src.encoder.name
    for a in ("w1t", "b1", "w2", "b2"):
        assert np.array_equal(getattr(net, a), getattr(src, a))
    card = net.info["transferred_from"]
    assert card["variant"] == "backgammon" and card["card"]["trained_games"] == 123
    assert card["model"] == str(path)
    # the same outputs on the same board, but portes has no backgammons: the evaluator
    # zeroes those two outputs and keeps the other three
    bg = Evaluator(src, bearoff=False).probabilities([Position.start("backgammon")])[0]
    pt = Evaluator(net, bearoff=False).probabilities([Position.start("portes")])[0]
    assert bg[2] > 0 and bg[4] > 0
    assert pt[2] == 0 and pt[4] == 0
    assert np.allclose(pt[[0, 1, 3]], bg[[0, 1, 3]], atol=1e-6)


def test_a_game_on_another_board_or_the_same_game_is_refused(tmp_path, capsys):
    with pytest.raises(TransferError, match="cannot play plakoto"):
        transfer(_net(), "plakoto")
    with pytest.raises(TransferError, match="already plays backgammon"):
        transfer(_net(), "backgammon")
    with pytest.raises(TransferError, match="expected one of"):
        transfer(_net(), "chess")
    src = tmp_path / "bg.npz"
    _net().save(src)
    assert main(["--model", str(src), "--variant", "plakoto", "--out",
                 str(tmp_path / "p.npz")]) == 2
    assert "cannot play plakoto" in capsys.readouterr().err
    assert not (tmp_path / "p.npz").exists()
    (tmp_path / "there.npz").write_bytes(b"keep me")
    with pytest.raises(SystemExit):
        main(["--model", str(src), "--variant", "portes", "--out", str(tmp_path / "there.npz")])
    assert (tmp_path / "there.npz").read_bytes() == b"keep me"


def test_a_folder_as_the_output_is_refused(tmp_path, capsys):
    src = tmp_path / "bg.npz"
    _net().save(src)
    (tmp_path / "dir.npz").mkdir()
    assert main(["--model", str(src), "--variant", "portes", "--out",
                 str(tmp_path / "dir.npz")]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_a_write_that_fails_is_one_line_and_leaves_no_file(tmp_path, capsys, monkeypatch):
    """A full disk while writing gave a traceback (the folder was checked, the write not)."""
    import errno
    import os
    src = tmp_path / "bg.npz"
    _net().save(src)

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr("engine.eval.network.atomic_write_bytes", full)
    out = tmp_path / "portes.npz"
    assert main(["--model", str(src), "--variant", "portes", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: writing {out}: No space left") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bg.npz"]
