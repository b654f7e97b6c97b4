"""Shared fixtures: the move-generation truth in ``tests/data``, the benchmark scripts as
modules."""

import importlib.util
import json
import os
from functools import lru_cache
from pathlib import Path

import pytest

# the suite's workers already use every core: no compile helper beside them
# (engine/search/precompile.py), in this process or the programs it starts
os.environ["NARDY_PRECOMPILE"] = "0"
# nor a second thread for torch's training steps (training.supervised.torch_threads):
# its idle threads spin on the core the other worker computes on
os.environ.setdefault("OMP_NUM_THREADS", "1")

DATA = Path(__file__).resolve().parent / "data"
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def benchmark_module(name: str):
    """The script ``benchmarks/<name>.py`` loaded as a module (the folder is no package),
    for tests of the functions it defines."""
    spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=None)
def perft_records(variant: str) -> tuple:
    path = DATA / "perft" / f"{variant}.jsonl"
    return tuple(json.loads(line) for line in path.read_text().splitlines())


@pytest.fixture(scope="session")
def perft():
    """``perft(variant)``: the records of ``tests/data/perft/<variant>.jsonl``, each a
    position and roll with the count and SHA-256 of its legal successors (made from the
    golden move lists by ``tests/data/make_perft.py``)."""
    return perft_records


@pytest.fixture
def read_only(monkeypatch):
    """``read_only(folder)``: ``folder`` (made if missing) can no longer be written
    into, as a read-only mount or a folder of another user: mode 0o555, or, for root,
    whom the mode does not stop, creating a file or a folder in it raises EACCES
    (``os.open`` with ``O_CREAT``, ``os.mkdir``: what ``tempfile`` and ``Path.mkdir``
    call)."""
    import errno
    import stat

    locked: list[Path] = []

    def inside(path) -> bool:
        try:
            p = os.path.abspath(os.fsdecode(path))
        except TypeError:                  # a file descriptor
            return False
        return any(p.startswith(str(f) + os.sep) for f in locked)

    def refuse(path):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

    real_open, real_mkdir = os.open, os.mkdir

    def fake_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and inside(path):
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if inside(path):
            refuse(path)
        return real_mkdir(path, *args, **kwargs)

    def lock(folder) -> Path:
        folder = Path(folder).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP
                         | stat.S_IROTH | stat.S_IXOTH)
        elif not locked:
            monkeypatch.setattr(os, "open", fake_open)
            monkeypatch.setattr(os, "mkdir", fake_mkdir)
        locked.append(folder)
        return folder

    yield lock
    for folder in locked:
        if os.geteuid() != 0:
            folder.chmod(0o755)


@pytest.fixture
def disk_full(monkeypatch):
    """Every file written through :func:`engine.eval.network.atomic_write_bytes` (models,
    checkpoints, position sets, label chunks) fails with ENOSPC, as on a full disk: the
    small probe of a folder still passes, the results do not."""
    import errno

    from engine.eval import network

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(network, "atomic_write_bytes", full)
