"""The driver: what runs in what order and what is reused (discovery, summaries for many files,
the process pool, the parse-selection fixpoint, focus, the cache, the workspace)."""
