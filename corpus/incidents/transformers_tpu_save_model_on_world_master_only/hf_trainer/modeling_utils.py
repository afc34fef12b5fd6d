"""PretrainedConfig / PreTrainedModel.save_pretrained of transformers 2.9 (trimmed to saving)."""
import json
import logging
import os

import torch
from torch import nn

logger = logging.getLogger(__name__)

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "pytorch_model.bin"


class PretrainedConfig:
    def __init__(self, **kwargs):
        self.xla_device = kwargs.pop("xla_device", False)
        for key, value in kwargs.items():
            setattr(self, key, value)

    def to_dict(self):
        return dict(self.__dict__)

    def save_pretrained(self, save_directory):
        assert os.path.isdir(save_directory), "Saving path should be a directory"
        with open(os.path.join(save_directory, CONFIG_NAME), "w", encoding="utf-8") as writer:
            writer.write(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")


class PreTrainedModel(nn.Module):
    config_class = PretrainedConfig

    def __init__(self, config):
        super().__init__()
        self.config = config

    def save_pretrained(self, save_directory):
        """Save a model and its configuration file to a directory, so that it
        can be re-loaded using the `from_pretrained` class method.
        """
        assert os.path.isdir(save_directory), "Saving path should be a directory where the model and configuration can be saved"

        # Only save the model itself if we are using distributed training
        model_to_save = self.module if hasattr(self, "module") else self

        # Attach architecture to the config
        model_to_save.config.architectures = [model_to_save.__class__.__name__]

        # If we save using the predefined names, we can load using `from_pretrained`
        output_model_file = os.path.join(save_directory, WEIGHTS_NAME)

        if getattr(self.config, "xla_device", False):
            import torch_xla.core.xla_model as xm

            if xm.is_master_ordinal():
                # Save configuration file
                model_to_save.config.save_pretrained(save_directory)
            # xm.save takes care of saving only from master
            xm.save(model_to_save.state_dict(), output_model_file)
        else:
            model_to_save.config.save_pretrained(save_directory)
            torch.save(model_to_save.state_dict(), output_model_file)

        logger.info("Model weights saved in {}".format(output_model_file))
