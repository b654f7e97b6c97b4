"""The games themselves: the rules table of the six games (:mod:`.variants`), the
position seen from the side to move (:mod:`.position`, Position JSON), dice
(:mod:`.dice`), how a finished game scores (:mod:`.scoring`), the flat state layout the
kernels read (:mod:`._layout`) and the kernels' one random stream (:mod:`._rng`).

A rules change starts here and in ``docs/rules.md``. Imports: :mod:`engine.errors` and
:mod:`engine._jit` only; every other package builds on this one.
"""
