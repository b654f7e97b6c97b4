"""Self-play training on a Ray cluster: ``python -m training.selfplay --backend ray``.

The scheme is a parameter server in the driver (the process that runs the command):

* each worker is a Ray actor (:class:`SelfPlayWorker`, one CPU) that receives the
  current weights, plays and learns from ``sync_games`` self-play games on its own copy
  with the same kernel as a local worker (:func:`training.td.selfplay_games`), and
  returns what it learned as the difference of its weights, with its game statistics
  and its dice state;
* the driver adds each returned difference, divided by the number of workers, to the
  run's weights as it arrives (asynchronous model averaging), and hands that worker the
  weights as they now stand for its next games. A worker's games are therefore played
  on weights at most one round of the other workers old. The division matters: a batch
  fits the weights to its own games (thousands of updates), so the plain sum of ``W``
  workers' changes from the same weights overshoots ``W`` times over (measured, two
  workers summing fell to -1.75 ppg against PubEval in 200,000 games, where the local
  run reached +0.33, and averaging +0.35; ``docs/cluster.md``). With one worker the
  scheme is the local trainer exactly;
* the learning rate follows the run's total games, as locally: a worker is told the
  total when it starts a batch.

The driver also writes the checkpoints, measures the strength figure and shows the
progress bar, exactly as the local trainer (:class:`training.trainer.Trainer`, whose
loop this one reuses); a checkpoint holds the run's weights after whole batches only,
so a run resumes with either backend. ``--games`` stays exact: the driver hands out the
games.

    ray start --head                                   # on the first machine
    ray start --address <head-ip>:6379                 # on each other machine
    python -m training.selfplay --backend ray --address auto --workers 32 --out runs/x \\
        --games 10000000
"""

from __future__ import annotations

import time

import numpy as np

from engine.cluster import ClusterError, connect
from engine.movegen._core import new_scratch
from engine.rules.position import Position
from engine.rules.scoring import score_table
from engine.rules.variants import get_rules

from . import checkpoint, td
from .trainer import Trainer

SYNC_GAMES = 100
"""Games a Ray worker plays between two exchanges of weights (``--sync-games``)."""
DRAIN_SECONDS = 120.0
"""How long a stop waits for the workers' batches under way (their games are kept);
batches still running after it are lost with their actors."""


class SelfPlayWorker:
    """A Ray actor's body: plays and learns from batches of self-play games."""

    def __init__(self, variant: str, encoder: tuple, params: np.ndarray, max_turns: int):
        rules = get_rules(variant)
        self.fixed = (Position.start(variant).to_array(), rules.table(), new_scratch(),
                      score_table(rules), rules.opening_rolls_both)
        self.enc = encoder
        # a copy: the object store's arrays are read-only, and a read-only array is
        # another numba type (the kernels would compile again, here and in every actor)
        self.params = np.array(params, np.float64)
        self.max_turns = int(max_turns)

    def play(self, weights: tuple, n_games: int, total: int, rng: int) -> tuple:
        """``(delta, played, stats, rng)``: the weights' change over ``n_games`` games
        learned from ``weights`` (the run at ``total`` games), the games learned from,
        their statistics row and the dice state after them."""
        w = [np.array(a, copy=True) for a in weights]       # object-store arrays are read-only
        counts = np.array([total], np.int64)
        stats = np.zeros((1, td.N_STATS), np.int64)
        st = np.array([rng], np.uint64)
        played = td.selfplay_games(*self.fixed, *w, *self.enc, self.params, self.max_turns,
                                   n_games, st, counts, 0, np.zeros(4, np.int64), stats)
        # in float64, where the difference of two float32 weights is exact: with one
        # worker the driver's sum is then the worker's weights, bit for bit
        delta = tuple(a.astype(np.float64) - b for a, b in zip(w, weights))
        return delta, int(played), stats[0], int(st[0])


class RayTrainer(Trainer):
    """:class:`training.trainer.Trainer` with its workers on a Ray cluster."""

    def __init__(self, state: checkpoint.RunState, run_dir, workers: int,
                 address: str | None = None, sync_games: int = SYNC_GAMES):
        if isinstance(sync_games, bool) or not isinstance(sync_games, int) or sync_games < 1:
            raise ClusterError(f"sync_games = {sync_games!r}: expected an integer >= 1")
        super().__init__(state, run_dir, workers)
        # a worker is told the run's total games with each batch (its counts), so the
        # games before this session are not added again
        self.params[td.P_GAMES_BEFORE] = 0.0
        self.sync_games = sync_games
        self.ray = connect(address)
        self._actors: list = []
        self._pending: dict = {}          # future -> (worker, games)
        self._target = 0
        self._weights_ref = None          # the weights as last put, None once changed
        self.updates = 0
        """Batches applied."""
        self.learner_seconds = 0.0
        """Driver time spent applying batches and putting weights."""

    # snapshots are taken between two updates, in the driver's own thread
    def _pause(self) -> None:
        pass

    def _resume(self) -> None:
        pass

    def _weights(self):
        if self._weights_ref is None:
            self._weights_ref = self.ray.put(tuple(a.copy() for a in
                                                   (self.w1t, self.b1, self.w2, self.b2)))
        return self._weights_ref

    def _submit(self, w: int) -> None:
        """Hand worker ``w`` its next batch, if games are left."""
        claimed = sum(n for _, n in self._pending.values())
        left = self._target - self.games() - claimed
        if left <= 0:
            return
        n = min(self.sync_games, left)
        f = self._actors[w].play.remote(self._weights(), n, self.games(), int(self.rng[w]))
        self._pending[f] = (w, n)

    def _apply(self, f) -> int:
        """Add a finished batch to the run; returns its worker."""
        w, _ = self._pending.pop(f)
        delta, played, stats, rng = self.ray.get(f)
        for a, d in zip((self.w1t, self.b1, self.w2, self.b2), delta):
            a += d / self.workers              # d / 1 is d: one worker is the local run
        self.counts[w] += played
        self.stats[w] += stats
        self.rng[w] = np.uint64(rng)
        self._weights_ref = None
        self.updates += 1
        return w

    def _start(self, target: int) -> None:
        self._target = target
        # an actor holds no state of the run: a lost one (a node gone) is restarted and
        # its batch played again from the same weights and dice, to the same result
        actor = self.ray.remote(num_cpus=1, max_restarts=4, max_task_retries=4)(SelfPlayWorker)
        self._actors = [actor.remote(self.cfg.variant, self.enc, self.params,
                                     self.cfg.max_turns) for _ in range(self.workers)]
        for w in range(self.workers):
            self._submit(w)

    def _working(self) -> bool:
        if not self._pending:
            return False
        # the first batch to finish (or none within a quarter second), with every
        # other one already finished: no worker waits for a slower one
        ready, rest = self.ray.wait(list(self._pending), num_returns=1, timeout=0.25)
        if ready and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        for f in ready:
            t = time.perf_counter()
            w = self._apply(f)
            self._submit(w)
            self.learner_seconds += time.perf_counter() - t
        return bool(self._pending)

    def _failed(self) -> list[str]:
        return []                        # Ray restarts a lost actor (see _start)

    def _stop(self) -> None:
        """Keep the batches under way (waiting up to :data:`DRAIN_SECONDS`), then end
        the actors."""
        self._target = 0                 # nothing more is handed out
        deadline = time.time() + DRAIN_SECONDS
        while self._pending and time.time() < deadline:
            ready, _ = self.ray.wait(list(self._pending), num_returns=1,
                                     timeout=max(0.0, deadline - time.time()))
            for f in ready:
                self._apply(f)
        self._pending.clear()            # lost with their actors, below
        for a in self._actors:
            self.ray.kill(a)
        self._actors = []
