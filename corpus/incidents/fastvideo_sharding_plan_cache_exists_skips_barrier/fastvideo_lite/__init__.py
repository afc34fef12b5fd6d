"""Pieces of a FastVideo-style video diffusion training stack (distributed state, latent dataset)."""
