"""A trimmed copy of RETURNN's PyTorch backend (rwth-i6/returnn, returnn/torch/*, November 2023):
the engine's train/eval loop, the distributed context and the TorchData-based data pipeline."""
