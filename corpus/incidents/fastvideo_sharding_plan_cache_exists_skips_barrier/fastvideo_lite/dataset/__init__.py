"""Latent/text-embedding datasets read from preprocessed Parquet files."""
