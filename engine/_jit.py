"""Numba settings of the kernels, in one place, and the guard of their disk cache.

``fastmath`` lets LLVM reassociate the float32 dot products and vectorise them;
``error_model="numpy"`` drops the zero-division check Python semantics would put in
every ``/``, which otherwise blocks vectorising the sigmoid.

The innermost loops (the move generator's direct walk, the rating of a roll's plays)
are compiled without numba's reference counting (``_nrt=False``). Numba counts the
references to an array each time a kernel or an inlined helper takes it as an
argument, and LLVM removes few of those counts in a loop with branches and calls: they
were about 40 atomic calls a play, a fifth of a rollout's time (benchmarks/README.md,
"Reference counts"). A kernel compiled so, and everything it calls (numba passes the
setting down unless a callee sets ``_nrt=True`` itself, as
:func:`engine.eval.evaluator.exact_probs` does), must allocate nothing and return no
array (a counting caller would release an array it was never given). Numba refuses an
allocation only where it compiles the callee for such a kernel; a callee it compiled
first for a counting kernel (or loaded from the cache, whose key leaves the setting
out) is linked as it is. So the rule is kept by review and by ``tests/test_jit.py``,
which types these kernels and every kernel they reach, each with the setting numba
passes down to it, and checks what every kernel without counts returns. ``_nrt`` is a
private numba option.

numba's ``cache=True`` checks only the time stamp of a kernel's own file, so a kernel
that compiled in code from another file (the move generator into the search, the network
into training) would keep running the old code after that file changed.
:func:`drop_stale_caches` keeps a digest of every source file a package's kernels can
reach next to each of its caches and empties a cache when the digest changes; ``engine``
and ``training`` call it when they are imported, before any kernel is loaded. It covers
every folder of the package (subpackages too) and every place numba may write a cache
for them: the folder's ``__pycache__``, ``NUMBA_CACHE_DIR`` when it is set, and numba's
per-user cache (used when the source tree is read-only).

:func:`announce_compile` tells the user, on standard error, before a command compiles
kernels that are not in the cache yet (a first run pays minutes).
"""

import hashlib
import os
import sys
import types as _pytypes
from pathlib import Path

import numba
from numba.core import types as _nbtypes

FAST = dict(cache=True, fastmath=True, error_model="numpy")
"""Flags of the hot float32 kernels."""


def _plain_call_template(self, args, kws):
    """``Dispatcher.get_call_template`` on the arguments' plain types (see :func:`njit`)."""
    args = tuple(_nbtypes.unliteral(a) for a in args)
    kws = {k: _nbtypes.unliteral(v) for k, v in kws.items()}
    return type(self).get_call_template(self, args, kws)


def njit(*args, **options):
    """``numba.njit`` for the project's kernels, whose calls from other kernels are
    typed on the arguments' plain types.

    Left to itself numba types a constant argument (``_record(..., 3, ...)``, a default
    of ``0``) as a literal and compiles the callee once *per value*: the move generator
    held six copies of one helper and two of its whole turn, a fifth of its compile
    time. Here each kernel gets one specialisation per plain signature (which is also
    what a call from Python gets), and LLVM still folds the constants where it inlines.
    Used as ``@njit`` or ``@njit(**options)``, like numba's.

    No kernel gets numba's C-callable wrapper (``no_cfunc_wrapper``): it serves only a
    kernel passed as a first-class function value, which none is, and it cost about a
    second of a cold 0-ply analysis."""
    bare = len(args) == 1 and callable(args[0]) and not options
    options.setdefault("no_cfunc_wrapper", True)

    def wrap(func):
        d = numba.njit(**options)(func)
        d.get_call_template = _pytypes.MethodType(_plain_call_template, d)
        return d
    if bare:
        return wrap(args[0])
    if args:
        raise TypeError("njit takes the function or keyword options only")
    return wrap


# Array copies inside kernels. An array-to-array assignment (``a[:n] = b[:n]``,
# ``kids[k] = row``) makes numba compile its shape-mismatch error, whose message is
# built with numba's string formatting: about 2 s of a cold start for the first kernel
# that has one. These loops copy the same elements without it.
@njit(cache=True)
def copy_items(dst, src, n):
    """``dst[:n] = src[:n]`` for 1-D arrays."""
    for i in range(n):
        dst[i] = src[i]


@njit(cache=True)
def copy_rows(dst, i, src, j, n):
    """``dst[i:i + n] = src[j:j + n]`` for 2-D arrays (rows of equal length)."""
    w = dst.shape[1]
    for r in range(n):
        for c in range(w):
            dst[i + r, c] = src[j + r, c]


def _source_dirs(root: Path) -> list[Path]:
    """``root`` and every folder below it that holds Python sources."""
    return sorted({p.parent for p in Path(root).rglob("*.py") if "__pycache__" not in p.parts})


def cache_dirs(folder: Path) -> list[Path]:
    """Every folder where numba may keep the cache of kernels defined in ``folder``'s
    modules: its ``__pycache__``, under ``NUMBA_CACHE_DIR`` when that is set, and under
    numba's per-user cache directory (numba's own locators, in its order)."""
    from numba.core import config
    from numba.core.caching import _CacheLocator
    from numba.misc.appdirs import AppDirs
    sub = _CacheLocator.get_suitable_cache_subpath(str(Path(folder) / "_.py"))
    dirs = [Path(folder) / "__pycache__"]
    if config.CACHE_DIR:
        dirs.insert(0, Path(config.CACHE_DIR) / sub)
    dirs.append(Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / sub)
    return dirs


def drop_stale_caches(package: Path, *sources: Path) -> None:
    """Empty the numba caches of ``package`` (each of its folders, each place numba may
    keep them: :func:`cache_dirs`) when a ``.py`` file of ``package`` or of the
    ``sources`` packages has changed since the cache was written."""
    files = sorted((f"{Path(d).name}/{p.relative_to(d)}", p)
                   for d in (package, *sources) for p in Path(d).rglob("*.py")
                   if "__pycache__" not in p.parts)
    digest = hashlib.sha256(b"".join(name.encode() + p.read_bytes()
                                     for name, p in files)).hexdigest()
    for folder in _source_dirs(package):
        for cache in cache_dirs(folder):
            _drop_if_stale(cache, digest)


def _drop_if_stale(cache: Path, digest: str) -> None:
    stamp = cache / "numba-sources.sha256"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for f in cache.glob("*.nb[ic]"):
            f.unlink(missing_ok=True)
        tmp = cache / f".{stamp.name}.{os.getpid()}"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:
        pass             # not writable: numba will not cache there either


def is_cached(kernel, argtypes: tuple | None = None) -> bool:
    """Whether numba's cache holds a compiled version of the dispatcher ``kernel`` for
    its current source (so that calling it loads rather than compiles): for the
    argument types ``argtypes`` (``numba.typeof`` of each argument) when given, else
    for any; an argument type given as None matches any type."""
    try:
        index = kernel._cache._cache_file._load_index()
    except Exception:         # no cache (cache=False), or numba's internals changed
        return False
    if argtypes is None:
        return bool(index)
    return any(len(key[0]) == len(argtypes)
               and all(a is None or a == b for a, b in zip(argtypes, key[0]))
               for key in index)


_checked: set = set()


def announce_compile(what: str, kernels, about: str, argtypes: tuple | None = None) -> bool:
    """Print one line on standard error when some of ``kernels`` (numba dispatchers)
    will be compiled rather than loaded from the cache: ``what`` is compiled, first
    run only, taking ``about``. ``argtypes``: the types the kernels will be called
    with (:func:`is_cached`; a kernel cached for one game's types compiles again for
    another's); a kernel may also come as a pair ``(kernel, its argtypes)``. Looks
    once per ``what``, kernels and types in a process (then it costs a set lookup),
    so hot paths may call it. Returns whether it printed."""
    pairs = tuple(k if isinstance(k, tuple) else (k, argtypes) for k in kernels)
    key = (what, *((id(k), a) for k, a in pairs))
    if key in _checked:
        return False
    _checked.add(key)
    if all(is_cached(k, a) for k, a in pairs):
        return False
    print(f"nardy: compiling {what} (first run only, about {about}; later runs load "
          f"them from the cache)...", file=sys.stderr, flush=True)
    return True
