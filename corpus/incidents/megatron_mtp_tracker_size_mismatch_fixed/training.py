"""Per-iteration logging of the training loop: the tracker length counts the MTP layers, as the
router does."""
from moe_utils import track_moe_metrics


def training_log(config, loss_scale, iteration, writer):
    if config.num_moe_experts is not None:
        track_moe_metrics(loss_scale, iteration, writer, num_layers=config.num_layers + (config.mtp_num_layers or 0))
