"""A trimmed copy of the parts of ESPnet3 (espnet/espnet, espnet3/components/*, summer 2026) and of
the espnet2 chunk iterator it reuses that a multi-GPU chunk-based training run goes through: the
LightningModule, the DataLoaderBuilder that shards batches over the ranks, and the
ChunkIterFactory that cuts each utterance into fixed-length chunks."""
