"""What people read and write: GNU Backgammon Position/Match IDs (:mod:`.gnubg_id`),
XGID (:mod:`.xgid`), FIBS board strings (:mod:`.fibs`), move text such as
``24/18 13/11*`` (:mod:`.movetext`), the one reader of any position notation
(:mod:`.parse`) and the ASCII board (:mod:`.board`).

A new notation goes here. Imports: :mod:`engine.rules`, :mod:`engine.movegen`.
"""
