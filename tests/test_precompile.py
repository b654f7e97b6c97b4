"""The compile helper of a cold start (:mod:`engine.search.precompile`): when it may
start, what it runs, and that what it compiles is what the search then needs."""

import collections
import os
import sys

import numba
import numpy as np
import pytest
from numba.core import types

from engine.eval.evaluator import Evaluator
from engine.eval.network import Network
from engine.rules.position import Position
from engine.search import nply, precompile
from engine.search.nply import Search, SearchSettings


@pytest.fixture
def fresh(monkeypatch):
    """The module as a program finds it at start (no helper, not allowed), restored
    after the test; subprocess.Popen recorded instead of run."""
    monkeypatch.setattr(precompile, "_allowed", False)
    monkeypatch.setattr(precompile, "_helper", None)
    monkeypatch.setattr(nply, "on_cold_start", None)
    started = []

    class FakePopen:
        def __init__(self, cmd, **kw):
            started.append((cmd, kw))

        def poll(self):
            return 0

    monkeypatch.setattr(precompile.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(precompile, "usable_cores", lambda: 2)
    monkeypatch.setenv("NARDY_PRECOMPILE", "1")
    return started


def test_only_programs_that_allow_it_start_the_helper(fresh):
    assert not precompile.enabled()
    assert precompile.spawn("backgammon", "tesauro198") is False
    assert fresh == []


def test_the_helper_command_and_its_environment(fresh):
    precompile.allow()
    assert nply.on_cold_start is precompile.spawn
    assert precompile.spawn("backgammon", "tesauro198+f13") is True
    [(cmd, kw)] = fresh
    assert cmd == [sys.executable, "-m", "engine.search.precompile", "backgammon",
                   "tesauro198+f13"]
    assert kw["env"]["NARDY_PRECOMPILE"] == "0"          # the helper starts no helper
    assert str(precompile.ROOT) in kw["env"]["PYTHONPATH"].split(os.pathsep)
    assert "cwd" not in kw                                # relative paths stay as they were
    assert kw["stdout"] is precompile.subprocess.DEVNULL  # never the protocol's output
    assert precompile.spawn("backgammon", "tesauro198+f13") is False   # one a process
    assert len(fresh) == 1


@pytest.mark.parametrize("env, cores", [("0", 2), ("1", 1)])
def test_no_helper_when_turned_off_or_on_one_core(fresh, monkeypatch, env, cores):
    precompile.allow()
    monkeypatch.setenv("NARDY_PRECOMPILE", env)
    monkeypatch.setattr(precompile, "usable_cores", lambda: cores)
    assert precompile.spawn("backgammon", "tesauro198") is False
    assert fresh == []


def test_usage_error_without_two_arguments(capsys):
    assert precompile.main(["backgammon"]) == 2
    assert "usage" in capsys.readouterr().err


def test_the_helper_compiles_what_the_search_calls(monkeypatch):
    """Each of the helper's calls (:func:`precompile.calls`, on a one-unit network of
    the released model's encoder) has exactly the argument types the search passes to
    that kernel: from inside ``expand`` (recorded while a fresh, uncached copy of it
    compiles: a cached one would not look at its callees) and from Python during a
    2-ply analysis. A kernel compiled for other types is work the program cannot use,
    and two signatures of one kernel compiled at once by two processes can clash in
    numba's cache index."""
    search = Search.load("backgammon", threads=1)
    encoder = search.evaluator.network.encoder.name
    net_, ctx = Evaluator(Network.create("backgammon", 1, encoder), bearoff=False).kernel_args()
    todo = precompile.calls("backgammon", net_, ctx)
    want = {name: tuple(numba.typeof(a) for a in args) for name, (_, args) in todo.items()}
    seen = collections.defaultdict(set)
    for name, (kernel, _) in todo.items():
        def typed(args, kws, orig=kernel.get_call_template, name=name):
            seen[name].add(tuple(types.unliteral(a) for a in args))
            return orig(args, kws)
        monkeypatch.setattr(kernel, "get_call_template", typed)
    tree = search._tree(SearchSettings(ply=2))
    copy = numba.njit(nogil=True, fastmath=True, error_model="numpy")(nply.expand.py_func)
    start = Position.start("backgammon").to_array()[None, :]
    k, *_ = copy(start, np.array([[3, 1, 1]], np.int64), True, True, -1, 0.0, tree.net,
                 tree.net, False, tree.ctx)
    assert k == 16
    search.analyse(Position.start("backgammon"), (3, 1), ply=2)   # compiled or loaded
    for name, (kernel, _) in todo.items():
        def called(*args, kernel=kernel, name=name):
            seen[name].add(tuple(numba.typeof(a) for a in args))
            return kernel(*args)
        monkeypatch.setattr(nply, name, called)
    a = search.analyse(Position.start("backgammon"), (3, 1), ply=2)
    assert a.plays == 16 and a.best.ply == 2
    for name in precompile.ORDER:
        assert seen[name] == {want[name]}, name
