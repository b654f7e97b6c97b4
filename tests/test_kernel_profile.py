"""benchmarks/kernel_profile.py: the perf map it writes of the numba kernels a process
compiled, and the short names it reports them by."""

import shutil

import numba
import pytest
from conftest import benchmark_module
from numba import njit

kp = benchmark_module("kernel_profile")


def test_short_name_of_numba_symbols():
    sym = ("_ZN6engine4eval7network13hidden_deltasB4v121B76c8tJTIeFIjxB2IKSgI4CrvSCKg1MMbC"
           "QQPKkLTj8gEEF9aYtuj_2br1UFS6rWawKBGi3Ww_2bZoAE5ArrayIsLi")
    assert kp.short_name(sym) == "engine.eval.network.hidden_deltas"
    assert (kp.short_name("_ZN6engine7movegen5_core5_turn12_3clocals_3e6directB3v87B74c8t")
            == "engine.movegen._core._turn.<locals>.direct")
    assert kp.short_name("__memset_avx2_unaligned_erms") == "__memset_avx2_unaligned_erms"
    assert kp.short_name("0x00007f4f5e917059") == "0x00007f4f5e917059"


def _twice_plus_one(x):
    return 2 * x + 1


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is not installed")
def test_perf_map_names_a_kernel_compiled_here(tmp_path, monkeypatch):
    # a fresh cache folder: the kernel is compiled in this process, so its code is kept
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    kernel = njit(cache=True)(_twice_plus_one)
    assert kernel(20) == 41
    out = tmp_path / "perf.map"
    n = kp.write_perf_map(out)
    rows = [line.split() for line in out.read_text().splitlines()]
    assert n == len(rows) >= 1
    starts = [int(r[0], 16) for r in rows]
    sizes = [int(r[1], 16) for r in rows]
    assert starts == sorted(starts) and all(s > 0 for s in sizes)
    assert all(a + s <= b for a, s, b in zip(starts, sizes, starts[1:]))   # no overlaps
    cres = next(iter(kernel.overloads.values()))
    entry = cres.fndesc.llvm_func_name
    ours = [r for r in rows if r[2] == entry]
    assert len(ours) == 1
    assert int(ours[0][0], 16) == cres.library.get_pointer_to_function(entry)
    assert kp.short_name(entry).endswith("_twice_plus_one")


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is not installed")
def test_perf_map_passes_over_dead_weak_proxies(tmp_path):
    import weakref

    class Gone:
        pass

    obj = Gone()
    proxy = weakref.proxy(obj)
    holder = [proxy]                  # kept where gc.get_objects() finds it
    del obj
    assert kp.write_perf_map(tmp_path / "perf.map") >= 0
    assert holder
