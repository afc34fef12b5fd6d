"""Fine-tuning helpers. The metrics here are already global (the evaluation set is scored on one
process), so all_reduce_metrics() only detaches them: the same name as pretrain/utils.py's, no
collective."""
import torch


def get_batch(batch_size: int, dim: int):
    return torch.randn(batch_size, dim), torch.randint(0, 4, (batch_size,))


def all_reduce_metrics(metrics: torch.Tensor) -> torch.Tensor:
    return metrics.detach().cpu()
