"""The compile helper of a cold start (:mod:`engine.search.precompile`): when it may
start, what it runs, and that what it compiles is what the search then needs."""

import collections
import os
import sys

import numba
import numpy as np
import pytest
from numba.core import types
from numba_typing import typed

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


_ROOT_KERNELS = {"_node_ref": (nply, nply._node_ref), "races": (nply, nply.races),
                 "rate_space": (nply, nply.rate_space), "delta_work": (nply, nply.delta_work),
                 "_rate_children": (nply, nply._rate_children)}
"""The kernels :meth:`nply._Tree.root` calls from Python that ``expand`` calls inside
(with the walk's, checked apart; for ``races`` the root calls the ``_is_race`` inside
it), by name: (module global, dispatcher)."""


@pytest.fixture(scope="module")
def inside():
    """The argument types each kernel of the helper's and of the root's got while
    numba typed ``expand`` afresh for a backgammon search (its compiler's typing alone,
    :mod:`numba_typing`: a cached ``expand`` would not look at its callees), and
    ``expand``'s result for the start position and 3-1: ``(types by name, that result,
    every play, the search, its tree)``."""
    search = Search.load("backgammon", threads=1)
    encoder = search.evaluator.network.encoder.name
    net_, ctx = Evaluator(Network.create("backgammon", 1, encoder), bearoff=False).kernel_args()
    kernels = {name: kernel for name, (kernel, _) in precompile.calls("backgammon", net_,
                                                                       ctx).items()}
    kernels.update({name: kernel for name, (_, kernel) in _ROOT_KERNELS.items()})
    tree = search._tree(SearchSettings(ply=2))
    start = Position.start("backgammon").to_array()[None, :]
    args = (start, np.array([[3, 1, 1]], np.int64), True, True, -1, 0.0, tree.net, tree.net,
            False, 1, -1.0, tree.ctx)
    seen = collections.defaultdict(set)
    with pytest.MonkeyPatch.context() as mp:
        for name, kernel in kernels.items():
            def typed_call(args, kws, orig=kernel.get_call_template, name=name):
                seen[name].add(tuple(types.unliteral(a) for a in args))
                return orig(args, kws)
            mp.setattr(kernel, "get_call_template", typed_call)
        state = typed(nply.expand, [numba.typeof(a) for a in args])
    assert state.typemap and state.return_type is not None
    out = nply.expand(*args)
    assert out[0] == 16
    return seen, out, search, tree


def _record_calls(monkeypatch, kernels: dict, seen) -> None:
    """Record in ``seen[name]`` the argument types of each Python call of the kernels
    ``{name: (module, dispatcher)}``, made through the module's global."""
    for name, (module, kernel) in kernels.items():
        def called(*args, kernel=kernel, name=name):
            seen[name].add(tuple(numba.typeof(a) for a in args))
            return kernel(*args)
        monkeypatch.setattr(module, name, called)


def test_the_helper_compiles_what_the_search_calls(monkeypatch, inside):
    """Each of the helper's calls (:func:`precompile.calls`, on a one-unit network of
    the released model's encoder) has exactly the argument types the search passes to
    that kernel: from inside ``expand`` and from Python during a 2-ply analysis. A
    kernel compiled for other types is work the program cannot use, and two
    signatures of one kernel compiled at once by two processes can clash in numba's
    cache index."""
    typed, _, search, _ = inside
    encoder = search.evaluator.network.encoder.name
    net_, ctx = Evaluator(Network.create("backgammon", 1, encoder), bearoff=False).kernel_args()
    todo = precompile.calls("backgammon", net_, ctx)
    want = {name: tuple(numba.typeof(a) for a in args) for name, (_, args) in todo.items()}
    seen = collections.defaultdict(set, {name: set(typed[name]) for name in todo})
    search.analyse(Position.start("backgammon"), (3, 1), ply=2)   # compiled or loaded
    _record_calls(monkeypatch, {name: (nply, kernel) for name, (kernel, _) in todo.items()},
                  seen)
    a = search.analyse(Position.start("backgammon"), (3, 1), ply=2)
    assert a.plays == 16 and a.best.ply == 2
    for name in precompile.ORDER:
        assert seen[name] == {want[name]}, name


def test_the_root_calls_its_kernels_with_the_types_expand_does(monkeypatch, inside):
    """A search rates a roll's plays by calling, from Python, the kernels that
    ``expand`` calls inside (:meth:`nply._Tree.root`), so that a 0-ply analysis need
    not compile ``expand``. Each must get exactly the argument types ``expand`` gives
    it: then one compiled version serves both, and numba's cache holds one for each
    (a second signature would be compiled again in every cold 2-ply analysis)."""
    from engine.eval import network
    from engine.movegen import _core
    typed, (k, kids, probs, eq, _), _, tree = inside
    assert network.delta_work is nply.delta_work
    kernels = dict(_ROOT_KERNELS, _walk_direct=(_core, _core._walk_direct),
                   _head_limit=(_core, _core._head_limit), _is_race=(nply, nply._is_race))
    del kernels["races"]
    outside = collections.defaultdict(set)
    _record_calls(monkeypatch, kernels, outside)
    tree.spaces.clear()             # the first call of a search allocates its work spaces
    start = Position.start("backgammon").to_array()
    kids2, probs2, eq2 = tree.root(start, 3, 1)
    assert np.array_equal(kids2, kids[:k]) and np.array_equal(probs2, probs[:k])
    assert np.array_equal(eq2, eq[:k])
    # the walk is called inside ``turn``'s overload, whose typed body numba keeps for
    # the process (an earlier compile leaves nothing to record): its types are those
    # ``expand`` passes to ``turn``, a row of its states and of its rolls
    row, i64 = numba.typeof(start[None, :][0]), types.int64
    want = {name: typed[name] for name in _ROOT_KERNELS}
    want["_is_race"] = {t[:1] for t in typed["races"]}
    want["_head_limit"] = {(row, i64, i64, numba.typeof(tree.ctx.table))}
    want["_walk_direct"] = {(row, i64, i64, i64, numba.typeof(tree.ctx.table),
                             numba.typeof(tree.ctx.scratch),
                             numba.typeof(np.empty((64, start.shape[0]), np.int16)))}
    for name in kernels:
        assert len(want[name]) == 1 and outside[name] == want[name], name


def test_a_cold_search_starts_the_helper_only_for_the_kernels_it_shares(monkeypatch):
    """On a cold cache (here pretended) a search says what it will compile and, when
    it will compile ``expand`` or the root's kernels, starts the helper; valuing
    positions at 0-ply compiles the static evaluation alone, which the helper does not
    share: a notice of its own, no helper."""
    announced, started = [], []

    def cold(what, kernels, how_long):
        announced.append((kernels[0][0].py_func.__name__, how_long))
        return True

    monkeypatch.setattr(nply, "announce_compile", cold)
    monkeypatch.setattr(nply, "on_cold_start", lambda *args: started.append(args))
    start = Position.start("backgammon")
    Search.load("backgammon", threads=1).evaluate(start, ply=0)
    assert announced == [("static_probs", "5 seconds")] and started == []
    Search.load("backgammon", threads=1).analyse(start, (3, 1), ply=0)
    assert announced[-1][0] == "_node_ref" and len(started) == 1
    Search.load("backgammon", threads=1).evaluate(start, ply=1)
    assert announced[-1][0] == "expand" and len(started) == 2


@pytest.mark.parametrize("prune", [True, False])
def test_the_compile_notice_asks_for_the_types_the_search_calls_expand_with(prune):
    """The notice (and the helper it starts) asks numba's cache for ``expand`` with the
    argument types a search gives it: types that miss an argument never match the
    cache, and every warm deeper search announced a compile and started the helper."""
    search = Search.load("backgammon", threads=1, prune=prune)
    search.evaluate(Position.start("backgammon"), ply=2)
    settings = search.settings
    _, _, rkeep, rwithin = settings.packed()
    net, ctx = search.evaluator.kernel_args(rkeep, rwithin, settings.bearoff, prune)
    called = [tuple(sig) for sig in nply.expand.signatures]
    assert nply.expand_types(net, ctx) in called
