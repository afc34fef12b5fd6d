"""Prediction loop of the MMF trainer (mmf/trainers/core/evaluation_loop.py, prediction part)."""
import logging
from abc import ABC

import torch
import tqdm

from mmf.common.report import Report

logger = logging.getLogger(__name__)


def to_device(batch, device):
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}


class TrainerEvaluationLoopMixin(ABC):
    def prediction_loop(self, reporter) -> None:
        loaded_batches = 0
        with torch.no_grad():
            self.model.eval()
            logger.info("Starting inference predictions")

            while reporter.next_dataset():
                dataloader = reporter.get_dataloader()
                dataloader = tqdm.tqdm(dataloader, disable=not self.use_tqdm)
                for batch in dataloader:
                    prepared_batch = reporter.prepare_batch(batch)
                    prepared_batch = to_device(prepared_batch, self.device)
                    loaded_batches += 1
                    with torch.cuda.amp.autocast(enabled=self.fp16):
                        model_output = self.model(prepared_batch)
                    report = Report(prepared_batch, model_output).detach()
                    reporter.add_to_report(report, self.model)

                reporter.postprocess_dataset_report()

            logger.info(f"Finished predicting. Loaded {loaded_batches}")
            self.model.train()
