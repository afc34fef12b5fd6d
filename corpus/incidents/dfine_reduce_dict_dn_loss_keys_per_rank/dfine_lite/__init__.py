"""A trimmed D-FINE training stack: detector with contrastive denoising, criterion, engine, distributed utils."""
