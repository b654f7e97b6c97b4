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

