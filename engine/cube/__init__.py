"""The doubling cube: match equity tables (:mod:`.met`, Kazaross-XG2 as data), cube
state, cubeful equities and decisions for money and match play (:mod:`.decision`) and
match equity tables computed from a gammon rate with that cube model
(:mod:`.computed_met`).

Imports: :mod:`engine.rules` only; the probabilities it reads are plain arrays.
"""
