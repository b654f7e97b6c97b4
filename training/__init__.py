"""Training of the value networks: TD(lambda) self-play, then supervised training on
positions labelled by the engine's own search; see training/README.md."""

from pathlib import Path as _Path

from engine._jit import drop_stale_caches as _drop_stale_caches

# training's kernels compile in the engine's code: a change there empties this cache too
_drop_stale_caches(_Path(__file__).parent, _Path(__file__).parent.parent / "engine")
