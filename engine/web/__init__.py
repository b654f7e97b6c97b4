"""The web board (``python -m engine.web``): play and analyse all six games in a
browser against the engine. Needs the optional extra ``web`` (starlette, uvicorn)."""
