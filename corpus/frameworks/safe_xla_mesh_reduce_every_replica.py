"""The test_train_mp_mnist.py form: every replica mesh-reduces; xm.master_print prints once."""
import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


def test_loop(model, loader, device) -> float:
    correct = 0
    total = 0
    model.eval()
    for data, target in pl.MpDeviceLoader(loader, device):
        pred = model(data).argmax(1)
        correct += pred.eq(target).sum()
        total += data.size(0)
    accuracy = 100.0 * correct.item() / total
    accuracy = xm.mesh_reduce("test_accuracy", accuracy, np.mean)
    xm.master_print(f"accuracy={accuracy:.2f}")
    return accuracy


def _mp_fn(index, flags):
    device = torch_xla.device()
    model = torch.nn.Linear(784, 10).to(device)
    test_loop(model, flags["loader"], device)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=({"loader": None},))
