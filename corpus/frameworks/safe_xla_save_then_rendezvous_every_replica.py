"""The xm.save docstring form: every replica calls xm.save (master_only=True writes from the master
ordinal only; not a collective since torch_xla 2.1) and then joins the rendezvous."""
import torch_xla.core.xla_model as xm


def save_checkpoint(model, optimizer, path: str) -> None:
    xm.wait_device_ops()
    xm.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    xm.rendezvous("checkpoint_saved")
