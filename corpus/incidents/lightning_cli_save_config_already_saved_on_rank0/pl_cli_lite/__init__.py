"""A trimmed copy of `pytorch_lightning/cli.py` as it stood in the first commits of
pytorch-lightning#14927 (September 2022, 1.8.0dev): the `LightningCLI` that parses the config,
instantiates the trainer, model and datamodule, and adds the `SaveConfigCallback`."""
from pl_cli_lite.cli import LightningCLI, SaveConfigCallback

__all__ = ["LightningCLI", "SaveConfigCallback"]
