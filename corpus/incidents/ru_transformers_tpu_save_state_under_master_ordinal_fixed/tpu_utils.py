"""TPU helpers for the fine-tuning script: master-only logging and a save_pretrained that writes the
weights with `xm.save` (adapted from transformers/modeling_utils.py)."""
import logging
import os

import torch_xla.core.xla_model as xm
from transformers import WEIGHTS_NAME

logger = logging.getLogger(__name__)


def log_info(*args, **kwargs):
    if xm.is_master_ordinal():
        logger.info(*args, **kwargs)


# from transformers/modeling_utils.py, adapted to tpu
def save_pretrained(model, save_directory):
    """Save a model and its configuration file to a directory, so that it
    can be re-loaded using the `from_pretrained` class method.
    """
    assert os.path.isdir(save_directory), "Saving path should be a directory where the model and configuration can be saved"

    # Only save the model it-self if we are using distributed training
    model_to_save = model.module if hasattr(model, "module") else model

    # Save configuration file
    if xm.is_master_ordinal():
        model_to_save.config.save_pretrained(save_directory)

    # If we save using the predefined names, we can load using `from_pretrained`
    output_model_file = os.path.join(save_directory, WEIGHTS_NAME)

    # xm.save moves the tensors to CPU, writes them on the master ordinal and meets the other ordinals
    # in xm.rendezvous('torch_xla.core.xla_model.save')
    xm.save(model_to_save.state_dict(), output_model_file)
    log_info(f"Model weights saved in {output_model_file}")
