"""The kernels' disk cache: reused by the next process, dropped when any source changes
(:func:`engine._jit.drop_stale_caches`), wherever numba keeps it."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numba_typing import callees, typed

ROOT = Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import engine
    from engine._jit import announce_compile, is_cached
    from engine.movegen._core import _start_open as kernel
    before = is_cached(kernel)
    announce_compile("the probe", [kernel], "a second")
    announce_compile("the probe", [kernel], "a second")      # once a process
    kernel(np.zeros(136, np.int16))
    print(json.dumps({"cached_before": before, "file": engine.__file__,
                      "hits": sum(kernel.stats.cache_hits.values()),
                      "misses": sum(kernel.stats.cache_misses.values())}))
""")


@pytest.fixture
def tree(tmp_path):
    """A copy of the ``engine`` package without its caches."""
    shutil.copytree(ROOT / "engine", tmp_path / "src" / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "src"


def _probe(tree: Path, **env) -> dict:
    import os
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tree, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(tree), **env},
                         check=True)
    r = json.loads(out.stdout.splitlines()[-1])
    assert r["file"].startswith(str(tree))
    assert len(out.stdout.splitlines()) == 1           # the notice is not on stdout
    notice = "nardy: compiling the probe (first run only, about a second"
    assert out.stderr.count(notice) == (0 if r["cached_before"] else 1), out.stderr
    return r


def _touch_source(path: Path) -> None:
    path.write_text(path.read_text() + "\n# changed\n")


@pytest.mark.parametrize("where", ["in_tree", "NUMBA_CACHE_DIR"])
def test_cache_is_reused_and_dropped_on_change(tree, tmp_path, where):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")} if where != "in_tree" else {}
    first = _probe(tree, **env)
    assert not first["cached_before"] and first["misses"] == 1
    second = _probe(tree, **env)                    # the next process loads it
    assert second["cached_before"] and second["hits"] == 1 and second["misses"] == 0
    # a change to another module (not the kernel's own file, whose time stamp numba
    # would see) must drop the cache: the kernel may have compiled that code in
    _touch_source(tree / "engine" / "rules" / "variants.py")
    third = _probe(tree, **env)
    assert not third["cached_before"] and third["misses"] == 1
    assert _probe(tree, **env)["hits"] == 1
    if where != "in_tree":
        assert not list((tree / "engine" / "movegen" / "__pycache__").glob("*.nbi"))


def test_subpackages_are_covered(tree):
    """A module in a subfolder of the package counts in the digest, and the caches of
    the subfolder are dropped too."""
    sub = tree / "engine" / "sub"
    sub.mkdir()
    (sub / "__init__.py").write_text("")
    _probe(tree)
    (sub / "__pycache__").mkdir(exist_ok=True)
    (sub / "__pycache__" / "k.f-1.py311.nbi").write_text("stale")
    assert _probe(tree)["hits"] == 1                # nothing changed yet
    assert (sub / "__pycache__" / "k.f-1.py311.nbi").exists()
    _touch_source(sub / "__init__.py")
    assert _probe(tree)["misses"] == 1
    assert not (sub / "__pycache__" / "k.f-1.py311.nbi").exists()


def test_constant_arguments_share_one_compiled_kernel():
    """A kernel called from kernels with different constants is compiled once, on the
    plain types: numba alone would compile it once per value (engine._jit.njit)."""
    from engine._jit import njit

    @njit
    def scaled(x, k):
        return x * k

    @njit
    def caller(x):
        return scaled(x, 3) + scaled(x, 4) + scaled(x, True)

    assert caller(2.0) == 2.0 * 3 + 2.0 * 4 + 2.0
    assert [tuple(map(str, sig)) for sig in scaled.signatures] == \
        [("float64", "int64"), ("float64", "bool")]


def test_is_cached_asks_for_the_types_given():
    """A kernel cached for one set of argument types compiles again for another (a second
    game's networks): ``is_cached`` with the types tells them apart."""
    import numba
    import numpy as np

    from engine._jit import copy_items, is_cached
    src, dst = np.arange(3, dtype=np.int64), np.zeros(3, np.int64)
    copy_items(dst, src, 3)                      # compiled or loaded, and in the cache
    used = tuple(numba.typeof(a) for a in (dst, src, 3))
    unused = tuple(numba.typeof(a) for a in (np.zeros((1, 1, 1), np.uint8),) * 2 + (3,))
    assert is_cached(copy_items) and is_cached(copy_items, used)
    assert not is_cached(copy_items, unused)


def _without_counts(roots):
    """Every kernel numba compiles without reference counting for ``roots`` (each a
    dispatcher and its argument types), as ``{qualname: {return type, ...}}``: a
    kernel's ``_nrt`` when it sets one, else its caller's (numba's flag inheritance:
    ``CPUTargetOptions.finalize``), found by typing each kernel along every call path.
    Independent of the order of compiling and of the cache."""
    off: dict = {}
    seen = set()
    known: dict = {}                 # the typing does not depend on the setting
    todo = [(d, tuple(args), d.targetoptions.get("_nrt", True)) for d, args in roots]
    while todo:
        dispatcher, args, inherited = todo.pop()
        counts = dispatcher.targetoptions.get("_nrt", inherited)
        if (dispatcher, args, counts) in seen:
            continue
        seen.add((dispatcher, args, counts))
        if (dispatcher, args) not in known:
            state = typed(dispatcher, args)
            known[dispatcher, args] = (state.return_type,
                                       [(d, tuple(a)) for d, a in callees(state)])
        returns, calls = known[dispatcher, args]
        if not counts:
            off.setdefault(dispatcher.py_func.__qualname__, set()).add(returns)
        todo += [(d, a, counts) for d, a in calls]
    return off


def _compiled_without_counts(dispatcher) -> list:
    """For each overload of ``dispatcher`` in this process (compiled or loaded from the
    cache): whether numba compiled it without reference counts, as its symbol's flags
    (the ABI tag) record."""
    from numba.core.compiler import Flags
    return ["nrt=True" not in Flags.demangle(cres.fndesc.abi_tags[0])
            for cres in dispatcher.overloads.values()]


def test_the_walk_finds_a_counted_return_along_any_path():
    """:func:`_without_counts` on toy kernels: the setting is passed down to a callee
    unless the callee sets its own, and a callee that returns an array under an
    uncounted caller is found. Numba refuses that itself only where it compiles the
    callee for that caller (it does for an ``@overload``'s implementation); here the
    callee was compiled first for a counting kernel, and numba links it as it is.
    (The walk through an ``@overload`` to the kernels it calls is pinned by the test
    below: ``features`` is reached only through one.)"""
    import numba
    import numpy as np
    from numba import types
    from numba.core.registry import cpu_target

    @numba.njit
    def view(a):
        return a[1:]

    @numba.njit(_nrt=True)
    def fresh(a):
        return np.empty(a.shape[0], a.dtype)

    @numba.njit(_nrt=False)
    def root(a):
        return view(a)[0] + fresh(a).shape[0]

    @numba.njit
    def counted(a):
        return view(a)[0]

    a = np.arange(4)
    assert counted(a) == 1 and root(a) == 5        # numba compiles root, none the wiser
    arr = types.Array(types.int64, 1, "C")
    off = _without_counts([(root, (arr,)), (counted, (arr,))])
    off = {name.rsplit(".", 1)[-1]: rets for name, rets in off.items()}
    assert set(off) == {"root", "view"}, off
    models = cpu_target.target_context.data_model_manager
    assert [models[ret].contains_nrt_meminfo() for ret in off["view"]] == [True]
    assert [models[ret].contains_nrt_meminfo() for ret in off["root"]] == [False]


@pytest.mark.xdist_group("search")     # the worker that compiles the search's kernels
def test_kernels_without_reference_counting_return_no_arrays():
    """The move generator's direct walk, the rating of a roll's plays and the game
    loop's choice of a play and TD learning's step are compiled without numba's
    reference counting (``_nrt=False``), and so is what they call, which inherits it.
    Such a kernel must return nothing counted (an array, a list, a string, a tuple
    holding one): a caller that counts would release a reference it was never given.
    Every kernel reached from them along any call path is typed (not compiled: a kernel
    loaded from numba's cache or compiled first for another caller would not say how
    this caller compiles it) and what it returns is checked."""
    import numpy as np
    from numba.core.registry import cpu_target

    from engine.eval.evaluator import Evaluator
    from engine.eval.network import Network, choose_successor, delta_work
    from engine.movegen._core import _direct, _walk_direct, new_scratch
    from engine.rules import _layout as L
    from engine.rules.position import Position
    from engine.rules.scoring import N_OUTPUTS, score_table
    from engine.rules.variants import get_rules
    from engine.search import precompile
    from training.td import _learn

    rules = get_rules("backgammon")
    start = Position.start("backgammon").to_array()
    _walk_direct(start, 3, 1, 1, rules.table(), new_scratch(),
                 np.empty((1, L.STATE_LEN), np.int16))
    net, ctx = Evaluator(Network.create("backgammon", 1, "tesauro198+f13"),
                         bearoff=False).kernel_args()
    rate, args = precompile.calls("backgammon", net, ctx)["_rate_children"]
    rate(*args)
    b1 = net[1]
    h = lambda: np.zeros(b1.shape[0], np.float32)            # noqa: E731
    o = lambda: np.zeros(N_OUTPUTS, np.float32)              # noqa: E731
    choose_successor(start, np.repeat(start[None, :], 2, axis=0), 2, False,
                     score_table(rules), *net, np.zeros(L.STATE_LEN, np.int16), h(), h(),
                     delta_work(), o(), o())
    _learn(start, o(), 0.1, *net, h(), h(), o(), h())
    roots = [(d, sig) for d in (_walk_direct, rate, choose_successor, _learn)
             for sig in d.signatures]

    off = _without_counts(roots)
    assert {"_direct", "_record", "_rate_children", "hidden_deltas", "may_be_exact",
            "result_k", "features", "choose_successor", "hidden_delta", "_learn"} <= set(off), off
    assert "exact_probs" not in off                  # it allocates: counts, explicitly
    models = cpu_target.target_context.data_model_manager
    counted = {name: rets for name, rets in off.items()
               if any(models[ret].contains_nrt_meminfo() for ret in rets)}
    assert not counted, counted
    # numba does compile them so: the flags of the kernels set without counts
    for dispatcher in (_direct, rate, choose_successor, _learn):
        assert dispatcher.targetoptions["_nrt"] is False
        flags = _compiled_without_counts(dispatcher)
        assert flags and all(flags), dispatcher
