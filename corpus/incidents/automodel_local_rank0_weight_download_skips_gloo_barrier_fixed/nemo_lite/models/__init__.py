"""Auto-model front end and the registry of custom (non-HF) implementations."""
