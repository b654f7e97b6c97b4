"""The command lines and the engine protocol: analysis (:mod:`.analyse`), cube advice
(:mod:`.cube`), a terminal game (:mod:`.play`), the JSON-lines protocol
(:mod:`.protocol`) and what they share (:mod:`._common`). Each runs as
``python -m engine.analyse``, ``engine.cube_cli``, ``engine.play``, ``engine.protocol``.

A new command goes here. Imports: any package of :mod:`engine`.
"""
