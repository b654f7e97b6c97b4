"""What every command line shares (:mod:`engine.cli._common`): a quiet exit when the reader of
its output goes away, and whole-number arguments."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli._common import (
    FolderBusy,
    folder_lock,
    integer,
    is_whole,
    listen_host,
    non_negative_int,
    parse_args,
    port_number,
)

ROOT = Path(__file__).resolve().parent.parent


def _release_run(folder: Path) -> list:
    """A run folder with one checkpoint, and ``training.release`` flags that measure
    nothing (it then only writes the model and says so)."""
    import numpy as np

    from engine.eval.network import Network
    from training import checkpoint
    from training.config import TrainConfig
    checkpoint.save(folder / "run", checkpoint.RunState(
        TrainConfig(size="tiny"), Network.create("backgammon", 40), games=5,
        rng=np.ones(1, np.uint64)))
    return ["--run", str(folder / "run"), "--out", str(folder / "models"),
            "--pubeval-games", "0", "--random-games", "0", "--heuristic-games", "0"]


COMMANDS = {
    "engine.analyse": lambda tmp: ["--position", "start", "--dice", "31"],  # no model: listed
    "engine.cube_cli": lambda tmp: ["--position", "4HPwATDgc/ABMA", "--probabilities",
                                    ".75,.2,.01,.05,0"],
    "engine.play": lambda tmp: ["--variant", "portes", "--engine", "heuristic", "--seed", "9"],
    "engine.protocol": lambda tmp: [],
    "training.selfplay": lambda tmp: ["--config-help"],
    "training.release": _release_run,
}


@pytest.mark.parametrize("module", COMMANDS)
def test_a_reader_that_goes_away_ends_the_program_quietly(module, tmp_path):
    """Regression: piped into ``head``, the command lines ended in a BrokenPipeError
    traceback (or "Exception ignored ... BrokenPipeError" at exit, status 120)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NARDY_MODELS=str(tmp_path / "none"))
    proc = subprocess.Popen([sys.executable, "-m", module, *COMMANDS[module](tmp_path)],
                            cwd=ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                    # the reader is gone before the first line
    try:
        proc.stdin.write(b'{"cmd": "met", "length": 25}\n' * 2000)
        proc.stdin.close()
    except BrokenPipeError:                # it has exited already
        pass
    err = proc.stderr.read()
    proc.wait(timeout=300)
    # on an empty numba cache the one line saying what is compiled comes first
    err = b"".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith(b"nardy: compiling "))
    assert proc.returncode == 1 and err == b"", err.decode()


def test_ctrl_c_ends_a_program_with_the_shells_status_and_no_trace(capsys):
    """Ctrl-C inside a numba kernel's call reaches Python as a SystemError over the
    KeyboardInterrupt (helper 132: training.label ended in that trace, status 1)."""
    from engine.cli._common import run

    def in_kernel():
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise SystemError("<function _numba_unpickle> returned a result with an "
                                  "exception set") from exc
        except SystemError as exc:
            raise SystemError("CPUDispatcher(<function expand>) returned a result with "
                              "an exception set") from exc

    def plain():
        raise KeyboardInterrupt

    for main in (in_kernel, plain):
        with pytest.raises(SystemExit) as exc:
            run(main)
        assert exc.value.code == 130 and capsys.readouterr().err == "interrupted\n"

    def other():
        raise SystemError("a bug")           # not an interrupt: its trace stays

    with pytest.raises(SystemError, match="a bug"):
        run(other)


def test_non_negative_int():
    assert non_negative_int("0") == 0 and non_negative_int(" 42 ") == 42
    for bad in ("-1", "1.5", "x", "", "\u0663", "1e3"):
        with pytest.raises(argparse.ArgumentTypeError, match="whole number"):
            non_negative_int(bad)


def test_a_port_is_a_number_from_1_to_65535():
    """``--port 70000`` reached the bind, which raised OverflowError with a traceback."""
    assert port_number("1") == 1 and port_number(" 65535 ") == 65535
    for bad in ("0", "65536", "70000", "-1", "\u0663", "1" * 40, "", "80x"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected a port number, 1..65535"):
            port_number(bad)


def test_an_address_to_listen_on_is_not_empty_and_is_a_host_name():
    """An empty host listened on every interface; a NUL or a byte that is not UTF-8
    (a lone surrogate in ``argv``) made the bind raise TypeError with a traceback."""
    for good in ("127.0.0.1", "::1", "localhost", "b\u00fccher.example", "0.0.0.0"):
        assert listen_host(good) == good
    for bad, words in (("", "every interface"), ("  ", "every interface"),
                       ("a\x00b", "control characters"), ("a b", "spaces"),
                       ("a\udcffb", "not UTF-8"), ("a..b", "not a host name"),
                       ("x" * 64, "over 63 characters")):
        with pytest.raises(argparse.ArgumentTypeError, match=words) as info:
            listen_host(bad)
        assert "expected an address such as 127.0.0.1" in str(info.value)
        assert repr(bad) in str(info.value)


def test_integer_takes_ascii_digits_only():
    """Plain ``int`` read '\u0663' as 3 and '1_0' as 10, and ``str.isdigit`` passes '²',
    which ``int`` then refused with a traceback."""
    assert integer("-2") == -2 and integer(" +7 ") == 7 and integer("0") == 0
    for bad in ("\u0663", "\uff13", "\u00b2", "1_0", "1.5", "", "-", "1" * 31):
        with pytest.raises(argparse.ArgumentTypeError, match="whole number"):
            integer(bad)
    assert is_whole("12") and not is_whole("\u00b2") and not is_whole("\u0663")


def test_a_value_that_starts_with_a_dash_is_the_option_s_value():
    """argparse reads '-1,0' after --score as an option of its own ("expected one
    argument"); :func:`parse_args` passes it as --score=-1,0, for the program's check."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--score")
    ap.add_argument("--filters")
    ap.add_argument("--crawford", action="store_true")
    args = parse_args(ap, ["--score", "-1,0", "--filters", "-,8/0.16", "--crawford"])
    assert (args.score, args.filters, args.crawford) == ("-1,0", "-,8/0.16", True)
    assert parse_args(ap, ["--sc", "-1,0"]).score == "-1,0"        # an abbreviation
    with pytest.raises(SystemExit):                     # an option stays an option
        parse_args(ap, ["--score", "--crawford"])
    with pytest.raises(SystemExit):                     # -h stays the help
        parse_args(ap, ["--score", "-h"])
    with pytest.raises(SystemExit):                     # a flag takes no value
        parse_args(ap, ["--crawford", "-1"])


@pytest.mark.parametrize("argv", [
    ["engine.analyse", "--dice", "31", "--ply", "\u0663"],
    ["engine.analyse", "--dice", "31", "--top", "1_0"],
    ["engine.cube_cli", "--position", "4HPwATDgc/ABMA", "--match", "7", "--score", "\u00b2,1"],
    ["engine.cube_cli", "--position", "4HPwATDgc/ABMA", "--match", "\u0667"],
    ["engine.web", "--port", "\u0668080"],
    ["engine.web", "--host", ""],
    ["engine.web", "--host", "256.1.1.1"],
])
def test_command_lines_refuse_other_digits_with_a_usage_error(argv):
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    last = proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr and "error" in last and repr(argv[-1]) in last, (
        proc.stderr)


def test_the_web_board_says_when_its_port_is_taken():
    """It said it served the board, then stopped with uvicorn's error."""
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "engine.web", "--port", str(port)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "cannot listen there" in proc.stderr, proc.stderr
    assert "nardy web board on" not in proc.stderr


def test_a_held_folder_is_refused_and_its_holder_clears_cut_short_writes(tmp_path):
    """:func:`folder_lock`: a second holder is refused while the first holds the folder
    (and removes nothing); the holder removes the temporary files of writes a kill cut
    short, and nothing else."""
    run = tmp_path / "run"
    run.mkdir()
    stale = run / ".checkpoint-0000000030.npz.k2j4x.tmp"
    keep = [run / "checkpoint-0000000020.npz", run / "model.npz", run / "notes.tmp"]
    with folder_lock(run):
        stale.write_bytes(b"half a checkpoint")
        for f in keep:
            f.write_bytes(b"x")
        with pytest.raises(FolderBusy, match=f"in use by process {os.getpid()}"):
            with folder_lock(run, "--out"):
                pass
        assert stale.exists()
    with folder_lock(run) as held:
        assert held == run and not stale.exists() and all(f.exists() for f in keep)
