"""Self-play speed with learning on: games/s for 1 and 2 workers (or --workers list).

    python benchmarks/selfplay_speed.py                     # 198-80, fresh weights
    python benchmarks/selfplay_speed.py --model runs/bg80/model.npz --games 4000

Fresh weights play longer, more random games than a trained network, so pass a trained
``--model`` for the figure that matters. Prints games/s, turns per game and the speed-up
of each worker count over one worker. Compilation is excluded (done before timing).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from engine.eval.network import Network  # noqa: E402
from training import checkpoint, td  # noqa: E402
from training.config import TrainConfig  # noqa: E402
from training.trainer import Trainer  # noqa: E402


def measure(net: Network, cfg: TrainConfig, workers: int, games: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        state = checkpoint.RunState(cfg, net.copy())
        trainer = Trainer(state, Path(tmp), workers)
        trainer.compile()
        t = time.perf_counter()
        final = trainer.run(games, quiet=True)
        dt = time.perf_counter() - t
        turns = final.stats[td.ST_TURNS] / max(final.stats[td.ST_GAMES], 1)
        return final.games / dt, turns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="trained model.npz (default: fresh 198-80 weights)")
    ap.add_argument("--hidden", type=int, default=80)
    ap.add_argument("--games", type=int, default=3000, help="games per worker in each measurement (2 workers: twice as many)")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    args = ap.parse_args()
    if args.model:
        net = Network.load(args.model)
    else:
        net = Network.create("backgammon", args.hidden, rng=np.random.default_rng(0))
    cfg = TrainConfig(variant=net.variant, hidden=net.hidden, eval_games=0,
                      alpha=0.01, alpha_final=0.01)
    print(f"network {net.sizes} ({'trained' if args.model else 'fresh'}), "
          f"{args.games} games per worker in each run, learning on")
    base = None
    for w in (int(x) for x in args.workers.split(",")):
        rate, turns = measure(net, cfg, w, args.games * w)
        base = base or rate
        print(f"workers={w}: {rate:8.1f} games/s  ({rate / w:7.1f} per worker, "
              f"{turns:.1f} turns/game, x{rate / base:.2f} vs 1 worker)")


if __name__ == "__main__":
    main()
