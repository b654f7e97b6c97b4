"""Self-play TD(lambda) training of the value network; see training/README.md."""
