"""Shared fixtures: the move-generation truth in ``tests/data``."""

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
