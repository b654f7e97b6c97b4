"""The self-play trainer: the run's weights, its workers, checkpoints and the
strength figure (:class:`Trainer`, behind ``python -m training.selfplay``).

The local workers are processes forked from this one; the weights live in shared
memory and every worker updates them in place (Hogwild). :class:`training.cluster.RayTrainer`
keeps this loop and puts the workers on a Ray cluster.
"""

from __future__ import annotations

import mmap
import os
import signal
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")      # the workers: one thread each
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from engine._jit import announce_compile  # noqa: E402
from engine.cli._common import writing  # noqa: E402
from engine.eval.heuristic import weights as heuristic_weights  # noqa: E402
from engine.eval.network import Network, utc_now  # noqa: E402
from engine.eval.pubeval import weights as pubeval_weights  # noqa: E402
from engine.movegen._core import new_scratch  # noqa: E402
from engine.play import loop  # noqa: E402
from engine.rules.position import Position  # noqa: E402
from engine.rules.scoring import score_table  # noqa: E402
from engine.rules.variants import HIT, OPPOSITE, get_rules  # noqa: E402

from . import checkpoint, td  # noqa: E402
from .config import ConfigError  # noqa: E402

BATCH = 50
"""Games per kernel call of a worker (it checks for pause / stop between games)."""
EVAL_CHUNK = 200
"""Games per kernel call of a strength figure (even, so that the network's seat still
alternates from game to game across calls): a signal stops the figure between two calls."""
ABANDONED_LIMIT = 1000
"""Games abandoned at ``max_turns`` before a run that abandons ten for each it finishes
is stopped as misconfigured."""
CLAIM_WAIT = 0.5
"""Seconds a worker waits for the claim lock before it looks at the stop flag again (a
worker killed while it held the lock never releases it)."""


class WorkerDied(RuntimeError):
    """A worker process ended before the run did (killed from outside, or an error of
    its own): the run stopped and wrote its final checkpoint; ``--resume`` goes on."""


class HeldSignals:
    """A ``with`` block in which SIGINT and SIGTERM are noted instead of raising:
    stopping the workers and writing a checkpoint cannot be cut short by a second
    signal; :attr:`signalled` says whether one came. Outside the main thread (where
    handlers cannot be set) it does nothing."""

    def __enter__(self) -> "HeldSignals":
        self.signalled = False
        self._old: dict = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, signum, frame) -> None:
        self.signalled = True

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


# --------------------------------------------------------------------- shared arrays
def _shared(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` in anonymous shared memory, inherited by forked workers."""
    a = np.asarray(a)
    buf = mmap.mmap(-1, max(a.nbytes, 1))
    out = np.frombuffer(buf, dtype=a.dtype, count=a.size).reshape(a.shape)
    out[...] = a
    return out


class Trainer:
    """One training session: shared weights, worker processes, checkpoints."""

    def __init__(self, state: checkpoint.RunState, run_dir: Path, workers: int):
        self.state = state
        self.cfg = state.config
        self.run_dir = run_dir
        self.workers = workers
        self.rules = get_rules(self.cfg.variant)
        net = state.net
        self.w1t, self.b1, self.w2, self.b2 = (_shared(a) for a in net.arrays())
        self.enc = net.encoder_arrays()
        self.counts = _shared(np.zeros(workers, np.int64))
        self.stats = _shared(np.zeros((workers, td.N_STATS), np.int64))
        self.control = _shared(np.zeros(4, np.int64))
        self.acks = _shared(np.zeros(workers, np.int64))
        self.done = _shared(np.zeros(workers, np.int64))
        self.claimed = _shared(np.zeros(1, np.int64))   # games the workers have taken on
        self._claim_lock = None               # made in run(), before the fork
        self._epoch = 0                       # pause epochs (see _pause)
        self._procs: list = []                # the worker processes, once started
        self.trace: list[tuple[float, int]] = []
        """``(perf_counter, games)`` each time the run loop looked (its speed, measured)."""
        rng = np.asarray(state.rng, np.uint64)
        if rng.shape != (workers,):          # fresh run, or another number of workers
            seq = np.random.SeedSequence([self.cfg.seed, state.games, workers])
            rng = np.array([c.generate_state(1, np.uint64)[0] for c in seq.spawn(workers)],
                           dtype=np.uint64)
        self.rng = _shared(rng)
        self.base_games = state.games
        self.base_stats = (state.stats if state.stats.shape == (td.N_STATS,)
                           else np.zeros(td.N_STATS, np.int64))
        self.start = Position.start(self.cfg.variant).to_array()
        self.table = self.rules.table()
        # the games before this session: a resumed run's learning rate goes on with
        # its schedule (counts are this session's games)
        self.params = np.array([self.cfg.alpha, self.cfg.alpha_final,
                                self.cfg.alpha_half_life, self.cfg.lam, self.cfg.epsilon,
                                float(state.games)])
        self.pubeval_ok = self.rules.geometry == OPPOSITE and self.rules.meet == HIT
        self.eval_rng = np.array([np.random.SeedSequence([self.cfg.seed, 7]).generate_state(
            1, np.uint64)[0]], np.uint64)

    # ----------------------------------------------------------------- kernels
    def _net_args(self, w1t, b1, w2, b2):
        return (self.start, self.table, new_scratch(),
                score_table(self.rules),
                self.rules.opening_rolls_both, w1t, b1, w2, b2, *self.enc)

    def compile(self) -> None:
        """Compile (or load from cache) the kernels before forking the workers: one
        self-play game and one evaluation game on copies of the weights, with a dice
        state of their own (the run's weights and dice are untouched)."""
        announce_compile("the self-play kernels", [loop.play_games, td._learn_game],
                         "30-60 seconds")
        scratch = [a.copy() for a in (self.w1t, self.b1, self.w2, self.b2)]
        st = np.zeros(1, np.uint64)
        td.selfplay_games(*self._net_args(*scratch), self.params, self.cfg.max_turns, 1,
                          st, np.zeros(1, np.int64), 0, np.zeros(4, np.int64),
                          np.zeros((1, td.N_STATS), np.int64))
        td.evaluate_games(*self._net_args(*scratch), td.OPP_RANDOM, pubeval_weights(),
                          self.cfg.max_turns, 1, st, np.zeros(1, np.int64))

    def _worker(self, w: int, target: int) -> None:
        """Body of worker ``w``: play batches until the run reaches ``target`` games."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent stops us cleanly
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        parent = os.getppid()
        args = self._net_args(self.w1t, self.b1, self.w2, self.b2)
        st = self.rng[w:w + 1]
        try:
            while self.control[td.C_STOP] == 0 and os.getppid() == parent:
                epoch = self.control[td.C_PAUSE]
                if epoch != 0:
                    self.acks[w] = epoch
                    time.sleep(0.002)
                    continue
                # claims keep the total exact
                if not self._claim_lock.acquire(timeout=CLAIM_WAIT):
                    continue
                try:
                    left = target - self.base_games - int(self.claimed[0])
                    if left <= 0:
                        break
                    n = min(BATCH, max(1, left // self.workers))
                    self.claimed[0] += n
                finally:
                    self._claim_lock.release()
                played = td.selfplay_games(*args, self.params, self.cfg.max_turns, n,
                                           st, self.counts, w, self.control, self.stats)
                if played < n:                # a pause or stop cut the batch short
                    with self._claim_lock:
                        self.claimed[0] -= n - played
        finally:
            self.done[w] = 1

    # ----------------------------------------------------------------- snapshots
    def games(self) -> int:
        return self.base_games + int(self.counts.sum())

    def _pause(self) -> None:
        self._epoch += 1
        self.control[td.C_PAUSE] = self._epoch
        # a worker that died (killed from outside) never acknowledges: count it as done
        while not all(self.acks[w] == self._epoch or self.done[w]
                      or not (w < len(self._procs) and self._procs[w].is_alive())
                      for w in range(self.workers)):
            time.sleep(0.001)

    def _resume(self) -> None:
        self.control[td.C_PAUSE] = 0

    def snapshot(self, elapsed: float) -> checkpoint.RunState:
        """The run's state, taken while every worker waits between two games, so the
        weights, game count and dice states agree. Weights gone NaN or inf (the
        learning diverged) raise :class:`training.checkpoint.CheckpointError`, the
        one-line error of :func:`training.checkpoint.save`: nothing is saved and the
        checkpoints and model before stay."""
        self._pause()
        try:
            w1t, b1, w2, b2 = (a.copy() for a in (self.w1t, self.b1, self.w2, self.b2))
            games = self.games()
            rng = self.rng.copy()
            stats = self.base_stats + self.stats.sum(axis=0)
        finally:
            self._resume()
        # named as in the files (checkpoint.save's message), before Network refuses them
        checkpoint.check_finite(self.run_dir, games, {"W1": w1t, "b1": b1, "W2": w2,
                                                      "b2": b2})
        net = Network(self.cfg.variant, self.state.net.encoder, w1t, b1, w2, b2)
        net.info = self._info(games, elapsed)
        return checkpoint.RunState(self.cfg, net, games, rng, elapsed,
                                   list(self.state.history), stats,
                                   list(self.state.resumes))

    def _info(self, games: int, elapsed: float) -> dict:
        info = {"trained_games": games, "training_seconds": round(elapsed, 1),
                "method": "TD(lambda) self-play, offline lambda-returns, greedy 0-ply",
                "config": self.cfg.to_dict(), "saved": utc_now(),
                "strength": self.state.history[-1] if self.state.history else None}
        if "warm_start" in self.state.net.info:       # --init: where the weights began
            info["warm_start"] = self.state.net.info["warm_start"]
        return info

    def save(self, elapsed: float) -> Path:
        """Write a checkpoint and ``model.npz`` (with its card); an ``OSError`` (a full
        disk) raises :class:`engine.cli._common.WriteError` naming the file."""
        snap = self.snapshot(elapsed)
        with writing(checkpoint.path_for(self.run_dir, snap.games)):
            path = checkpoint.save(self.run_dir, snap, self.cfg.keep_checkpoints)
        model = self.run_dir / "model.npz"
        with writing(model):
            snap.net.save(model, card_file=True)
        return path

    def _figure(self) -> list:
        """A strength figure (:meth:`strength`) as a row of the run's history, ``[games,
        points per game, opponent, games of the figure]``: ``games`` is the count of
        the weights measured, both taken while the workers wait between two games (they
        play on while the figure is measured)."""
        self._pause()
        try:
            games = self.games()
            weights = [a.copy() for a in (self.w1t, self.b1, self.w2, self.b2)]
        finally:
            self._resume()
        ppg, opp, n = self.strength(weights=weights)
        return [games, round(ppg, 4), opp, n]

    def strength(self, n_games: int | None = None,
                 weights: list | None = None) -> tuple[float, str, int]:
        """Points per game of ``weights`` (``[w1t, b1, w2, b2]``; default: a copy of
        the current ones) against PubEval (backgammon boards) or the heuristic (the
        other games)."""
        n = self.cfg.eval_games if n_games is None else n_games
        w = weights if weights is not None else [a.copy() for a in (self.w1t, self.b1,
                                                                    self.w2, self.b2)]
        opp = td.OPP_PUBEVAL if self.pubeval_ok else td.OPP_HEURISTIC
        pts = np.zeros(n, np.int64)
        args = (*self._net_args(*w), opp, pubeval_weights(), self.cfg.max_turns)
        hw = heuristic_weights(self.rules)
        for first in range(0, n, EVAL_CHUNK):       # the same games as one call would play
            games = pts[first:first + EVAL_CHUNK]
            td.evaluate_games(*args, len(games), self.eval_rng, games, hw=hw)
        return (float(pts.mean()) if n else 0.0,
                ("pubeval" if self.pubeval_ok else "heuristic"), n)

    # ----------------------------------------------------------------- the workers
    def _start(self, target: int) -> None:
        """Start the workers that play the run up to ``target`` games."""
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self._claim_lock = ctx.Lock()
        self.claimed[0] = int(self.counts.sum())
        self._procs = [ctx.Process(target=self._worker, args=(w, target), daemon=True)
                       for w in range(self.workers)]
        for p in self._procs:
            p.start()

    def _working(self) -> bool:
        """Wait up to a quarter of a second, less when a worker ends; whether any still
        plays."""
        from multiprocessing.connection import wait
        alive = [p.sentinel for p in self._procs if p.is_alive()]
        if alive:
            wait(alive, timeout=0.25)
        return any(p.is_alive() for p in self._procs)

    def _failed(self) -> list[str]:
        """The workers that ended with an error or a signal (none while all play or
        ended well), each in words: which one, its pid, how it ended."""
        out = []
        for w, p in enumerate(self._procs):
            code = p.exitcode
            if not code:                      # playing (None) or done (0)
                continue
            if code < 0:
                try:
                    how = f"was killed by {signal.Signals(-code).name}"
                except ValueError:
                    how = f"was killed by signal {-code}"
            else:
                how = f"failed with exit code {code}"
            out.append(f"worker {w + 1} of {self.workers} (pid {p.pid}) {how}")
        return out

    def _stop(self) -> None:
        """Stop the workers after their current game and wait for them."""
        self.control[td.C_STOP] = 1
        self.control[td.C_PAUSE] = -1
        for p in self._procs:
            p.join()

    def _check_abandoned(self) -> None:
        """Raise :class:`ConfigError` when games end unfinished at ``max_turns`` far more
        often than they finish: such a run would not reach its target."""
        abandoned = int(self.stats[:, td.ST_ABANDONED].sum())
        finished = int(self.counts.sum())
        if abandoned >= ABANDONED_LIMIT and abandoned > 10 * finished:
            raise ConfigError(f"{abandoned:,} games abandoned at max_turns = "
                              f"{self.cfg.max_turns} and {finished:,} finished: raise "
                              f"max_turns (--set max_turns=N)")

    # ----------------------------------------------------------------- the run
    def run(self, target: int, quiet: bool = False) -> checkpoint.RunState:
        """Train until ``target`` games in all, checkpointing and measuring on the way.
        A worker that dies stops the run: the final checkpoint is written, then
        :class:`WorkerDied` says which worker; a checkpoint that cannot be written (a
        full disk) raises :class:`engine.cli._common.WriteError`. A signal during the
        compile stops the run once it is done (raised inside numba's compiler, through
        llvmlite's callbacks, it was dropped or ended in a trace)."""
        with HeldSignals() as held:
            self.compile()
        if held.signalled:
            raise KeyboardInterrupt
        t0 = time.time()
        elapsed0 = self.state.elapsed
        self._start(target)
        tty = sys.stderr.isatty()
        bar = tqdm(total=target, initial=self.games(), unit="game", disable=quiet,
                   dynamic_ncols=True, mininterval=0.5 if tty else 30, smoothing=0.05)
        last_ckpt = last_eval = time.time()
        fig = ""
        interrupted = False
        failed: list[str] = []
        try:
            while self._working():
                self.trace.append((time.perf_counter(), self.games()))
                bar.update(self.games() - bar.n)
                self._check_abandoned()
                # a worker that died stops the run: its checkpoint is written below and
                # --resume goes on, where the others playing on alone would end the
                # run short of its target, after hours at a fraction of its speed
                failed = self._failed()
                if failed:
                    break
                now = time.time()
                if self.cfg.eval_games and now - last_eval >= 60 * self.cfg.eval_minutes:
                    row = self._figure()
                    self.state.history.append(row)
                    fig = f"{row[1]:+.3f} ppg vs {row[2]}"
                    bar.set_postfix_str(fig)
                    last_eval = time.time()
                if now - last_ckpt >= 60 * self.cfg.checkpoint_minutes:
                    path = self.save(elapsed0 + now - t0)
                    if not tty and not quiet:
                        bar.write(f"{utc_now()} games={self.games()} {fig} -> {path.name}")
                    last_ckpt = time.time()
            failed = failed or self._failed()
        except KeyboardInterrupt:
            interrupted = True
        except BaseException:
            with HeldSignals():
                self._stop()
                bar.close()
            raise
        # one held block from stopping the workers to the final checkpoint: a second
        # signal between two blocks raised out of the run with nothing saved
        with HeldSignals() as held:
            if interrupted:
                bar.write("interrupted: stopping workers and saving a checkpoint")
            self._stop()
            bar.update(self.games() - bar.n)
            bar.close()
            path = self.save(elapsed0 + time.time() - t0)   # before the figure
        if failed:
            raise WorkerDied(f"{'; '.join(failed)}: the run stopped at {self.games():,} "
                             f"of {target:,} games and wrote its checkpoint {path.name}; "
                             f"run the same command with --resume to go on")
        row = None
        if self.cfg.eval_games and held.signalled:
            bar.write("interrupted again: the final strength figure is skipped",
                      file=sys.stderr)
        elif self.cfg.eval_games:
            try:                # the one part a second signal cuts short
                row = self._figure()
            except KeyboardInterrupt:
                bar.write("interrupted again: the final strength figure is skipped",
                          file=sys.stderr)
        with HeldSignals():     # the rest is quick: signals are noted, not raised
            if row is not None:
                self.state.history.append(row)
                path = self.save(elapsed0 + time.time() - t0)
            final = checkpoint.load(path)
            if not quiet:
                s = final.stats
                played = max(int(s[td.ST_GAMES]), 1)
                print(f"{final.games} games; {path}; mean turns "
                      f"{s[td.ST_TURNS] / played:.1f}, gammons {s[td.ST_GAMMONS] / played:.3f}, "
                      f"backgammons {s[td.ST_BACKGAMMONS] / played:.3f}; "
                      f"strength {final.history[-1] if final.history else 'n/a'}")
        return final
