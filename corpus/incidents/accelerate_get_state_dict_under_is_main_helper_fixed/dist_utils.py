"""Small process helpers shared by the training scripts."""
import logging

from accelerate import PartialState

logger = logging.getLogger(__name__)


def is_main() -> bool:
    """True on the global main process only (rank 0 of the launch)."""
    return PartialState().is_main_process


def log_main(msg: str) -> None:
    if is_main():
        logger.info(msg)
