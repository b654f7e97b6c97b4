"""Shared fixtures: where the project's shared data (rules, golden files) lives."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("NARDY_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """``shared/golden``: positions with every legal successor (must be present)."""
    path = SHARED / "golden"
    assert path.is_dir(), f"golden data not found at {path}; set NARDY_SHARED"
    return path


SEARCH_MODULES = {"test_analyse.py", "test_models.py", "test_search.py"}
"""The modules whose tests run the search kernels (``engine.search.decide``)."""


def pytest_collection_modifyitems(items):
    """Keep the search's tests on one worker (``--dist loadgroup``): compiling the search
    kernels takes minutes on a cold numba cache, and two workers would each do it."""
    for item in items:
        if item.path.name in SEARCH_MODULES:
            item.add_marker(pytest.mark.xdist_group("search"))
