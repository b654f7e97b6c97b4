"""Self-play training: config, the TD kernel, checkpoints, resume, kills."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from badfiles import bad_checkpoints, bad_models

from engine.cli._common import folder_lock
from engine.eval.network import Network, atomic_savez
from engine.movegen._core import new_scratch
from engine.rules.position import Position
from engine.rules.variants import get_rules
from training import checkpoint, td
from training.config import ConfigError, TrainConfig, describe, load_config
from training.selfplay import main

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--set", "size=tiny", "--set", "eval_games=20", "--quiet"]


# ------------------------------------------------------------------ config
def test_config_rejects_unknown_and_ill_typed_keys(tmp_path):
    with pytest.raises(ConfigError, match="unknown config key.*'alhpa'"):
        TrainConfig.from_dict({"alhpa": 0.1})
    with pytest.raises(ConfigError, match="expected float"):
        TrainConfig.from_dict({"alpha": "fast"})
    with pytest.raises(ConfigError, match="expected int"):
        TrainConfig.from_dict({"hidden": 1.5})
    with pytest.raises(ConfigError, match="size"):
        TrainConfig(size="huge")
    with pytest.raises(ConfigError, match="lam"):
        TrainConfig(lam=1.5)
    # sizes a game's record rows and a strength figure's rows are held at (a numpy
    # MemoryError traceback before), and hand-crafted inputs of another geometry
    with pytest.raises(ConfigError, match="max_turns"):
        TrainConfig(max_turns=10**12)
    with pytest.raises(ConfigError, match="eval_games"):
        TrainConfig(eval_games=10**12)
    for variant, encoder in (("long_nardy", "tesauro198+f13"), ("plakoto", "tesauro198+f5"),
                             ("fevga", "tesauro198+f21")):
        with pytest.raises(ConfigError, match="opposite directions with hitting"):
            TrainConfig(variant=variant, encoder=encoder)
    TrainConfig(variant="portes", encoder="tesauro198+f21")
    TrainConfig(variant="long_nardy", encoder="nardy255+m14")
    f = tmp_path / "c.json"
    f.write_text('{"size": "large", "alpha": 1}')
    cfg = load_config(f, ["lam=0", "variant=portes"])
    assert (cfg.hidden_units, cfg.alpha, cfg.lam, cfg.variant) == (128, 1.0, 0.0, "portes")
    assert cfg == TrainConfig.from_dict(cfg.to_dict())
    text = describe()
    assert all(f"{name} =" in text for name in cfg.to_dict())


def test_alpha_schedule():
    cfg = TrainConfig(alpha=0.1, alpha_final=0.02, alpha_half_life=1000)
    assert cfg.alpha_at(0) == pytest.approx(0.1)
    assert cfg.alpha_at(1000) == pytest.approx(0.06)


# ------------------------------------------------------------------ the kernel
def _kernel_args(net, variant="backgammon"):
    rules = get_rules(variant)
    return (Position.start(variant).to_array(), rules.table(), new_scratch(),
            rules.backgammon_triple,
            rules.opening_rolls_both, *net.arrays(), *net.encoder_arrays())


def test_learning_step_moves_outputs_towards_target():
    net = Network.create("backgammon", 16, rng=np.random.default_rng(1))
    enc = net.encoder_arrays()
    s = Position.start().to_array()
    target = np.array([1, 0.5, 0.1, 0, 0], np.float32)
    h, act, gh = (np.empty(16, np.float32) for _ in range(3))
    o = np.empty(5, np.float32)
    before = net.probabilities_of_arrays(s)[0]
    td._learn(s, target, 0.1, *net.arrays(), *enc, h, act, o, gh)
    after = net.probabilities_of_arrays(s)[0]

    def logloss(p):
        return -np.sum(target * np.log(p) + (1 - target) * np.log(1 - p))

    assert logloss(after) < logloss(before) - 0.01
    assert after[0] > before[0] and after[2] < before[2]


def test_selfplay_kernel_is_deterministic_and_learns():
    def play(seed):
        net = Network.create("backgammon", 8, rng=np.random.default_rng(0))
        counts = np.zeros(1, np.int64)
        stats = np.zeros((1, td.N_STATS), np.int64)
        params = np.array([0.1, 0.01, 1e5, 0.7, 0.0])
        n = td.selfplay_games(*_kernel_args(net), params, 3000, 20,
                              np.array([seed], np.uint64), counts, 0,
                              np.zeros(4, np.int64), stats)
        return net, n, counts, stats

    a, n, counts, stats = play(5)
    b = play(5)[0]
    c = play(6)[0]
    assert n == 20 and counts[0] == 20 and stats[0, td.ST_GAMES] == 20
    assert stats[0, td.ST_TURNS] > 20 * 10
    np.testing.assert_array_equal(a.w1t, b.w1t)
    assert not np.array_equal(a.w1t, c.w1t)
    assert not np.array_equal(a.w1t, Network.create("backgammon", 8,
                                                    rng=np.random.default_rng(0)).w1t)


def test_pause_flag_stops_the_kernel():
    net = Network.create("backgammon", 8)
    control = np.zeros(4, np.int64)
    control[td.C_PAUSE] = 1
    n = td.selfplay_games(*_kernel_args(net), np.array([0.1, 0.01, 1e5, 0.7, 0.0]), 3000,
                          10, np.array([1], np.uint64), np.zeros(1, np.int64), 0, control,
                          np.zeros((1, td.N_STATS), np.int64))
    assert n == 0


def test_evaluation_against_random_is_won_by_a_pubeval_like_margin():
    """The shipped 198-80 pruning network (the inputs of these tests' kernels) against
    a random mover: nearly every game won, many of them gammons; an untrained network
    on the same dice loses more than it wins."""
    pts = {}
    for name, net in (("trained", Network.load(ROOT / "models" / "backgammon.prune.npz")),
                      ("untrained", Network.create("backgammon", 8))):
        pts[name] = np.zeros(40, np.int64)
        td.evaluate_games(*_kernel_args(net), td.OPP_RANDOM, np.zeros((2, 122), np.float32),
                          3000, 40, np.array([3], np.uint64), pts[name])
        assert set(np.abs(pts[name])) <= {1, 2, 3}
    assert pts["trained"].mean() > 1.5 and (pts["trained"] > 0).mean() > 0.9
    assert pts["untrained"].mean() < 0.5


# ------------------------------------------------------------------ runs
def test_tiny_run_then_resume(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["--games", "30", "--out", str(out), "--workers", "1", "--seed", "3",
                 *FAST]) == 0
    first = checkpoint.latest(out)
    assert first.games == 30 and first.config.seed == 3 and first.config.size == "tiny"
    assert first.history and first.history[-1][2] == "pubeval"
    assert Network.load(out / "model.npz").hidden == 40
    # a fresh run into the same folder is refused; resume continues the count
    assert main(["--games", "60", "--out", str(out), *FAST]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["--games", "60", "--out", str(out), "--resume", "--workers", "2",
                 "--set", "alpha=0.05", "--quiet"]) == 0
    second = checkpoint.latest(out)
    # the workers claim their batches under one lock: the run stops at its target
    assert second.games == 60 and second.config.alpha == 0.05
    assert second.config.seed == 3 and second.rng.shape == (2,)
    # the change is on record with the game count it was made at
    assert first.resumes == [] and second.resumes == [[30, {"alpha": [first.config.alpha, 0.05]}]]
    assert not np.array_equal(first.net.w1t, second.net.w1t)
    # the architecture cannot change on resume
    assert main(["--games", "90", "--out", str(out), "--resume", "--set", "size=large",
                 "--quiet"]) == 2


def test_same_seed_same_weights(tmp_path):
    runs = []
    for name in ("a", "b"):
        main(["--games", "25", "--out", str(tmp_path / name), "--workers", "1",
              "--set", "size=tiny", "--set", "eval_games=0", "--quiet"])
        runs.append(checkpoint.latest(tmp_path / name))
    np.testing.assert_array_equal(runs[0].net.w1t, runs[1].net.w1t)
    np.testing.assert_array_equal(runs[0].rng, runs[1].rng)


def test_a_run_of_no_games_is_an_error(tmp_path, capsys):
    for games in ("0", "-5"):                 # it said "already 0 games" and exited 0
        with pytest.raises(SystemExit) as info:
            main(["--games", games, "--out", str(tmp_path / "run")])
        assert info.value.code == 2 and "--games" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_diverged_weights_are_not_saved_and_the_checkpoints_before_stay(tmp_path):
    """A run whose weights turned NaN (a learning rate far too high) wrote them and
    pruned its good checkpoints, so that it could not be resumed."""
    net = Network.create("backgammon", 40)
    for games in (5, 6, 7):
        checkpoint.save(tmp_path, checkpoint.RunState(TrainConfig(size="tiny"), net,
                                                      games=games, rng=np.ones(1, np.uint64)),
                        keep=3)
    before = sorted(p.name for p in tmp_path.iterdir())
    net.w1t[0, 0] = np.nan
    with pytest.raises(checkpoint.CheckpointError, match="non-finite"):
        checkpoint.save(tmp_path, checkpoint.RunState(TrainConfig(size="tiny"), net,
                                                      games=8, rng=np.ones(1, np.uint64)),
                        keep=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert checkpoint.latest(tmp_path).games == 7


def test_interrupted_write_leaves_old_checkpoint(tmp_path, monkeypatch):
    state = checkpoint.RunState(TrainConfig(size="tiny"), Network.create("backgammon", 40),
                                games=5, rng=np.ones(1, np.uint64))
    path = checkpoint.save(tmp_path, state)
    good = path.read_bytes()

    def boom(src, dst):
        raise KeyboardInterrupt("killed between write and rename")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_savez(path, {"x": np.zeros(3)})
    monkeypatch.undo()
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == [path.name]   # no temp left
    assert checkpoint.load(path).games == 5


def test_kill_9_leaves_loadable_checkpoints(tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.selfplay", "--games", "10000000", "--out", str(out),
         "--workers", "2", "--set", "size=tiny", "--set", "checkpoint_minutes=0.005",
         "--set", "eval_games=0", "--quiet"], cwd=ROOT, env=env)
    try:
        deadline = time.time() + 60
        while len(checkpoint.checkpoints(out)) < 2 and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.7)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    files = checkpoint.checkpoints(out)
    assert files, "no checkpoint written before the kill"
    for f in files:
        assert checkpoint.load(f).games > 0
    assert checkpoint.latest(out).games == max(checkpoint.load(f).games for f in files)
    # the orphaned workers notice and exit
    time.sleep(1.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(out) not in ps
    # the killed run's folder lock went with it: the run resumes (here: already done)
    assert main(["--games", "1", "--out", str(out), "--resume", "--quiet"]) == 0


def test_a_run_folder_in_use_is_refused_before_any_game(tmp_path, capsys):
    """Two runs in one folder (the command started twice, a --resume while the run
    goes on) would each write checkpoints and delete the other's: the second is
    refused at once, naming the process that holds the folder."""
    out = tmp_path / "run"
    with folder_lock(out):
        for extra in ([], ["--resume"]):
            assert main(["--games", "10", "--out", str(out), *extra, *FAST]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and err.startswith("error: --out ")
            assert f"is in use by process {os.getpid()}" in err, err
    assert not checkpoint.checkpoints(out)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom engine.cli._common import "
         "folder_lock\nwith folder_lock(sys.argv[1]):\n    print('held', flush=True)\n"
         "    time.sleep(60)", str(out)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"held\n"
        assert main(["--games", "10", "--out", str(out), *FAST]) == 2
        assert f"in use by process {holder.pid}" in capsys.readouterr().err
    finally:
        holder.kill()                  # kill -9: the lock file stays, its lock does not
        holder.wait()
        holder.stdout.close()
    assert main(["--games", "10", "--out", str(out), *FAST]) == 0
    assert checkpoint.latest(out).games == 10


def _good_checkpoint(run_dir, games=5):
    state = checkpoint.RunState(TrainConfig(size="tiny"), Network.create("backgammon", 40),
                                games=games, rng=np.ones(1, np.uint64),
                                history=[[games, 0.25, "pubeval", 20]])
    return checkpoint.save(run_dir, state)


def test_damaged_checkpoints_are_refused_with_the_typed_error(tmp_path):
    """Regression: a checkpoint claiming ``games: -5``, ``1e300``, ``2.5`` or ``true``
    was taken, and a bad card crashed the loader with an untyped exception."""
    good = _good_checkpoint(tmp_path / "good")
    for what, path in bad_checkpoints(good, tmp_path / "bad").items():
        with pytest.raises(checkpoint.CheckpointError) as info:
            checkpoint.load(path)
        message = str(info.value)
        assert str(path) in message and "\n" not in message and len(message) < 800, (
            what, message)


def test_resume_falls_back_past_a_damaged_newest_checkpoint(tmp_path, capsys):
    """Regression: a damaged newest checkpoint crashed ``--resume``; it is named in one
    line on standard error and the one before it is taken."""
    run_dir = tmp_path / "run"
    good = _good_checkpoint(run_dir)
    for what, bad in bad_checkpoints(good, tmp_path / "bad").items():
        newest = checkpoint.path_for(run_dir, 10)
        newest.write_bytes(bad.read_bytes())
        state = checkpoint.latest(run_dir)
        err = capsys.readouterr().err
        assert state.games == 5, what
        assert err.startswith("skipping unreadable checkpoint: ") and err.count("\n") == 1, (
            what, err)
    assert main(["--games", "5", "--out", str(run_dir), "--resume", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "already 5 games" in out and err.count("\n") == 1
    good.unlink()                      # none left that loads: a clear error, exit 2
    assert main(["--games", "9", "--out", str(run_dir), "--resume", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "none of its 1 checkpoint(s) can be read" in err and "Traceback" not in err


def test_init_from_a_damaged_model_is_an_error(tmp_path, capsys):
    bad = bad_models(tmp_path / "bad")["corrupt deflate (zlib.error)"]
    assert main(["--games", "5", "--out", str(tmp_path / "run"), "--init", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and str(bad) in err


def test_seed_must_be_a_whole_number(capsys):
    """Regression: ``--seed -1`` got as far as a traceback from numpy."""
    for argv in (["--seed", "-1"], ["--seed", "x"]):
        with pytest.raises(SystemExit) as info:
            main(["--games", "5", "--out", "unused", *argv])
        assert info.value.code == 2 and "--seed" in capsys.readouterr().err
    from training.release import main as release
    with pytest.raises(SystemExit):
        release(["--run", "unused", "--seed", "-1"])
    assert "--seed" in capsys.readouterr().err


def test_strength_in_chunks_plays_the_games_of_one_call(tmp_path):
    """The strength figure is measured in chunks (so that a signal can stop it) and
    comes out as one kernel call over all its games would have it."""
    from engine.eval.heuristic import weights as heuristic_weights
    from engine.eval.pubeval import weights as pubeval_weights
    from training.trainer import EVAL_CHUNK, Trainer
    state = checkpoint.RunState(TrainConfig(size="tiny", eval_games=2 * EVAL_CHUNK + 50),
                                Network.create("backgammon", 40))
    ppg, _, n = Trainer(state, tmp_path, 1).strength()
    one = Trainer(state, tmp_path, 1)
    pts = np.zeros(n, np.int64)
    td.evaluate_games(*one._net_args(one.w1t, one.b1, one.w2, one.b2), td.OPP_PUBEVAL,
                      pubeval_weights(), one.cfg.max_turns, n, one.eval_rng, pts,
                      hw=heuristic_weights(one.rules))
    assert n == 2 * EVAL_CHUNK + 50 and ppg == pts.mean()


def test_a_second_sigterm_cannot_skip_the_final_checkpoint(tmp_path):
    """Regression: the final checkpoint was written after the final strength figure, so
    a second SIGTERM during that figure ended the run with no checkpoint. Now the first
    SIGTERM stops the workers and writes it; the second skips the figure."""
    out, log = tmp_path / "run", tmp_path / "stderr"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "training.selfplay", "--games", "10000000", "--out",
             str(out), "--workers", "1", "--set", "size=tiny", "--set",
             "checkpoint_minutes=60", "--set", "eval_minutes=60", "--set",
             "eval_games=1000000"], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 600          # the kernels may compile first
        while b"game" not in log.read_bytes():      # the progress bar: games under way
            assert proc.poll() is None and time.time() < deadline, log.read_text()
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        deadline = time.time() + 20
        while not checkpoint.checkpoints(out) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)                       # into the final figure: a million games
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert proc.returncode == 0 and "Traceback" not in text, text
    assert "the final strength figure is skipped" in text
    state = checkpoint.latest(out)
    assert state.games > 0 and state.history == []


def test_warm_start_keeps_the_trained_play_and_adds_zero_weight_inputs():
    from training.selfplay import warm_start
    trained = Network.create("backgammon", 12, rng=np.random.default_rng(8), scale=0.5)
    fresh = Network.create("backgammon", 12, encoder="tesauro198+f5",
                           rng=np.random.default_rng(9), scale=0.5)
    net = warm_start(fresh, trained)
    assert net.n_inputs == 203 and not net.w1t[198:].any()
    positions = [Position.start(), Position.from_literal("x 24:1 13:6 8:3 6:5; o 24:2 "
                                                         "13:5 8:3 6:5")]
    np.testing.assert_allclose(net.probabilities(positions), trained.probabilities(positions),
                               rtol=1e-6, atol=1e-6)
    # a larger hidden layer: the trained units, new ones that do not change the play yet
    wider = warm_start(Network.create("backgammon", 20, rng=np.random.default_rng(4),
                                      scale=0.5), trained)
    assert wider.hidden == 20 and wider.w1t[:, 12:].any() and not wider.w2[:, 12:].any()
    np.testing.assert_allclose(wider.probabilities(positions),
                               trained.probabilities(positions), rtol=1e-6, atol=1e-6)
    with pytest.raises(ConfigError, match="cannot seed"):
        warm_start(Network.create("backgammon", 11, encoder="tesauro198+f5"), trained)


def test_a_release_measures_the_network_it_replaces(tmp_path, capsys):
    """``training.release`` plays the run's network against the released one it is about
    to overwrite and keeps the figure in the new card; a damaged old model is an error
    that leaves it in place."""
    import json

    from training.release import main as release
    new = Network.create("backgammon", 40, rng=np.random.default_rng(1))
    checkpoint.save(tmp_path / "run", checkpoint.RunState(
        TrainConfig(size="tiny"), new, games=5, rng=np.ones(1, np.uint64)))
    models = tmp_path / "models"
    Network.create("backgammon", 40, rng=np.random.default_rng(2)).save(
        models / "backgammon.npz")
    flags = ["--run", str(tmp_path / "run"), "--out", str(models), "--pubeval-games", "0",
             "--random-games", "0", "--heuristic-games", "0", "--replaces-games", "200"]
    old = Network.load(models / "backgammon.npz")
    assert release(flags) == 0
    card = json.loads((models / "backgammon.json").read_text())
    (h2h,) = card["info"]["strength_0ply"]
    assert h2h["games"] == 200 and "replaces" in h2h["opponent"]
    from engine.play.duel import duel  # the run's network against the old one
    assert h2h["ppg"] == round(duel(new, old, 200, 1, "backgammon").ppg, 4)
    assert h2h["ppg"] != round(duel(new, new, 200, 1, "backgammon").ppg, 4)
    (models / "backgammon.npz").write_bytes(b"not a model")
    capsys.readouterr()
    assert release(flags) == 2
    assert "--replaces" in capsys.readouterr().err
    assert (models / "backgammon.npz").read_bytes() == b"not a model"
    # an explicit --replaces is checked before any measuring: a missing file (it was
    # ignored) and a model of another game (a traceback after the strength games)
    Network.create("plakoto", 40).save(tmp_path / "plakoto.npz")
    for other, words in ((tmp_path / "missing.npz", "no such file"),
                         (tmp_path / "plakoto.npz", "a model of plakoto")):
        assert release(flags[:-2] + ["--replaces", str(other), "--random-games", "10"]) == 2
        out = capsys.readouterr()
        assert words in out.err and out.out == "", out
    # so are the model in --out it would replace, and --out itself (both were
    # tracebacks after the strength games)
    Network.create("plakoto", 40).save(models / "backgammon.npz")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for out_flags, words in ((["--out", str(models)], "a model of plakoto"),
                             (["--out", str(a_file / "models")], "is a file")):
        assert release(flags[:2] + flags[4:] + out_flags + ["--random-games", "10"]) == 2
        out = capsys.readouterr()
        assert words in out.err and out.out == "", out


def test_run_folders_and_resume_flags_that_would_lose_or_ignore_something(tmp_path,
                                                                           capsys):
    """Refused before any game: ``--out`` naming a file, a folder of a supervised run
    (the two would overwrite each other's ``model.npz``), ``--init`` or another seed on
    resume (both were ignored without a word); a config file's fields count on resume
    even where they equal the defaults."""
    a_file = tmp_path / "file"
    a_file.write_text("x")
    sup = tmp_path / "sup"
    sup.mkdir()
    (sup / "checkpoint.npz").write_bytes(b"x")
    model_only = tmp_path / "model_only"          # a fresh run would overwrite it
    model_only.mkdir()
    Network.create("backgammon", 40).save(model_only / "model.npz")
    kept = (model_only / "model.npz").read_bytes()
    for out, words in ((a_file, "is a file"), (a_file / "run", "is a file"),
                       (sup, "supervised run"), (model_only, "would overwrite it")):
        assert main(["--games", "5", "--out", str(out), *FAST]) == 2
        assert words in capsys.readouterr().err
    assert (model_only / "model.npz").read_bytes() == kept
    for flags in (["--games", "\u0663"], ["--workers", "\u0661"], ["--games", "-3"],
                  ["--games", str(2**63)], ["--workers", "0"], ["--workers", "100000"]):
        with pytest.raises(SystemExit):
            main(["--games", "5", "--out", str(tmp_path / "new"), *FAST, *flags])
        assert "--" + flags[0].lstrip("-") in capsys.readouterr().err
    run_dir = tmp_path / "run"
    _good_checkpoint(run_dir)
    for flags, words in ((["--set", "seed=5"], "seed"),):
        assert main(["--games", "9", "--out", str(run_dir), "--resume", *flags]) == 2
        assert words in capsys.readouterr().err
    # the same command with --resume (a run begun with --init): the run goes on, the
    # --init read only when a run starts (it was refused, though the trainer's own
    # advice after a worker died said to run the same command with --resume)
    from training.selfplay import build_state
    before = checkpoint.latest(run_dir)
    args = type("Args", (), dict(out=str(run_dir), resume=True, init="models/backgammon.npz",
                                 seed=None, config=None, set=[], variant=None))()
    again = build_state(args)
    assert again.games == before.games and "--init" in capsys.readouterr().err
    # the command line's game and the --set encoder are checked together (the encoder
    # was checked against backgammon first and refused)
    args = type("Args", (), dict(out=str(tmp_path / "gb"), resume=False, init=None,
                                 seed=None, config=None, set=["encoder=nardy255+m14"],
                                 variant="gul_bara"))()
    fresh = build_state(args)
    assert fresh.config.variant == "gul_bara" and fresh.config.encoder == "nardy255+m14"
    with pytest.raises(ConfigError, match=r"lam = 1\.5 is out of range: expected 0 \.\. 1"):
        load_config(None, ["lam=1.5"])
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{"keep_checkpoints": 3, "alpha": 0.05}')       # 3 is the default
    state = checkpoint.latest(run_dir)
    state.config = TrainConfig(size="tiny", keep_checkpoints=5)
    checkpoint.save(run_dir, state)
    args = type("Args", (), dict(out=str(run_dir), resume=True, init=None, seed=None,
                                 config=str(cfg), set=[], variant=None))()
    resumed = build_state(args)
    assert resumed.config.keep_checkpoints == 3 and resumed.config.alpha == 0.05


def test_a_run_that_abandons_every_game_stops_with_an_error(tmp_path, capsys):
    """``max_turns=1`` ends every game unfinished: the run counted none and never
    reached its target (it ran for ever); now it stops and says why."""
    assert main(["--games", "50", "--out", str(tmp_path / "run"), "--workers", "1",
                 "--set", "size=tiny", "--set", "max_turns=1", "--set", "eval_games=0",
                 "--quiet"]) == 2
    assert "abandoned at max_turns = 1" in capsys.readouterr().err


def test_a_network_too_large_for_its_file_is_refused_at_the_start():
    with pytest.raises(ConfigError, match="hidden = 90,000: at most"):
        TrainConfig(hidden=90_000)


def test_release_checks_its_folders_and_does_not_pass_over_a_damaged_newest(tmp_path,
                                                                            capsys):
    from training.release import main as release
    run_dir = tmp_path / "run"
    _good_checkpoint(run_dir, games=5)
    quick = ["--pubeval-games", "0", "--random-games", "0", "--heuristic-games", "0",
             "--replaces-games", "0"]
    a_file = tmp_path / "file"
    a_file.write_text("x")
    other = _good_checkpoint(tmp_path / "other", games=7)
    assert release(["--run", str(run_dir), *quick, "--out", str(a_file)]) == 2
    assert "is a file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        release(["--run", str(run_dir), *quick, "--checkpoint", str(other)])
    assert "is not a checkpoint of --run" in capsys.readouterr().err
    # a duel's count the duel refuses, or a seed beyond 64 bits, is refused before any
    # measuring (it was a traceback after the duels before it had run)
    for flag, value, words in (("--random-games", "101", "even number"),
                               ("--replaces-games", "3", "even number"),
                               ("--pubeval-games", "99999999999", "even number"),
                               ("--seed", str(2 ** 64), "2**64")):
        with pytest.raises(SystemExit):
            release(["--run", str(run_dir), *quick, flag, value])
        err = capsys.readouterr().err
        assert flag in err and words in err, err
    checkpoint.path_for(run_dir, 10).write_bytes(b"damaged")
    assert release(["--run", str(run_dir), "--out", str(tmp_path / "m"), *quick]) == 2
    err = capsys.readouterr().err
    assert "--checkpoint" in err and not (tmp_path / "m").exists()


def test_release_of_a_checkpoint_of_no_games_warns(tmp_path, capsys):
    from training.release import main as release
    run_dir = tmp_path / "run"
    _good_checkpoint(run_dir, games=0)
    quick = ["--pubeval-games", "0", "--random-games", "0", "--heuristic-games", "0",
             "--replaces-games", "0"]
    assert release(["--run", str(run_dir), "--out", str(tmp_path / "m"), *quick]) == 0
    assert "holds no self-play games" in capsys.readouterr().err
    _good_checkpoint(run_dir, games=5)
    assert release(["--run", str(run_dir), "--out", str(tmp_path / "m"), *quick]) == 0
    assert "holds no self-play games" not in capsys.readouterr().err


# ------------------------------------------------------------------ audit regressions
def test_a_worker_killed_from_outside_stops_the_run_with_its_final_checkpoint(tmp_path,
                                                                            capsys):
    """Regression: a worker killed with SIGKILL left the other one to play the run out
    alone, a few games short of its target, and then a ``RuntimeError`` traceback ended
    it without the final checkpoint or model. Now the run stops, saves the weights
    (consistent between games), names the worker and exits 2, ready to resume."""
    import multiprocessing as mp
    import threading
    out = tmp_path / "run"
    killed = []
    before = {p.pid for p in mp.active_children()}

    def kill_one():
        deadline = time.time() + 120             # the kernels may compile first
        while time.time() < deadline:
            workers = [p for p in mp.active_children() if p.pid not in before]
            if len(workers) == 2:
                time.sleep(0.3)                  # a few games under way
                os.kill(workers[1].pid, signal.SIGKILL)
                killed.append(workers[1].pid)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=kill_one, daemon=True)
    thread.start()
    code = main(["--games", "4000", "--out", str(out), "--workers", "2", "--set",
                 "size=tiny", "--set", "eval_games=0", "--set", "checkpoint_minutes=60",
                 "--quiet"])
    thread.join()
    err = capsys.readouterr().err
    assert killed and code == 2, err
    last = err.splitlines()[-1]              # (after a note that the kernels compile)
    assert last.startswith("error: worker ") and "Traceback" not in err, err
    assert f"pid {killed[0]}" in err and "SIGKILL" in err and "--resume" in err, err
    state = checkpoint.latest(out)
    assert 0 < state.games < 4000
    assert Network.load(out / "model.npz").info["trained_games"] == state.games
    assert main(["--games", str(state.games + 40), "--out", str(out), "--resume",
                 "--quiet"]) == 0
    assert checkpoint.latest(out).games == state.games + 40


@pytest.mark.parametrize("rate", [[], ["--set", "alpha=0.1", "--set", "alpha_final=0.1"]],
                         ids=["schedule", "constant"])
def test_a_resumed_run_is_the_run_not_stopped(tmp_path, rate):
    """Regression: the learning rate followed the games of the session only, so a
    resumed run started its schedule again from ``alpha``; with one worker a run of
    200 games and a run of 100 resumed to 200 are now the same bit for bit."""
    flags = ["--workers", "1", "--set", "size=tiny", "--set", "eval_games=0", "--quiet"]
    assert main(["--games", "200", "--out", str(tmp_path / "straight"), *flags, *rate]) == 0
    assert main(["--games", "100", "--out", str(tmp_path / "split"), *flags, *rate]) == 0
    assert main(["--games", "200", "--out", str(tmp_path / "split"), "--resume",
                 "--workers", "1", "--quiet"]) == 0
    a, b = checkpoint.latest(tmp_path / "straight"), checkpoint.latest(tmp_path / "split")
    assert a.games == b.games == 200 and b.resumes == []
    for x, y in zip(a.net.arrays(), b.net.arrays()):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.rng, b.rng)
    np.testing.assert_array_equal(a.stats, b.stats)


def test_a_fresh_run_does_not_overwrite_a_model_card(tmp_path, capsys):
    """Regression: only ``model.npz`` was looked for, so a fresh run wrote over a
    ``model.json`` alone in its folder (as ``training.supervised`` refuses to)."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "model.json").write_text('{"mine": true}\n')
    assert main(["--games", "5", "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert "model.json" in err and err.count("\n") == 1, err
    assert (out / "model.json").read_text() == '{"mine": true}\n'
    assert not checkpoint.checkpoints(out)


def test_an_unwritable_out_is_refused_before_any_game(tmp_path, capsys, read_only,
                                                      monkeypatch):
    """Regression: a read-only ``--out`` was found out when the first checkpoint was
    written, after the training, with a traceback."""
    from training.trainer import Trainer

    def no_games(*args, **kwargs):
        raise AssertionError("trained into a folder it cannot write")

    monkeypatch.setattr(Trainer, "run", no_games)
    locked = read_only(tmp_path / "locked")
    for out, words in ((locked, "cannot write into the folder"),
                       (locked / "run", "cannot make the folder")):
        assert main(["--games", "5", "--out", str(out), *FAST]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --out ") and err.count("\n") == 1, err
        assert words in err and "(Permission denied)" in err, err


def test_a_full_disk_is_one_line_and_exit_2(tmp_path, capsys, disk_full):
    """Regression: an OSError writing the checkpoint (a full disk) ended the run with a
    traceback."""
    out = tmp_path / "run"
    assert main(["--games", "5", "--out", str(out), "--workers", "1", "--set",
                 "size=tiny", "--set", "eval_games=0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write {out / 'checkpoint-'}"), err
    assert err.endswith(": No space left on device\n") and err.count("\n") == 1, err


@pytest.mark.parametrize("variant", ["backgammon", "portes", "plakoto"])
def test_family_features_are_refused_for_games_played_in_opposite_directions(variant):
    """Regression: ``nardy255+m14`` reads the board as if both sides moved the same
    way; it was taken for backgammon, portes and plakoto, where its inputs are wrong."""
    with pytest.raises(ConfigError, match=f"nardy255\\+m14.*{variant}.*same direction"):
        TrainConfig(variant=variant, encoder="nardy255+m14")
    for ok in ("fevga", "long_nardy", "gul_bara"):
        assert TrainConfig(variant=ok, encoder="nardy255+m14").encoder == "nardy255+m14"


def test_the_strength_history_counts_the_games_of_the_weights_it_measured(tmp_path,
                                                                          monkeypatch):
    """Regression: the figure's game count was read after the games of the figure,
    while the workers played on, so the learning curve was shifted to the right."""
    from training.trainer import Trainer
    cfg = TrainConfig(size="tiny", eval_games=2, eval_minutes=1e-4, checkpoint_minutes=60)
    trainer = Trainer(checkpoint.RunState(cfg, Network.create("backgammon", 40)),
                      tmp_path, 1)
    real = td.evaluate_games
    seen = []                                    # (games at its start, at its end)

    def slow_figure(*args, **kwargs):
        if trainer._procs:                       # not the compile call
            start = trainer.games()
            deadline = time.time() + 5           # the workers play on meanwhile
            while (trainer.games() < start + 20 and time.time() < deadline
                   and any(p.is_alive() for p in trainer._procs)):
                time.sleep(0.005)
            seen.append((start, trainer.games()))
        return real(*args, **kwargs)

    monkeypatch.setattr(td, "evaluate_games", slow_figure)
    final = trainer.run(1500, quiet=True)
    assert len(final.history) == len(seen) >= 2, (final.history, seen)
    assert any(end > start for start, end in seen), seen
    for row, (start, _) in zip(final.history, seen):
        assert row[0] <= start, (final.history, seen)


def test_a_signal_during_the_compile_stops_the_run_after_it(tmp_path, monkeypatch):
    """SIGTERM (or Ctrl-C) while numba compiled the kernels was raised inside llvmlite's
    callbacks: dropped (the run went on to its end) or a trace (helper 132). Held
    during the compile, it stops the run as soon as the compile is done, before any
    worker starts or any game is played."""
    from training.selfplay import _interrupt
    from training.trainer import Trainer
    cfg = TrainConfig(size="tiny", eval_games=2, checkpoint_minutes=60)
    trainer = Trainer(checkpoint.RunState(cfg, Network.create("backgammon", 40)),
                      tmp_path, 1)
    real = trainer.compile
    compiled = []

    def compile_signalled():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)                     # the handler has run by now
        real()
        compiled.append(True)                # not cut short

    monkeypatch.setattr(trainer, "compile", compile_signalled)
    old = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            trainer.run(1000, quiet=True)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert compiled and trainer.games() == 0 and not trainer._procs


def _released(models) -> dict:
    """The files of the folder ``models`` and their bytes (hidden ones included)."""
    return {p.name: p.read_bytes() for p in sorted(models.iterdir()) if p.is_file()}


@pytest.fixture
def a_release(tmp_path):
    """``(release flags with no duels, models folder)``: a run of 5 games and a folder
    of an older release of backgammon (model and card)."""
    run_dir = tmp_path / "run"
    _good_checkpoint(run_dir, games=5)
    models = tmp_path / "models"
    Network.create("backgammon", 40, rng=np.random.default_rng(2)).save(
        models / "backgammon.npz", card_file=True)
    flags = ["--run", str(run_dir), "--out", str(models), "--pubeval-games", "0",
             "--random-games", "0", "--heuristic-games", "0", "--replaces-games", "0"]
    return flags, models


def test_a_release_whose_card_cannot_be_written_is_refused_before_the_duels(
        a_release, capsys, monkeypatch):
    """Regression: with a folder where ``<out>/backgammon.json`` goes, the model was
    replaced after the duels and the card was a traceback: the new model went out
    without its card. Now both targets are checked before any duel."""
    from training import release
    flags, models = a_release
    (models / "backgammon.json").unlink()
    (models / "backgammon.json").mkdir()
    before = _released(models)

    def no_duels(*args, **kwargs):
        raise AssertionError("measured a network it could not release")

    monkeypatch.setattr(release, "duel", no_duels)
    for target in ("backgammon.json", "backgammon.npz"):
        if target == "backgammon.npz":             # the model's place a folder instead
            (models / "backgammon.json").rmdir()
            (models / "backgammon.npz").unlink()
            (models / "backgammon.npz").mkdir()
            before = _released(models)
        assert release.main(flags[:-1] + ["2", "--random-games", "2"]) == 2
        out = capsys.readouterr()
        assert out.out == "" and out.err.count("\n") == 1, out
        assert out.err.startswith(f"error: cannot write {models / target}: it is a folder")
        assert _released(models) == before and (models / target).is_dir()


def test_a_release_that_fails_to_write_leaves_the_old_model_and_card(a_release, capsys,
                                                                     monkeypatch):
    """Regression: the model was written before its card, so a card that could not be
    written (a full disk, a folder put in its way) left the new model with the old card
    or none, and a traceback. Both are written to temporary files first, then moved
    into place; a failure puts back what was moved, says so in one line and exits 2."""
    import errno

    from engine.eval import network
    from training import release
    flags, models = a_release
    before = _released(models)
    real = network.atomic_write_bytes

    def card_full(path, data):                    # the model fits, the card does not
        if str(path).endswith(".json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(network, "atomic_write_bytes", card_full)
    assert release.main(flags) == 2
    err = capsys.readouterr().err
    assert err == (f"error: cannot write {models / 'backgammon.json'}: No space left on "
                   f"device\n"), err
    assert _released(models) == before and sorted(p.name for p in models.iterdir()) == [
        "backgammon.json", "backgammon.npz"]
    monkeypatch.setattr(network, "atomic_write_bytes", real)
    # the card's place taken by a folder after the check: the model moved into place
    # is moved back
    monkeypatch.setattr(release, "_targets_problem", lambda out, variant: None)
    (models / "backgammon.json").unlink()
    (models / "backgammon.json").mkdir()
    before = _released(models)
    assert release.main(flags) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write {models / 'backgammon.json'}: ") and (
        err.count("\n") == 1), err
    assert _released(models) == before and sorted(p.name for p in models.iterdir()) == [
        "backgammon.json", "backgammon.npz"]
    # a release into a folder of neither: a failed card leaves no model either
    fresh = models.parent / "fresh"
    fresh.mkdir()
    (fresh / "backgammon.json").mkdir()
    assert release.main(flags[:2] + ["--out", str(fresh)] + flags[4:]) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot write {fresh}/backgammon.json")
    assert [p.name for p in fresh.iterdir()] == ["backgammon.json"]
    monkeypatch.undo()
    (models / "backgammon.json").rmdir()
    assert release.main(flags) == 0                # and a release that can: both files
    card = Network.load(models / "backgammon.npz").info
    assert card["trained_games"] == 5 and "backgammon.json" in capsys.readouterr().out
    assert (models / "backgammon.json").is_file()


def test_a_release_on_a_full_disk_is_one_line_and_keeps_the_old_files(a_release, capsys,
                                                                      disk_full):
    from training.release import main as release
    flags, models = a_release
    before = _released(models)
    assert release(flags) == 2
    err = capsys.readouterr().err
    assert err == f"error: cannot write {models / 'backgammon.npz'}: No space left on device\n"
    assert _released(models) == before and len(list(models.iterdir())) == 2


def test_a_diverged_snapshot_is_the_one_line_checkpoint_error(tmp_path):
    """Regression: the trainer's snapshot built a Network of the NaN weights first,
    whose ``NetworkFileError`` was a traceback, before the checkpoint's own error (the
    learning diverged; the checkpoints before kept) was reached."""
    from training.trainer import Trainer
    net = Network.create("backgammon", 40)
    trainer = Trainer(checkpoint.RunState(TrainConfig(size="tiny"), net), tmp_path, 1)
    trainer.w1t[3, 4] = np.inf
    with pytest.raises(checkpoint.CheckpointError, match=r"weights \(W1\) hold non-finite "
                                                         r"values \(the learning diverged"):
        trainer.save(1.0)
    assert list(tmp_path.iterdir()) == []


def test_a_diverging_run_ends_in_one_line_keeping_its_checkpoint_and_model(tmp_path,
                                                                           capsys):
    """Regression: ``--resume --set alpha=1e30`` ended in a traceback
    (``NetworkFileError: w1t holds ... non-finite value(s)``)."""
    out = tmp_path / "run"
    quick = ["--workers", "1", "--set", "eval_games=0", "--quiet"]
    assert main(["--games", "30", "--out", str(out), "--set", "size=tiny", *quick]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".npz", ".json")}
    capsys.readouterr()
    assert main(["--games", "200", "--out", str(out), "--resume", "--set", "alpha=1e30",
                 "--set", "alpha_final=1e30", *quick]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out}: after ") and err.count("\n") == 1, err
    assert "the learning diverged" in err and "checkpoints before it are kept" in err, err
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".npz", ".json")}
    assert after == before and checkpoint.latest(out).games == 30


def test_a_refused_command_leaves_no_run_folder(tmp_path, capsys):
    """Regression: ``--out`` (with its lock file) was made before the config was
    checked, so ``--set foo=1`` or ``--resume`` of a missing folder left an empty
    folder behind."""
    out = tmp_path / "run"
    for flags, words in ((["--set", "foo=1"], "unknown config key(s) ['foo']"),
                         (["--set", "alpha=-1"], "alpha = -1.0 is out of range"),
                         (["--variant", "chess"], "variant = 'chess'"),
                         (["--resume"], "--resume: no checkpoint in"),
                         (["--resume", "--set", "foo=1"], "--resume: no checkpoint in")):
        assert main(["--games", "5", "--out", str(out), *flags]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err and err.count("\n") == 1, err
        assert not out.exists(), flags
    _good_checkpoint(out)                        # a run's folder: checked under its lock
    assert main(["--games", "9", "--out", str(out), "--resume", "--set", "foo=1"]) == 2
    assert "unknown config key(s) ['foo']" in capsys.readouterr().err
