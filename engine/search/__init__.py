"""The n-ply search (:mod:`.nply`): 0-3 ply with GNU Backgammon's move filters,
breadth first over one numba kernel, on the static evaluator of :mod:`engine.eval`; and
rollouts (:mod:`.rollout`) through the same kernel.

Imports: :mod:`engine.rules`, :mod:`engine.movegen`, :mod:`engine.notation`,
:mod:`engine.eval`, :mod:`engine.cube` (the cube decisions inside a cubeful rollout).
"""
