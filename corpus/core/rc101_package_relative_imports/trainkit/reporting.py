"""Logging helpers; log_epoch() averages the loss over ranks through a relative import of .reduce."""
import logging

from .reduce import mean_over_ranks

logger = logging.getLogger("trainkit")


def log_epoch(epoch: int, mean_loss: float) -> None:
    global_loss = mean_over_ranks(mean_loss)
    logger.info("epoch %d global loss %.4f", epoch, global_loss)
