"""The Ray backend (engine.cluster, training.cluster) on a local two-CPU Ray cluster:
rollouts, labels and self-play give what the local code gives."""

import numpy as np
import pytest

from engine.cluster import ClusterError, RayBackend, connect, make_backend
from engine.cube.decision import CubeState
from engine.notation.gnubg_id import position_from_id
from engine.search.nply import Search
from engine.search.rollout import Rollout, RolloutSettings

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[cluster]')")

pytestmark = pytest.mark.xdist_group("cluster")

# a contact position of the middle game (GNU Backgammon ID; six rolls from the start)
MIDDLE = "4NvBAxAzG+QBIQ"


@pytest.fixture(scope="module")
def backend():
    b = RayBackend(num_cpus=2)
    yield b
    ray.shutdown()


@pytest.fixture(scope="module")
def search():
    return Search.load("backgammon")


def _same(a, b):
    np.testing.assert_array_equal(a.results, b.results)
    assert a.equity == b.equity and a.se == b.se and a.se_plain == b.se_plain
    assert a.trials == b.trials


# The self-play tests come first: their kernels are this group's own, while the
# rollouts' (the search's) are compiled meanwhile by the worker that runs the search
# group, and then load from the cache here instead of compiling on both workers.
def test_self_play_on_ray_with_one_worker_is_the_local_run(backend, tmp_path):
    from training import checkpoint
    from training.selfplay import main
    fast = ["--set", "size=tiny", "--set", "eval_games=0", "--quiet", "--workers", "1"]
    assert main(["--games", "230", "--out", str(tmp_path / "local")] + fast) == 0
    assert main(["--games", "230", "--out", str(tmp_path / "ray"), "--backend", "ray",
                 "--sync-games", "70"] + fast) == 0
    a = checkpoint.latest(tmp_path / "local")
    b = checkpoint.latest(tmp_path / "ray")
    assert a.games == b.games == 230
    for x, y in zip(a.net.arrays(), b.net.arrays()):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.rng, b.rng)
    np.testing.assert_array_equal(a.stats, b.stats)


def test_a_run_resumed_on_either_backend_is_the_run_not_stopped(backend, tmp_path):
    """Regression: the local backend restarted the learning rate's schedule on resume
    (the Ray one counted the games before); now 100 local games, resumed on Ray to 170
    and locally to 230, are the 230 of one local run, bit for bit (one worker)."""
    from training import checkpoint
    from training.selfplay import main
    fast = ["--set", "size=tiny", "--set", "eval_games=0", "--quiet", "--workers", "1"]
    assert main(["--games", "230", "--out", str(tmp_path / "straight")] + fast) == 0
    out = str(tmp_path / "split")
    assert main(["--games", "100", "--out", out] + fast) == 0
    assert main(["--games", "170", "--out", out, "--resume", "--backend", "ray",
                 "--sync-games", "70"] + fast) == 0
    assert main(["--games", "230", "--out", out, "--resume"] + fast) == 0
    a, b = checkpoint.latest(tmp_path / "straight"), checkpoint.latest(out)
    assert a.games == b.games == 230
    for x, y in zip(a.net.arrays(), b.net.arrays()):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.rng, b.rng)


def test_self_play_on_ray_with_two_workers_learns_resumes_and_stops_exactly(backend, tmp_path):
    from training import checkpoint
    from training.selfplay import main
    out = str(tmp_path / "run")
    fast = ["--set", "size=tiny", "--set", "eval_games=20", "--quiet", "--workers", "2",
            "--backend", "ray", "--sync-games", "40"]
    assert main(["--games", "250", "--out", out] + fast) == 0
    first = checkpoint.latest(out)
    assert first.games == 250 and first.rng.shape == (2,)
    assert first.history[-1][0] == 250 and first.history[-1][2] == "pubeval"
    # resumed on Ray, then once more on the local backend: the same run files
    assert main(["--games", "330", "--out", out, "--resume"] + fast) == 0
    again = checkpoint.latest(out)
    # every game learned from is counted; a game cut at max_turns (stats[5]) is not
    assert again.games == 330 and int(again.stats[0]) == 330
    assert any(not np.array_equal(x, y) for x, y in zip(first.net.arrays(),
                                                        again.net.arrays()))
    assert main(["--games", "400", "--out", out, "--resume", "--set", "size=tiny",
                 "--set", "eval_games=0", "--quiet", "--workers", "2"]) == 0
    assert checkpoint.latest(out).games == 400


def test_a_rollout_on_ray_is_the_local_rollout_bit_for_bit(backend, search):
    pos = position_from_id(MIDDLE)
    settings = RolloutSettings(trials=90, truncate=4, seed=11)
    local = Rollout(search, settings).position(pos)
    seen = []
    on_ray = Rollout(search, settings, backend).position(pos, progress=seen.append)
    _same(local, on_ray)
    assert seen[-1] == 90 and seen == sorted(seen)
    # however many tasks the trials are split into
    three = Rollout(search, settings, RayBackend(workers=3)).position(pos)
    _same(local, three)


def test_candidates_with_a_stop_rule_and_a_cubeful_rollout_merge_exactly(backend, search):
    pos = position_from_id(MIDDLE)
    settings = RolloutSettings(trials=1300, truncate=2, seed=3, stop_sigmas=1.0)
    local = Rollout(search, settings).candidates(pos, (6, 4), 3)
    on_ray = Rollout(search, settings, backend).candidates(pos, (6, 4), 3)
    assert [c.move for c in local] == [c.move for c in on_ray]
    for a, b in zip(local, on_ray):
        _same(a.result, b.result)
        assert a.behind == b.behind and a.se_behind == b.se_behind
    cube = CubeState(2, "me")
    settings = RolloutSettings(trials=40, truncate=3, seed=5)
    local = Rollout(search, settings).position(pos, cube=cube)
    on_ray = Rollout(search, settings, backend).position(pos, cube=cube)
    _same(local, on_ray)
    np.testing.assert_array_equal(local.cubeful_results, on_ray.cubeful_results)
    assert local.cubeful_equity == on_ray.cubeful_equity


def test_labels_on_ray_are_the_local_labels(backend, tmp_path):
    from training.label import label
    from training.positions import setup_positions_set
    ps = setup_positions_set("backgammon", 9, seed=2)
    local = label(ps, None, 1, workers=1, chunk=4)
    parts = tmp_path / "parts"
    on_ray = label(ps, None, 1, chunk=4, parts=parts, backend=backend)
    np.testing.assert_array_equal(local.targets, on_ray.targets)
    assert len(list(parts.glob("part-*.npz"))) == 3
    assert "RayBackend" in on_ray.info["labels"]["workers"]
    # the workers search with the driver's settings: pruned labels are pruned there too
    pruned = label(ps, None, 1, chunk=4, backend=backend, prune=True)
    np.testing.assert_array_equal(pruned.targets, label(ps, None, 1, workers=1, chunk=4,
                                                        prune=True).targets)
    assert not np.array_equal(pruned.targets, local.targets)


def test_the_analyse_command_rolls_out_on_ray(backend, capsys):
    from engine.cli.analyse import main
    args = ["--position", MIDDLE, "--dice", "31", "--rollout", "--trials", "36",
            "--truncate", "2", "--candidates", "2", "--json"]
    assert main(args) == 0
    local = capsys.readouterr().out
    assert main(args + ["--backend", "ray"]) == 0        # joins the running cluster
    assert capsys.readouterr().out == local


def test_bad_cluster_settings_get_a_clear_error(backend, tmp_path, capsys):
    with pytest.raises(ClusterError, match="backend = 'spark'"):
        make_backend("spark")
    with pytest.raises(ClusterError, match="--address is for --backend ray"):
        make_backend("local", "auto")
    with pytest.raises(ClusterError, match="workers = 0"):
        RayBackend(workers=0)
    with pytest.raises(ClusterError, match="num_cpus"):
        connect(None, num_cpus=-1)
    assert make_backend("local") is None
    from training.selfplay import main
    with pytest.raises(SystemExit):
        main(["--games", "10", "--out", str(tmp_path / "x"), "--address", "auto"])
    assert "--address and --sync-games are for --backend ray" in capsys.readouterr().err
    import argparse

    from training.cluster import RayTrainer
    from training.selfplay import build_state
    args = argparse.Namespace(out=str(tmp_path / "y"), resume=False, config=None, set=[],
                              variant=None, seed=None, init=None)
    with pytest.raises(ClusterError, match="sync_games"):
        RayTrainer(build_state(args), tmp_path / "y", 2, None, 0)


def test_an_address_that_does_not_answer_is_an_error_at_once():
    import socket
    import time

    from engine.cluster import _reachable
    with socket.socket() as sock:                 # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    t = time.time()
    with pytest.raises(ConnectionError, match=f"no answer from 127.0.0.1:{port}"):
        _reachable(f"127.0.0.1:{port}")
    with pytest.raises(ValueError, match="expected 'auto' or host:port"):
        _reachable("nonsense")
    assert time.time() - t < 10
    _reachable("auto")                            # left to Ray


def test_the_protocol_rolls_out_on_ray_when_started_so(backend, monkeypatch):
    import io
    import json

    from engine.cli import protocol
    req = json.dumps({"cmd": "rollout", "position": MIDDLE, "dice": [3, 1], "trials": 36,
                      "truncate": 2, "candidates": 2}).encode() + b"\n"

    def served():
        out = io.BytesIO()
        protocol.serve(io.BytesIO(req), out)
        return json.loads(out.getvalue())

    local = served()
    monkeypatch.setattr(protocol, "_ROLLOUTS", {"backend": "ray", "address": None,
                                                "made": None})
    on_ray = served()
    assert protocol._ROLLOUTS["made"] is not None and on_ray == local
    assert "error" not in on_ray and len(on_ray["candidates"]) == 2
    with pytest.raises(SystemExit):
        protocol.main(["--address", "auto"])


def test_a_self_play_actor_copies_its_read_only_settings():
    """Ray's object store hands an actor read-only arrays, which numba types apart from
    writable ones: an actor that kept its settings read-only compiled the self-play
    kernels again in each actor process, where the local run's cache would serve."""
    from training.cluster import SelfPlayWorker
    params = np.arange(6, dtype=np.float64)
    params.setflags(write=False)
    worker = SelfPlayWorker("backgammon", (), params, 100)
    assert worker.params.flags.writeable
    np.testing.assert_array_equal(worker.params, params)
