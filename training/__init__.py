"""Self-play TD(lambda) training of the value network; see training/README.md."""

from pathlib import Path as _Path

from engine._jit import drop_stale_caches as _drop_stale_caches

# training's kernels compile in the engine's code: a change there empties this cache too
_drop_stale_caches(_Path(__file__).parent, _Path(__file__).parent.parent / "engine")
