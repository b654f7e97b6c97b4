"""The Ray backend against the local one, in the same run: self-play games/s, rollout
trials/s, what a Ray-trained network learns, and how throughput grows with nodes.

    python benchmarks/cluster.py                         # every part (about 8 minutes)
    python benchmarks/cluster.py --parts speed,rollout --games 20000

Parts (``--parts``):

* ``speed``: self-play with learning, ``--workers`` workers, from the released
  backgammon network's weights: the local trainer (forked workers, shared weights)
  against :class:`training.cluster.RayTrainer` on a Ray cluster of this machine; the
  steady rate (from the first finished games to the last, start-up excluded) and the
  wall time of the whole run with its start-up; the Ray overhead is ``1 - ray / local``.
* ``rollout``: a 1296-trial rollout of a middle-game position (0-ply play, variance
  reduction), truncated after 7 rolls and played to the end: the search's own threads
  against :class:`engine.cluster.RayBackend` with as many tasks (the same numbers, checked).
* ``learn``: a fresh 198-80 network trained ``--learn-games`` games locally and on Ray
  (same seed and config), then each one's points per game against PubEval over
  ``--eval-games`` games (the same dice for both), with 95% intervals.
* ``nodes``: a simulated cluster of 1, 2 and 4 Ray nodes of one CPU each on this
  machine (``ray.cluster_utils.Cluster``: a raylet per node, as on separate machines):
  self-play games/s and rollout trials/s with one worker per node, and the learner's
  (the driver's) time per batch, which caps a run at ``sync_games / that time`` games/s
  however many nodes there are. With two cores here, the nodes beyond two share them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.cluster import RayBackend, connect  # noqa: E402
from engine.eval.network import Network  # noqa: E402
from engine.eval.pubeval import weights as pubeval_weights  # noqa: E402
from engine.notation.parse import parse_position  # noqa: E402
from engine.search.nply import Search  # noqa: E402
from engine.search.rollout import Rollout, RolloutSettings  # noqa: E402
from training import checkpoint, td  # noqa: E402
from training.cluster import SYNC_GAMES, RayTrainer  # noqa: E402
from training.config import TrainConfig  # noqa: E402
from training.trainer import Trainer  # noqa: E402

CONTACT = "mPvNAAC1dcABAw"
"""The middle-game position of benchmarks/rollout.py."""


def _steady(trace: list, base: int) -> float:
    """Games/s between the first look at which games had finished and the last."""
    pts = [(t, g) for t, g in trace if g > base]
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return math.nan
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])


def selfplay(net: Network, cfg: TrainConfig, workers: int, games: int, ray: bool,
             address: str | None = None, sync: int = SYNC_GAMES):
    """``(steady games/s, wall s, trainer, final state)`` of one training run."""
    with tempfile.TemporaryDirectory() as tmp:
        state = checkpoint.RunState(cfg, net.copy())
        trainer = (RayTrainer(state, Path(tmp), workers, address, sync) if ray
                   else Trainer(state, Path(tmp), workers))
        trainer.compile()
        t = time.perf_counter()
        final = trainer.run(games, quiet=True)
        wall = time.perf_counter() - t
        return _steady(trainer.trace, 0), wall, trainer, final


def part_speed(args) -> None:
    net = Network.load(ROOT / "models" / "backgammon.npz")
    cfg = TrainConfig(variant="backgammon", hidden=net.hidden, encoder=net.encoder.name,
                      eval_games=0, alpha=0.001, alpha_final=0.001, checkpoint_minutes=60)
    print(f"## self-play speed: {net.sizes}, {args.games:,} games, {args.workers} workers, "
          f"learning on, sync every {args.sync} games on Ray")
    connect(None, args.workers)
    local, lw, _, _ = selfplay(net, cfg, args.workers, args.games, False)
    ray_, rw, tr, _ = selfplay(net, cfg, args.workers, args.games, True, sync=args.sync)
    print(f"local: {local:8.1f} games/s steady, {lw:6.1f} s wall")
    print(f"ray:   {ray_:8.1f} games/s steady, {rw:6.1f} s wall  "
          f"(overhead {100 * (1 - ray_ / local):+.1f}% steady, "
          f"{100 * (rw / lw - 1):+.1f}% wall; learner {1e3 * tr.learner_seconds / tr.updates:.2f} "
          f"ms a batch over {tr.updates} batches)")
    _shutdown()


def _rollout_pair(search: Search, backend, settings: RolloutSettings, pos):
    t = time.perf_counter()
    a = Rollout(search, settings).position(pos)
    tl = time.perf_counter() - t
    t = time.perf_counter()
    b = Rollout(search, settings, backend).position(pos)
    tr = time.perf_counter() - t
    same = bool(np.array_equal(a.results, b.results))
    return tl, tr, same, a


def part_rollout(args) -> None:
    pos, _ = parse_position(CONTACT)
    search = Search.load("backgammon", threads=args.workers)
    backend = RayBackend(workers=args.workers, num_cpus=args.workers)
    warm = RolloutSettings(trials=72, truncate=2)
    Rollout(search, warm).position(pos)
    Rollout(search, warm, backend).position(pos)         # the workers load their kernels
    print(f"## rollout of {CONTACT} (contact), 1296 trials, 0-ply play, VR, "
          f"{args.workers} threads here against {args.workers} Ray tasks")
    for name, trunc in (("truncated 7", 7), ("full", 0)):
        s = RolloutSettings(trials=1296, truncate=trunc, seed=1)
        tl, tr, same, r = _rollout_pair(search, backend, s, pos)
        print(f"{name:12s} local {tl:6.2f} s ({1296 / tl:7.0f} trials/s)   ray {tr:6.2f} s "
              f"({1296 / tr:7.0f} trials/s)   overhead {100 * (tr / tl - 1):+.1f}%   "
              f"same results: {same}   equity {r.equity:+.3f} [{r.se['equity']:.3f}]")
    _shutdown()


def _strength(net: Network, n: int, seed: int) -> tuple[float, float]:
    """Points per game of ``net`` against PubEval over ``n`` games, and the 95% half width."""
    from engine.movegen._core import new_scratch
    from engine.rules.position import Position
    from engine.rules.scoring import score_table
    from engine.rules.variants import get_rules
    rules = get_rules("backgammon")
    pts = np.zeros(n, np.int64)
    st = np.array([seed], np.uint64)
    td.evaluate_games(Position.start().to_array(), rules.table(), new_scratch(),
                      score_table(rules), rules.opening_rolls_both, *net.arrays(),
                      *net.encoder_arrays(), td.OPP_PUBEVAL, pubeval_weights(), 10_000, n,
                      st, pts)
    return float(pts.mean()), 1.96 * float(pts.std(ddof=1)) / math.sqrt(n)


def part_learn(args) -> None:
    cfg = TrainConfig(variant="backgammon", size="standard", eval_games=0, seed=3,
                      checkpoint_minutes=60)
    net = Network.create("backgammon", cfg.hidden_units, cfg.encoder_name,
                         np.random.default_rng(cfg.seed), cfg.init_scale)
    print(f"## learning: fresh {net.sizes}, {args.learn_games:,} games each, "
          f"{args.workers} workers, then {args.eval_games:,} games against PubEval "
          f"(the same dice for both networks)")
    connect(None, args.workers)
    rows = []
    for name, ray in (("local", False), ("ray", True)):
        rate, wall, _, final = selfplay(net, cfg, args.workers, args.learn_games, ray,
                                        sync=args.sync)
        ppg, hw = _strength(final.net, args.eval_games, 12345)
        rows.append((name, ppg, hw))
        print(f"{name:6s} {wall:7.1f} s ({rate:6.0f} games/s): {ppg:+.3f} +- {hw:.3f} ppg "
              f"vs PubEval")
    print(f"difference ray - local: {rows[1][1] - rows[0][1]:+.3f} ppg")
    _shutdown()


def part_nodes(args) -> None:
    from ray.cluster_utils import Cluster
    net = Network.load(ROOT / "models" / "backgammon.npz")
    cfg = TrainConfig(variant="backgammon", hidden=net.hidden, encoder=net.encoder.name,
                      eval_games=0, alpha=0.001, alpha_final=0.001, checkpoint_minutes=60)
    pos, _ = parse_position(CONTACT)
    search = Search.load("backgammon", threads=1)
    settings = RolloutSettings(trials=1296, truncate=7, seed=1)
    print(f"## simulated nodes of one CPU each (this machine has {os.cpu_count()} cores): "
          f"self-play {args.node_games:,} games a worker, a 1296-trial rollout truncated "
          f"at 7")
    for k in (1, 2, 4):
        env = {"env_vars": {"OMP_NUM_THREADS": "1", "NARDY_THREADS": "1"}}
        cluster = Cluster(initialize_head=True,
                          head_node_args={"num_cpus": 1, "include_dashboard": False})
        for _ in range(k - 1):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        import ray
        ray.init(address=cluster.address, runtime_env=env, logging_level="WARNING")
        nodes = len([n for n in ray.nodes() if n["Alive"]])
        rate, wall, tr, _ = selfplay(net, cfg, k, args.node_games * k, True,
                                     cluster.address, args.sync)
        per = tr.learner_seconds / max(tr.updates, 1)
        backend = RayBackend(workers=k)
        Rollout(search, RolloutSettings(trials=72, truncate=2), backend).position(pos)
        t = time.perf_counter()
        Rollout(search, settings, backend).position(pos)
        rt = time.perf_counter() - t
        print(f"nodes={nodes}: self-play {rate:7.1f} games/s ({rate / k:6.1f} a worker), "
              f"learner {1e3 * per:.2f} ms a batch of {args.sync} (ceiling "
              f"{args.sync / per:,.0f} games/s); rollout {rt:5.2f} s ({1296 / rt:5.0f} trials/s)")
        ray.shutdown()
        cluster.shutdown()


def _shutdown() -> None:
    import ray
    if ray.is_initialized():
        ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="speed,rollout,learn,nodes")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--games", type=int, default=20_000, help="games of the speed part")
    ap.add_argument("--sync", type=int, default=SYNC_GAMES, help="games between syncs")
    ap.add_argument("--learn-games", type=int, default=200_000)
    ap.add_argument("--eval-games", type=int, default=10_000)
    ap.add_argument("--node-games", type=int, default=3_000,
                    help="games a worker plays in the nodes part")
    args = ap.parse_args()
    parts = {"speed": part_speed, "rollout": part_rollout, "learn": part_learn,
             "nodes": part_nodes}
    unknown = [p for p in args.parts.split(",") if p not in parts]
    if unknown:
        ap.error(f"--parts {args.parts}: unknown part(s) {unknown}; expected some of "
                 f"{list(parts)}")
    try:
        import ray  # noqa: F401
    except ImportError:
        print("needs Ray: pip install -e '.[cluster]'", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores")
    for part in args.parts.split(","):
        parts[part](args)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
