"""Numba settings of the kernels, in one place, and the guard of their disk cache.

``fastmath`` lets LLVM reassociate the float32 dot products and vectorise them;
``error_model="numpy"`` drops the zero-division check Python semantics would put in
every ``/``, which otherwise blocks vectorising the sigmoid.

numba's ``cache=True`` checks only the time stamp of a kernel's own file, so a kernel
that compiled in code from another file (the move generator into the search, the network
into training) would keep running the old code after that file changed.
:func:`drop_stale_caches` keeps a digest of every source file a package's kernels can
reach next to its cache and empties the cache when the digest changes; ``engine`` and
``training`` call it when they are imported, before any kernel is loaded.
"""

import hashlib
import os
from pathlib import Path

FAST = dict(cache=True, fastmath=True, error_model="numpy")
"""Flags of the hot float32 kernels."""


def drop_stale_caches(package: Path, *sources: Path) -> None:
    """Empty ``package``'s numba cache when a ``.py`` file of ``package`` or of the
    ``sources`` folders has changed since the cache was written."""
    files = sorted(p for d in (package, *sources) for p in Path(d).glob("*.py"))
    digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in files)).hexdigest()
    cache = Path(package) / "__pycache__"
    stamp = cache / "numba-sources.sha256"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for f in cache.glob("*.nb[ic]"):
            f.unlink(missing_ok=True)
        tmp = cache / f".{stamp.name}.{os.getpid()}"
        tmp.write_text(digest)
        os.replace(tmp, stamp)
    except OSError:
        pass             # a read-only tree: numba will not cache there either
