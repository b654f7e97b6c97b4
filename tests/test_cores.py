"""How many cores the engine takes for its threads and workers
(:func:`engine.movegen.generate.usable_cores`): the affinity mask, capped by a
container's CPU quota (cgroup v2 ``cpu.max``, else cgroup v1's two files)."""

import os

import pytest

from engine.movegen import generate


def _files(tmp_path, v2=None, quota=None, period=None):
    paths = tuple(str(tmp_path / name) for name in ("cpu.max", "cfs_quota_us",
                                                     "cfs_period_us"))
    for path, text in zip(paths, (v2, quota, period)):
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
    return paths


@pytest.mark.parametrize("v2, quota, period, want", [
    ("200000 100000\n", None, None, 2),          # cgroup v2: two cores
    ("150000 100000\n", None, None, 2),          # one and a half: rounded up
    ("50000 100000\n", None, None, 1),           # half a core: at least one
    ("max 100000\n", "300000", "100000", None),  # v2 without a limit: v1 not read
    (None, "300000\n", "100000\n", 3),           # cgroup v1
    (None, "-1\n", "100000\n", None),            # v1 without a limit
    (None, None, None, None),                    # no cgroup files
    ("garbage\n", None, None, None),             # unreadable: no limit assumed
])
def test_the_cgroup_quota(tmp_path, monkeypatch, v2, quota, period, want):
    monkeypatch.setattr(generate, "CGROUP_QUOTA_FILES", _files(tmp_path, v2, quota, period))
    assert generate._cgroup_quota() == want


def test_usable_cores_is_the_affinity_capped_by_the_quota(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(generate, "CGROUP_QUOTA_FILES", _files(tmp_path, "200000 100000"))
    assert generate.usable_cores() == 2
    monkeypatch.setattr(generate, "CGROUP_QUOTA_FILES", _files(tmp_path / "none"))
    assert generate.usable_cores() == 64
    monkeypatch.delenv("NARDY_THREADS", raising=False)
    assert generate.cascade_threads() == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    (tmp_path / "eight").mkdir()
    monkeypatch.setattr(generate, "CGROUP_QUOTA_FILES", _files(tmp_path / "eight",
                                                               "800000 100000"))
    assert generate.usable_cores() == 3 and generate.cascade_threads() == 3


def test_the_quota_is_read_once_a_process(tmp_path, monkeypatch):
    """successor_arrays asks for the cores on every call; reading the quota's files
    each time made it five times slower on long nardy's starting position (104 us a
    call against 21 us)."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    files = _files(tmp_path, "200000 100000")
    monkeypatch.setattr(generate, "CGROUP_QUOTA_FILES", files)
    assert generate.usable_cores() == 2
    os.remove(files[0])
    assert generate.usable_cores() == 2
