"""The typed API passes mypy: the games (``engine/rules``), notation, the cube and the
typed wrappers of the move generator and the search, with the settings of
``[tool.mypy]`` in ``pyproject.toml``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["engine/rules", "engine/notation", "engine/cube", "engine/movegen/generate.py",
           "engine/search/nply.py", "engine/search/rollout.py"]
"""What mypy checks; ``files`` of ``[tool.mypy]`` names the same, so that a bare
``mypy`` in the repository root checks them too."""


def test_the_config_names_the_targets():
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["mypy"]["files"] == TARGETS


def test_typed_api_passes_mypy():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it is in the 'test' extra: pip install -e '.[test]')")
    done = subprocess.run([sys.executable, "-m", "mypy", *TARGETS], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mypy {' '.join(TARGETS)}:\n{done.stdout}{done.stderr}"
