"""``benchmarks/strength.py --record``: a match's result goes into player A's model card
(the ``.npz`` and its ``.json``), the weights unchanged; anything else is refused."""

import json

import numpy as np
import pytest
from conftest import benchmark_module

from engine.eval.network import Network
from training.release import machine


@pytest.fixture(scope="module")
def strength():
    return benchmark_module("strength")


def test_a_recorded_match_is_in_the_card_and_the_weights_are_the_same(strength, tmp_path,
                                                                       capsys):
    path = tmp_path / "net.npz"
    net = Network.create("backgammon", 8, rng=np.random.default_rng(3), scale=0.3)
    net.info = {"released": "then"}
    net.save(path, card_file=True)
    for seed in (1, 2):
        strength.main(["--a", str(path), "--b", "random", "--games", "20", "--seed",
                       str(seed), "--record"])
    out = capsys.readouterr().out
    assert "recorded in the card of" in out
    again = Network.load(path)
    for name in ("w1t", "b1", "w2", "b2"):
        assert np.array_equal(getattr(again, name), getattr(net, name)), name
    marks = again.info["benchmarks"]
    assert again.info["released"] == "then" and [m["seed"] for m in marks] == [1, 2]
    first = marks[0]
    assert first["games"] == 20 and first["b"].startswith("random")
    assert first["ci95"][0] <= first["ppg"] <= first["ci95"][1]
    assert "--record" in first["command"] and first["date"][:2] == "20"
    assert first["machine"] == machine() and "cores" in first["machine"]
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["info"]["benchmarks"] == marks


@pytest.mark.parametrize("argv, words", [
    (["--a", "pubeval", "--b", "random"], "must be a model file"),
    (["--a", "MODEL", "--b", "random", "--cube"], "a whole cubeless match"),
    (["--a", "MODEL", "--b", "random", "--first-pair", "3"], "a whole cubeless match"),
])
def test_record_refuses_what_has_no_card_or_is_not_a_whole_match(strength, tmp_path,
                                                                  capsys, argv, words):
    path = tmp_path / "net.npz"
    Network.create("backgammon", 8, rng=np.random.default_rng(3), scale=0.3).save(path)
    before = path.read_bytes()
    argv = [str(path) if x == "MODEL" else x for x in argv]
    with pytest.raises(SystemExit) as exc:
        strength.main([*argv, "--games", "20", "--record"])
    assert exc.value.code == 2 and words in capsys.readouterr().err
    assert path.read_bytes() == before
