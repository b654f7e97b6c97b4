"""Checkpoints of a self-play run: weights, config, game count, dice states, history.

One checkpoint is one ``.npz`` of plain arrays in the run folder,
``checkpoint-<games>.npz``: the network's model arrays (with its card, so a checkpoint
is also a loadable model), ``run`` (JSON bytes: config, games, elapsed time, strength
history, format version) and ``rng`` (each worker's splitmix64 state). Files are written
to a temporary file and ``os.replace``d, so a kill at any moment leaves the previous
checkpoint whole; the newest ``keep`` are kept. :func:`latest` finds the newest that
loads, skipping (and naming) any that do not.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.network import MODEL_ARRAYS, Network, NetworkFileError, atomic_savez, read_npz
from .config import ConfigError, TrainConfig

CHECKPOINT_VERSION = 1
"""Layout of the ``run`` record this code reads and writes."""
CHECKPOINT_ARRAYS = MODEL_ARRAYS + ("run", "rng", "stats")
"""The arrays of a checkpoint: a model's, the run record, the dice states, the stats."""
_NAME = re.compile(r"checkpoint-(\d+)\.npz$")


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, or no checkpoint where one is needed."""


@dataclass
class RunState:
    """Everything a run needs to continue."""

    config: TrainConfig
    """The run's settings, as it was started."""
    net: Network
    """Current weights."""
    games: int = 0
    """Self-play games finished (and learned from)."""
    rng: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    """Each worker's dice state (``uint64[workers]``)."""
    elapsed: float = 0.0
    """Seconds of training so far, over all sessions."""
    history: list = field(default_factory=list)
    """Strength figures: ``[games, ppg, opponent, eval games]`` rows."""
    stats: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Summed per-worker statistics (see :mod:`training.td`)."""
    resumes: list = field(default_factory=list)
    """Settings changed on resuming: ``[games, {key: (old, new)}]`` rows, so that a
    model's card can tell which settings each stretch of games was trained with."""


def path_for(run_dir: Path, games: int) -> Path:
    return Path(run_dir) / f"checkpoint-{games:010d}.npz"


def save(run_dir: str | Path, state: RunState, keep: int = 3) -> Path:
    """Write ``state`` atomically into ``run_dir``; delete all but the newest ``keep``."""
    run_dir = Path(run_dir)
    run = {"version": CHECKPOINT_VERSION, "config": state.config.to_dict(),
           "games": int(state.games), "elapsed": float(state.elapsed),
           "history": state.history, "resumes": state.resumes}
    arrays = state.net.file_arrays()
    arrays["run"] = np.frombuffer(json.dumps(run).encode(), dtype=np.uint8)
    arrays["rng"] = np.asarray(state.rng, dtype=np.uint64)
    arrays["stats"] = np.asarray(state.stats, dtype=np.int64)
    path = path_for(run_dir, state.games)
    atomic_savez(path, arrays)
    for old in checkpoints(run_dir)[:-keep]:
        if old != path:
            old.unlink(missing_ok=True)
    return path


def load(path: str | Path) -> RunState:
    """Read one checkpoint; raises :class:`CheckpointError` naming the problem."""
    try:
        arrays = read_npz(path, CHECKPOINT_ARRAYS)
        net = Network.from_arrays(arrays, str(path))
    except NetworkFileError as exc:
        raise CheckpointError(str(exc)) from None
    for key in ("run", "rng", "stats"):
        if key not in arrays:
            raise CheckpointError(f"{path}: missing {key!r}; a model file, not a checkpoint")
    try:
        run = json.loads(bytes(arrays["run"].astype(np.uint8)).decode())
        if run.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"{path}: checkpoint version {run.get('version')!r}; this "
                                  f"code reads {CHECKPOINT_VERSION}")
        config = TrainConfig.from_dict(run["config"])
        return RunState(config, net, int(run["games"]), arrays["rng"].astype(np.uint64),
                        float(run["elapsed"]), list(run.get("history", [])),
                        arrays["stats"].astype(np.int64), list(run.get("resumes", [])))
    except (ValueError, KeyError, TypeError, ConfigError, UnicodeDecodeError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{path}: bad run record ({exc!r})") from None


def checkpoints(run_dir: str | Path) -> list[Path]:
    """Checkpoint files of ``run_dir``, oldest first."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in run_dir.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def latest(run_dir: str | Path) -> RunState | None:
    """The newest checkpoint of ``run_dir`` that loads, or None if there is none."""
    for path in reversed(checkpoints(run_dir)):
        try:
            return load(path)
        except CheckpointError as exc:
            warnings.warn(f"skipping unreadable checkpoint: {exc}")
    return None
