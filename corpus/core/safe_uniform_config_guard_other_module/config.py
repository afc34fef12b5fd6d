"""Experiment constants: identical on every rank."""
SYNC_BN_STATS = True
LOG_EVERY = 10
EVAL_EVERY = 2
HIDDEN = 32
