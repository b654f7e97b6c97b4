"""Work spread over a Ray cluster: rollouts, position labelling (and, in
:mod:`training.cluster`, self-play training).

`Ray <https://docs.ray.io>`_ is an optional extra (``pip install -e '.[cluster]'``);
nothing here imports it until a backend is made. The unit of work is the same pure
function the local code runs, so the numbers do not depend on where or on how many
workers they were computed:

* a rollout's trials are split into chunks of a trial range
  (:func:`engine.search.rollout.play_chunk`), played by Ray tasks and merged in trial
  order: the same seed gives the same rollout, bit for bit, as on one core;
* a position set is labelled in chunks of positions
  (:meth:`engine.search.nply.Search.values_of`).

The model travels to the workers as its arrays (put in Ray's object store once per
call), not as a file path, so a worker node needs the package installed but not the
model file; each worker process keeps the searches it has built (:data:`KEPT`).

    >>> from engine.cluster import RayBackend                      # doctest: +SKIP
    >>> backend = RayBackend(address="auto")        # a running cluster; None: start one here
    >>> rollout(search, position, backend=backend)                 # doctest: +SKIP
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Callable, Iterator

import numpy as np

from engine.errors import NardyError, quote

KEPT = 4
"""Searches (models) a worker process keeps built between tasks."""
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "NARDY_THREADS": "1"}
"""Environment of the worker processes a backend starts here: one thread each (Ray
runs one task per CPU)."""


class ClusterError(NardyError):
    """Ray is missing, a cluster cannot be reached, or a backend setting is wrong."""


def ray_module():
    """The ``ray`` package, or :class:`ClusterError` saying how to get it."""
    try:
        import ray
    except ImportError:
        raise ClusterError("the Ray backend needs Ray: pip install -e '.[cluster]' "
                           "(or pip install ray)") from None
    return ray


REACH_SECONDS = 5.0
"""How long :func:`connect` waits for a cluster's address to answer before it gives up
(Ray's own client retries for minutes)."""


def _reachable(address: str) -> None:
    """Raise :class:`ConnectionError` unless ``host:port`` (``ray://`` allowed) takes a
    TCP connection within :data:`REACH_SECONDS`; ``auto`` is left to Ray."""
    import socket
    if address == "auto":
        return
    where = address.split("://", 1)[-1]
    host, sep, port = where.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected 'auto' or host:port, got {address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), REACH_SECONDS).close()
    except OSError as exc:
        raise ConnectionError(f"no answer from {where} within {REACH_SECONDS:g} s "
                              f"({exc.strerror or type(exc).__name__})") from None


def connect(address: str | None = None, num_cpus: int | None = None):
    """Ray, initialised once per process: joined to the cluster at ``address``
    (``"auto"``: the one ``ray start`` runs on this machine; ``"host:port"``), or with
    None a cluster of this machine alone, started here with ``num_cpus`` workers
    (default: every core). Returns the ``ray`` module."""
    ray = ray_module()
    if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int)
                                 or num_cpus < 1):
        raise ClusterError(f"num_cpus = {quote(num_cpus)}: expected an integer >= 1")
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ClusterError(f"address = {quote(address)}: expected 'auto' or host:port")
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING",
                              "configure_logging": True, "log_to_driver": True}
    try:
        if address is None:
            # a cluster of this process alone, reached by nobody else: no token file
            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            env = dict(WORKER_ENV)
            if "NUMBA_CACHE_DIR" in os.environ:            # the driver's kernel cache
                env["NUMBA_CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"]
            ray.init(num_cpus=num_cpus, runtime_env={"env_vars": env}, **kwargs)
        else:
            _reachable(address)
            ray.init(address=address, runtime_env={"env_vars": dict(WORKER_ENV)}, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"cannot reach a Ray cluster at {address!r}: "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                           ) from None
    return ray


# --------------------------------------------------------------------- on the workers
_searches: dict[str, Any] = {}          # token -> Search, in each worker process


class ModelSpec:
    """What a worker needs to build the driver's search: the networks' arrays (the
    network, its pruning and race networks), the rules, whether the bear-off tables
    are on and the search's settings; ``token`` names it in the workers' caches."""

    def __init__(self, search) -> None:
        ev = search.evaluator
        self.token = uuid.uuid4().hex
        self.rules = ev.rules
        self.network = ev.network.file_arrays()
        self.prune = ev.prune.file_arrays() if ev.prune is not None else None
        self.race = ev.race.file_arrays() if ev.race is not None else None
        self.bearoff = ev.bearoff is not None
        self.settings = search.settings

    def search(self):
        """The search this spec describes, built once per worker process."""
        got = _searches.get(self.token)
        if got is None:
            from engine.eval.evaluator import Evaluator
            from engine.eval.network import Network
            from engine.search.nply import Search
            prune = (Network.from_arrays(self.prune, "pruning network")
                     if self.prune is not None else None)
            race = (Network.from_arrays(self.race, "race network")
                    if self.race is not None else None)
            ev = Evaluator(Network.from_arrays(self.network, "network"), self.rules,
                           self.bearoff, prune, race)
            got = Search(ev, self.settings, threads=1)
            while len(_searches) >= KEPT:
                _searches.pop(next(iter(_searches)))
            _searches[self.token] = got
        return got


def _rollout_task(spec: ModelSpec, roots, lo, hi, settings, cube, table):
    from engine.search.rollout import play_chunk
    return play_chunk(spec.search(), roots, lo, hi, settings, cube, table)


def _values_task(spec: ModelSpec, lo, states, ply):
    return lo, spec.search().values_of(states, ply).astype(np.float32)


# --------------------------------------------------------------------- the backend
class RayBackend:
    """Rollouts and labelling as Ray tasks (one CPU each).

    ``address``: see :func:`connect`; ``workers``: how many tasks a rollout batch is
    split into (default: the cluster's CPUs); ``num_cpus``: the size of a cluster started
    here (``address`` None)."""

    def __init__(self, address: str | None = None, workers: int | None = None,
                 num_cpus: int | None = None):
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or workers < 1):
            raise ClusterError(f"workers = {quote(workers)}: expected an integer >= 1")
        self.ray = connect(address, num_cpus)
        self.workers = workers or max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        """Tasks a batch of trials is split into."""
        self._remote: dict[str, Any] = {}
        self._specs: dict[int, tuple] = {}     # id(search) -> (search, spec ref)

    def __repr__(self) -> str:
        return f"RayBackend(workers={self.workers})"

    def _task(self, fn: Callable):
        got = self._remote.get(fn.__name__)
        if got is None:
            got = self._remote[fn.__name__] = self.ray.remote(num_cpus=1)(fn)
        return got

    def _spec(self, search):
        """The object-store reference of ``search``'s model, put once per search."""
        got = self._specs.get(id(search))
        if got is None or got[0] is not search:
            got = self._specs[id(search)] = (search, self.ray.put(ModelSpec(search)))
        return got[1]

    def play(self, search, roots: np.ndarray, ranges, settings, cube, table,
             on_trials: Callable[[int], None]) -> list:
        """The rollout chunks of ``ranges`` (in their order), each split into
        :attr:`workers` pieces played as tasks and merged back in trial order."""
        from engine.search.rollout import TrialChunk
        spec = self._spec(search)
        roots_ref = self.ray.put(np.ascontiguousarray(roots))
        task = self._task(_rollout_task)
        pieces = []
        for lo, hi in ranges:
            k = min(self.workers, hi - lo)
            cuts = np.linspace(lo, hi, k + 1).round().astype(int)
            pieces.append([(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a])
        futures = {task.remote(spec, roots_ref, a, b, settings, cube, table): (a, b)
                   for piece in pieces for a, b in piece}
        got: dict[tuple, Any] = {}
        pending = list(futures)
        while pending:
            ready, pending = self.ray.wait(pending, num_returns=1)
            for f in ready:
                chunk = self.ray.get(f)
                got[futures[f]] = chunk
                on_trials(chunk.hi - chunk.lo)
        out = []
        for (lo, hi), piece in zip(ranges, pieces):
            parts = [got[p] for p in piece]
            cubeful = parts[0].cube_result is not None
            out.append(TrialChunk(
                lo, hi, np.concatenate([p.plain for p in parts], axis=1),
                np.concatenate([p.luck for p in parts], axis=1),
                np.concatenate([p.cube_result for p in parts], axis=1) if cubeful else None,
                np.concatenate([p.cube_luck for p in parts], axis=1) if cubeful else None,
                sum(p.evaluated for p in parts)))
        return out

    def values(self, search, jobs, ply: int) -> Iterator[tuple[int, np.ndarray]]:
        """``(lo, targets)`` of each ``(lo, states)`` job (the ``ply``-ply outputs of
        :meth:`~engine.search.nply.Search.values_of`), as the tasks finish."""
        spec = self._spec(search)
        task = self._task(_values_task)
        pending = [task.remote(spec, lo, states, ply) for lo, states in jobs]
        while pending:
            ready, pending = self.ray.wait(pending, num_returns=1)
            for f in ready:
                yield self.ray.get(f)


def add_arguments(parser, local: str) -> None:
    """``--backend local|ray`` and ``--address`` on a command's ``parser`` (or argument
    group); ``local`` says what the local backend is for that command."""
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help=f"local: {local} (default); ray: a Ray cluster "
                             f"(pip install -e '.[cluster]')")
    parser.add_argument("--address", default=None,
                        help="with --backend ray: the cluster ('auto', host:port); "
                             "default: start one on this machine")


def make_backend(name: str | None, address: str | None = None,
                 workers: int | None = None):
    """The backend a command's ``--backend`` names: None for ``local`` (the caller's
    default), a :class:`RayBackend` for ``ray``."""
    if name in (None, "local"):
        if address is not None:
            raise ClusterError("--address is for --backend ray")
        return None
    if name == "ray":
        return RayBackend(address, workers)
    raise ClusterError(f"backend = {quote(name)}: expected 'local' or 'ray'")
