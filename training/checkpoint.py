"""Checkpoints of a self-play run: weights, config, game count, dice states, history.

One checkpoint is one ``.npz`` of plain arrays in the run folder,
``checkpoint-<games>.npz``: the network's model arrays (with its card, so a checkpoint
is also a loadable model), ``run`` (JSON bytes: config, games, elapsed time, strength
history, format version) and ``rng`` (each worker's splitmix64 state). Files are written
to a temporary file and ``os.replace``d, so a kill at any moment leaves the previous
checkpoint whole; the newest ``keep`` are kept. :func:`load` checks every field it reads
(a damaged or hand-edited file is a :class:`CheckpointError`, never another exception
or a run that starts from ``games: -5``), and :func:`latest` finds the newest that
loads, naming on standard error each newer one it skips.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import describe, quote
from engine.eval.network import MODEL_ARRAYS, Network, NetworkFileError, atomic_savez, read_npz

from .config import TrainConfig

CHECKPOINT_VERSION = 1
"""Layout of the ``run`` record this code reads and writes."""
CHECKPOINT_ARRAYS = MODEL_ARRAYS + ("run", "rng", "stats")
"""The arrays of a checkpoint: a model's, the run record, the dice states, the stats."""
MAX_COUNT = 2**63 - 1
"""The largest game count a checkpoint may claim (the counters are int64)."""
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


def check_finite(run_dir: str | Path, games: int, arrays: dict) -> None:
    """Raise :class:`CheckpointError` when a weight array of ``arrays`` (name: array)
    holds NaN or inf: the learning diverged (a rate too high). The message says that
    nothing was saved and that the run's checkpoints before it are kept; both
    :func:`save` and the trainer's snapshot (which builds a :class:`Network`, and
    that refuses such weights with a less helpful error) raise it."""
    broken = [k for k, a in arrays.items()
              if np.asarray(a).dtype.kind == "f" and not np.isfinite(a).all()]
    if broken:
        raise CheckpointError(f"{run_dir}: after {games:,} games the weights "
                              f"({', '.join(broken)}) hold non-finite values (the learning "
                              f"diverged: a rate too high?); not saved, and the run's "
                              f"checkpoints before it are kept")


def save(run_dir: str | Path, state: RunState, keep: int = 3) -> Path:
    """Write ``state`` atomically into ``run_dir``; delete all but the newest ``keep``."""
    run_dir = Path(run_dir)
    run = {"version": CHECKPOINT_VERSION, "config": state.config.to_dict(),
           "games": int(state.games), "elapsed": float(state.elapsed),
           "history": state.history, "resumes": state.resumes}
    arrays = state.net.file_arrays()
    check_finite(run_dir, state.games, arrays)   # a diverged run: keep the ones before it
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
        return _run_state(arrays, net, path)
    except CheckpointError:
        raise
    except Exception as exc:     # ConfigError, or a check this code lacks
        raise CheckpointError(f"{path}: bad run record ({describe(exc)})") from None


def _run_state(arrays: dict, net: Network, path) -> RunState:
    """The :class:`RunState` of a checkpoint's arrays, every field checked."""
    def bad(msg):
        return CheckpointError(f"{path}: {msg}")

    def count(value, what):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise bad(f"{what} = {quote(value)}; expected a whole number 0 or more")
        return value

    raw = arrays["run"]
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise bad(f"run record is {raw.dtype} of shape {raw.shape}; expected JSON bytes")
    run = json.loads(raw.tobytes().decode())
    if not isinstance(run, dict):
        raise bad(f"run record {quote(run)}; expected a JSON object")
    version = run.get("version")
    if type(version) is not int or version != CHECKPOINT_VERSION:
        raise bad(f"checkpoint version {quote(version)}; this code reads "
                  f"{CHECKPOINT_VERSION}")
    for key in ("config", "games", "elapsed"):
        if key not in run:
            raise bad(f"run record lacks {key!r}")
    config = TrainConfig.from_dict(run["config"])
    if (config.variant != net.variant or config.hidden not in (0, net.hidden)
            or config.encoder not in ("", net.encoder.name)):
        raise bad(f"the run's config ({config.variant}, hidden {config.hidden}, encoder "
                  f"{quote(config.encoder)}) does not fit its network {net!r}")
    games = count(run["games"], "games")
    elapsed = run["elapsed"]
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) \
            or not math.isfinite(elapsed) or elapsed < 0:
        raise bad(f"elapsed = {quote(elapsed)}; expected seconds, 0 or more")
    history = run.get("history", [])
    if not isinstance(history, list):
        raise bad(f"history = {quote(history)}; expected a list")
    for row in history:
        if not (isinstance(row, list) and len(row) == 4 and isinstance(row[2], str)
                and isinstance(row[1], (int, float)) and not isinstance(row[1], bool)
                and math.isfinite(row[1])):
            raise bad(f"history row {quote(row)}; expected [games, ppg, opponent, games "
                      f"played]")
        count(row[0], "history games")
        count(row[3], "history games played")
    resumes = run.get("resumes", [])
    if not isinstance(resumes, list) or not all(
            isinstance(r, list) and len(r) == 2 and isinstance(r[1], dict) for r in resumes):
        raise bad(f"resumes = {quote(resumes)}; expected [games, {{key: [old, new]}}] rows")
    for r in resumes:
        count(r[0], "resumes games")
    rng, stats = arrays["rng"], arrays["stats"]
    if rng.dtype != np.uint64 or rng.ndim != 1:
        raise bad(f"rng is {rng.dtype} of shape {rng.shape}; expected uint64 dice states")
    if stats.dtype.kind not in "iu" or stats.ndim != 1:
        raise bad(f"stats is {stats.dtype} of shape {stats.shape}; expected int64 counts")
    return RunState(config, net, games, rng.copy(), float(elapsed), history,
                    stats.astype(np.int64), resumes)


def checkpoints(run_dir: str | Path) -> list[Path]:
    """Checkpoint files of ``run_dir``, oldest first."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in run_dir.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def latest(run_dir: str | Path) -> RunState | None:
    """The newest checkpoint of ``run_dir`` that loads, or None if it has none. A newer
    one that does not load is named in one line on standard error and the one before it
    tried; when none loads, :class:`CheckpointError` says why the newest did not."""
    files = checkpoints(run_dir)
    newest = None
    for path in reversed(files):
        try:
            return load(path)
        except CheckpointError as exc:
            print(f"skipping unreadable checkpoint: {exc}", file=sys.stderr, flush=True)
            newest = newest or exc
    if files:
        raise CheckpointError(f"{run_dir}: none of its {len(files)} checkpoint(s) can be "
                              f"read; the newest: {newest}")
    return None
