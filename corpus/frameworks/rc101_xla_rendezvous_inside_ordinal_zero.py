"""Checkpointing on TPU: ordinal 0 writes and then calls xm.rendezvous inside its own branch; the
rendezvous is meant for every replica, so ordinal 0 waits for replicas that never arrive."""
import torch_xla.core.xla_model as xm


def save_checkpoint(model, optimizer, path: str) -> None:
    xm.wait_device_ops()
    if xm.get_ordinal() == 0:
        xm.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path, master_only=False)
        xm.rendezvous("checkpoint_saved")  # expect: RC101
