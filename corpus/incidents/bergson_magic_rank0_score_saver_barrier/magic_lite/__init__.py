"""A trimmed MAGIC (metagradient data attribution) pipeline in the shape of EleutherAI/bergson."""
