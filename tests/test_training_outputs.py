"""What the training programs write, and what they refuse: an output path that a file
stands in the way of, or an existing file that is not what they write (a model, say),
is a one-line error before any work, never a traceback after it or a file lost; a
position set's files are checked for what they hold, and a labelling's chunks for
their targets."""

import numpy as np
import pytest

from engine.eval.network import Network
from training.label import label, main as label_main
from training.positions import (
    PositionSet,
    PositionSetError,
    main as positions_main,
    setup_positions_set,
)


@pytest.fixture
def a_model(tmp_path):
    path = tmp_path / "backgammon.npz"
    Network.create("backgammon", 8, rng=np.random.default_rng(1)).save(path)
    return path


def test_a_position_set_never_overwrites_what_is_not_one(tmp_path, a_model, capsys):
    kept = a_model.read_bytes()
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    base = ["--games", "0", "--setups", "5"]
    for out, words in ((a_model, "is not a position set"), (a_file / "p.npz", "is a file"),
                       (tmp_path, "is a folder")):
        assert positions_main(base + ["--out", str(out)]) == 2
        assert words in capsys.readouterr().err
    assert a_model.read_bytes() == kept
    sets = tmp_path / "sets" / "p.npz"            # its folder is made; a set is rewritten
    assert positions_main(base + ["--out", str(sets)]) == 0
    assert positions_main(base + ["--out", str(sets), "--seed", "2"]) == 0
    assert len(PositionSet.load(sets)) == 5
    with pytest.raises(SystemExit):               # digits of another script
        positions_main(base + ["--candidates", "\u0663", "--out", str(sets)])


def test_labels_never_overwrite_a_model_and_check_their_flags(tmp_path, a_model, capsys):
    sets = tmp_path / "p.npz"
    setup_positions_set("backgammon", 4, seed=3).save(sets)
    kept = a_model.read_bytes()
    flags = ["--positions", str(sets), "--ply", "0", "--workers", "1", "--model", str(a_model)]
    assert label_main(flags + ["--out", str(a_model)]) == 2     # the model in use
    assert "is not a position set" in capsys.readouterr().err
    assert a_model.read_bytes() == kept
    (tmp_path / "l.npz.parts").write_text("x")                   # the chunk folder
    assert label_main(flags + ["--out", str(tmp_path / "l.npz")]) == 2
    assert "is a file" in capsys.readouterr().err
    for flag, value in (("--ply", "\u0661"), ("--workers", "\u0661"), ("--seed", "\u0661"),
                        ("--workers", "0"), ("--workers", "257")):
        with pytest.raises(SystemExit):
            label_main(flags + [flag, value, "--out", str(tmp_path / "m.npz")])
        assert flag in capsys.readouterr().err
    with pytest.raises(PositionSetError, match="workers = 100000: expected an integer 1 .. 256"):
        label(PositionSet.load(sets), str(a_model), 0, workers=100_000)


def test_damaged_chunks_are_labelled_again(tmp_path):
    """A chunk file whose targets are not probabilities (NaN, 7.5) was taken as it
    stood, and the labelled set held them."""
    ps = setup_positions_set("backgammon", 6, seed=4)
    parts = tmp_path / "l.npz.parts"
    want = label(ps, "models/backgammon.npz", 0, parts=parts, chunk=3).targets
    chunks = sorted(parts.glob("part-*.npz"))
    assert len(chunks) == 2
    for f, value in zip(chunks, (np.nan, 7.5)):
        with np.load(f) as z:
            arrays = dict(z)
        arrays["targets"][1, 0] = value
        np.savez(f, **arrays)
    again = label(ps, "models/backgammon.npz", 0, parts=parts, chunk=3)
    np.testing.assert_array_equal(again.targets, want)
    assert again.info["labels"]["labelled_now"] == 6


def test_position_set_files_hold_known_classes_sources_and_probabilities(tmp_path):
    ps = setup_positions_set("backgammon", 3, seed=5)
    ps.targets = np.full((3, 5), 0.25, np.float32)
    path = ps.save(tmp_path / "p.npz")
    PositionSet.load(path)
    for name, value, words in (("klass", 77, "klass of position 1 is 77"),
                               ("source", -1, "source of position 1 is -1"),
                               ("targets", 7.5, "expected five probabilities")):
        with np.load(path) as z:
            arrays = dict(z)
        arrays[name] = arrays[name].copy()
        arrays[name][1] = value
        bad = tmp_path / f"bad_{name}.npz"
        np.savez(bad, **arrays)
        with pytest.raises(PositionSetError, match=words):
            PositionSet.load(bad)
    no_variant = tmp_path / "no_variant.npz"
    with np.load(path) as z:
        arrays = dict(z)
    arrays["card"] = np.frombuffer(b'{"format": "nardy-positions"}', np.uint8)
    np.savez(no_variant, **arrays)
    with pytest.raises(PositionSetError, match="no_variant.npz: card: .*variant"):
        PositionSet.load(no_variant)
    # a card that is the bare format string, or whose parts are no list: refused by
    # name (an AttributeError in load, a TypeError in join, before)
    for name, card, words in (("bare", b'"nardy-positions"', "expected an object"),
                              ("parts", b'{"format": "nardy-positions", "variant": '
                                        b'"backgammon", "parts": 3}', "'parts' = 3")):
        arrays["card"] = np.frombuffer(card, np.uint8)
        np.savez(tmp_path / f"{name}.npz", **arrays)
        with pytest.raises(PositionSetError, match=words):
            PositionSet.load(tmp_path / f"{name}.npz")


def test_classes_are_checked_before_the_games_are_sampled(tmp_path, a_model, capsys,
                                                          monkeypatch):
    """Regression: a misspelt ``--classes`` was refused only after every game had been
    sampled."""
    from training import positions

    def no_sampling(*args, **kwargs):
        raise AssertionError("sampled games for a set it then refused")

    monkeypatch.setattr(positions, "selfplay_positions", no_sampling)
    monkeypatch.setattr(positions, "setup_positions_set", no_sampling)
    out = tmp_path / "p.npz"
    for classes, words in (("race,bear-off", "class 'bear-off': expected one of"),
                           (" , ", "--classes ' , ': expected some of")):
        assert positions_main(["--model", str(a_model), "--games", "5", "--setups", "5",
                               "--classes", classes, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --classes") and words in err, err
        assert err.count("\n") == 1 and not out.exists()


def _command(which: str, a_model, sets, out) -> int:
    """``training.positions`` (a few games and set-ups) or ``training.label`` (the
    set-ups of ``sets`` at 0-ply) writing to ``out``."""
    if which == "positions":
        return positions_main(["--model", str(a_model), "--games", "3", "--setups", "3",
                               "--out", str(out)])
    return label_main(["--positions", str(sets), "--ply", "0", "--workers", "1",
                       "--model", str(a_model), "--out", str(out)])


@pytest.mark.parametrize("which", ["positions", "label"])
def test_position_and_label_commands_refuse_a_folder_they_cannot_write(tmp_path, a_model,
                                                                      capsys, read_only,
                                                                      which):
    """Regression: a read-only folder for ``--out`` was found out when the results were
    written, after the work, with a traceback."""
    sets = tmp_path / "p.npz"
    setup_positions_set("backgammon", 4, seed=3).save(sets)
    locked = read_only(tmp_path / "locked")
    assert _command(which, a_model, sets, locked / "out.npz") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out ") and err.count("\n") == 1, err
    assert "cannot write into the folder" in err and "(Permission denied)" in err, err


@pytest.mark.parametrize("which", ["positions", "label"])
def test_position_and_label_commands_on_a_full_disk_say_so_in_one_line(tmp_path, a_model,
                                                                       capsys, disk_full,
                                                                       which):
    """Regression: an OSError writing the set or a chunk (a full disk) was a traceback."""
    sets = tmp_path / "p.npz"
    np.savez(sets, **_set_arrays(setup_positions_set("backgammon", 4, seed=3)))
    out = tmp_path / "out.npz"
    assert _command(which, a_model, sets, out) == 2
    err = capsys.readouterr().err.splitlines()[-1]      # (after a progress bar)
    written = out if which == "positions" else (
        tmp_path / "out.npz.parts" / "part-000000000-000000004.npz")
    assert err == f"error: cannot write {written}: No space left on device", err


def _set_arrays(ps: PositionSet) -> dict:
    """The arrays of ``ps``'s file, to write with plain ``np.savez`` (what
    :meth:`PositionSet.save` writes, past a disk made full)."""
    import json
    card = {"format": "nardy-positions", "version": 1, "variant": ps.variant}
    return {"states": ps.states, "klass": ps.klass, "source": ps.source,
            "card": np.frombuffer(json.dumps(card).encode(), np.uint8)}


def test_an_unlabelled_set_never_overwrites_a_labelled_one(tmp_path, a_model, capsys):
    """Regression: ``training.positions --out`` overwrote a labelled set (hours of
    labels) with new unlabelled positions without a word."""
    sets = tmp_path / "p.npz"
    setup_positions_set("backgammon", 4, seed=3).save(sets)
    labelled = tmp_path / "l.npz"
    assert label_main(["--positions", str(sets), "--ply", "0", "--workers", "1",
                       "--model", str(a_model), "--out", str(labelled)]) == 0
    kept = labelled.read_bytes()
    capsys.readouterr()
    assert positions_main(["--model", str(a_model), "--games", "0", "--setups", "5",
                           "--out", str(labelled)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out '{labelled}' holds a labelled set (4 positions "
                          f"with targets); refusing to overwrite it") and (
        "choose another --out" in err and err.count("\n") == 1), err
    assert labelled.read_bytes() == kept
    # a labelling may write over a labelled set (labelled again), and a set of
    # positions over an unlabelled one
    assert label_main(["--positions", str(sets), "--ply", "0", "--workers", "1",
                       "--model", str(a_model), "--out", str(labelled)]) == 0
    assert positions_main(["--model", str(a_model), "--games", "0", "--setups", "5",
                           "--out", str(sets)]) == 0


def test_a_labelling_never_overwrites_its_own_positions(tmp_path, a_model, capsys):
    """Regression: ``training.label --out`` naming the ``--positions`` file wrote the
    labelled set over its input."""
    sets = tmp_path / "p.npz"
    setup_positions_set("backgammon", 4, seed=3).save(sets)
    kept = sets.read_bytes()
    (tmp_path / "link.npz").symlink_to(sets)
    flags = ["--ply", "0", "--workers", "1", "--model", str(a_model)]
    for positions, out in ((sets, sets), (sets, tmp_path / "." / "p.npz"),
                           (tmp_path / "link.npz", sets)):
        assert label_main(["--positions", str(positions), "--out", str(out), *flags]) == 2
        err = capsys.readouterr().err
        assert err == (f"error: --out '{out}' is the --positions file: the labelled set "
                       f"would overwrite its input; choose another --out\n"), err
    assert sets.read_bytes() == kept
    assert not any(p.name.endswith(".parts") for p in tmp_path.iterdir())


def test_a_set_too_large_to_save_is_refused_before_the_work(tmp_path, a_model, capsys,
                                                            monkeypatch):
    """Regression: ``--games 0 --setups 250000`` made every set-up (35 s) and only then
    said that the states would not fit in a file; the self-play games were all played
    before the same news."""
    from training import positions

    def no_sampling(*args, **kwargs):
        raise AssertionError("sampled positions for a set too large to save")

    out = tmp_path / "big.npz"
    with monkeypatch.context() as m:
        m.setattr(positions, "setup_positions_set", no_sampling)
        m.setattr(positions, "selfplay_positions", no_sampling)
        n = positions.MAX_POSITIONS + 1
        assert positions_main(["--model", str(a_model), "--games", "0", "--setups", str(n),
                               "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --setups {n:,}: states would take ") and (
            "split the set into several files" in err and err.count("\n") == 1), err
    assert not out.exists()
    # the games: refused as soon as their positions pass the room the set-ups leave
    monkeypatch.setattr(positions, "MAX_POSITIONS", 10)
    monkeypatch.setattr(positions, "setup_positions_set", no_sampling)
    assert positions_main(["--model", str(a_model), "--games", "4", "--setups", "3",
                           "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: self-play of 4 games: ") and (
        "more than the 7 the set has room for" in err and "split the set" in err
        and err.count("\n") == 1), err
    assert not out.exists()


def test_a_refused_labelling_leaves_no_chunk_folder(tmp_path, a_model, capsys):
    """Regression: ``--ply 99`` was refused after ``<out>.parts`` was made, and left it
    empty behind."""
    sets = tmp_path / "p.npz"
    setup_positions_set("backgammon", 4, seed=3).save(sets)
    out = tmp_path / "l.npz"
    with pytest.raises(SystemExit):
        label_main(["--positions", str(sets), "--ply", "99", "--workers", "1",
                    "--model", str(a_model), "--out", str(out)])
    from engine.search.nply import MAX_PLY
    assert f"--ply 99: expected 0..{MAX_PLY}" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backgammon.npz", "p.npz"]
