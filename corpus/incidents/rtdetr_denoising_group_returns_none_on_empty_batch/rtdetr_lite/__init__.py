"""Pieces of an RT-DETR style detector: contrastive denoising queries and the query decoder."""
