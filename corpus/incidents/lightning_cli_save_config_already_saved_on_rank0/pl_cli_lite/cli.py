"""LightningCLI and its SaveConfigCallback (pytorch_lightning/cli.py), reduced to the parts a
`run=False` script uses."""
import os
from typing import Any, Dict, Optional, Type

from jsonargparse import ActionConfigFile, ArgumentParser, Namespace
from pytorch_lightning import Callback, LightningDataModule, LightningModule, Trainer, seed_everything
from pytorch_lightning.utilities.cloud_io import get_filesystem


class SaveConfigCallback(Callback):
    """Saves a LightningCLI config to the log_dir when training starts.

    Raises:
        RuntimeError: If the config file already exists in the directory to avoid overwriting a
            previous run
    """

    def __init__(self, parser: ArgumentParser, config: Namespace, config_filename: str = "config.yaml",
                 overwrite: bool = False, multifile: bool = False) -> None:
        self.parser = parser
        self.config = config
        self.config_filename = config_filename
        self.overwrite = overwrite
        self.multifile = multifile
        self.already_saved = False

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: Optional[str] = None) -> None:
        if self.already_saved:
            return  # expect: RC102

        log_dir = trainer.log_dir  # this broadcasts the directory
        assert log_dir is not None
        config_path = os.path.join(log_dir, self.config_filename)
        fs = get_filesystem(log_dir)

        if not self.overwrite:
            # check if the file exists on rank 0
            file_exists = fs.isfile(config_path) if trainer.is_global_zero else False
            # broadcast whether to fail to all ranks
            file_exists = trainer.strategy.broadcast(file_exists)
            if file_exists:
                raise RuntimeError(
                    f"{self.__class__.__name__} expected {config_path} to NOT exist. Aborting to avoid"
                    " overwriting results of a previous run. You can delete the previous config file,"
                    " set `LightningCLI(save_config_callback=None)` to disable config saving,"
                    " or set `LightningCLI(save_config_overwrite=True)` to overwrite the config file."
                )

        # save the file on rank 0
        if trainer.is_global_zero:
            # save only on rank zero to avoid race conditions.
            # the `log_dir` needs to be created as we rely on the logger to do it usually
            # but it hasn't logged anything at this point
            fs.makedirs(log_dir, exist_ok=True)
            self.parser.save(
                self.config, config_path, skip_none=False, overwrite=self.overwrite, multifile=self.multifile
            )
            self.already_saved = True


class LightningCLI:
    """Implementation of a configurable command line tool for pytorch-lightning (`run=False` path:
    the caller runs `cli.trainer.fit(...)`/`cli.trainer.test(...)` itself)."""

    def __init__(self, model_class: Type[LightningModule], datamodule_class: Type[LightningDataModule],
                 save_config_callback: Optional[Type[SaveConfigCallback]] = SaveConfigCallback,
                 save_config_filename: str = "config.yaml", save_config_overwrite: bool = False,
                 trainer_defaults: Optional[Dict[str, Any]] = None,
                 seed_everything_default: Optional[int] = None, run: bool = False) -> None:
        assert not run, "this trimmed copy only supports run=False"
        self.save_config_callback = save_config_callback
        self.save_config_filename = save_config_filename
        self.save_config_overwrite = save_config_overwrite
        self.trainer_defaults = trainer_defaults or {}

        self.parser = ArgumentParser(description="pytorch-lightning trainer command line tool")
        self.parser.add_argument("--config", action=ActionConfigFile)
        self.parser.add_argument("--seed_everything", type=Optional[int], default=seed_everything_default)
        # the trainer is not instantiated by the parser: the callbacks are added to its arguments
        self.parser.add_class_arguments(Trainer, "trainer", fail_untyped=False, instantiate=False)
        self.parser.set_defaults({f"trainer.{k}": v for k, v in self.trainer_defaults.items()})
        self.parser.add_class_arguments(model_class, "model", fail_untyped=False)
        self.parser.add_class_arguments(datamodule_class, "data", fail_untyped=False)
        self.config = self.parser.parse_args()

        if self.config.seed_everything is not None:
            seed_everything(self.config.seed_everything, workers=True)
        self.config_init = self.parser.instantiate_classes(self.config)
        self.datamodule = self.config_init["data"]
        self.model = self.config_init["model"]
        self.trainer = self.instantiate_trainer()

    def instantiate_trainer(self) -> Trainer:
        config = dict(self.config_init["trainer"])
        callbacks = list(config.pop("callbacks", None) or [])
        if self.save_config_callback:
            config_callback = self.save_config_callback(
                self.parser, self.config, self.save_config_filename, overwrite=self.save_config_overwrite
            )
            callbacks.append(config_callback)
        return Trainer(**config, callbacks=callbacks)
