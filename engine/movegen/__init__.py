"""Move generation for all six games: the numba core (:mod:`._core`, one entry,
``generate_turn``), its typed, validating API (:mod:`.generate`: ``successors``,
``successor_arrays``, a gul bara cascade's layers), canonical keys of successor sets
(:mod:`.keys`) and the CPU's bit instructions the cascade walk uses (:mod:`._bits`).

Imports: :mod:`engine.rules` (and the base modules ``engine.errors``, ``engine._jit``).
"""
