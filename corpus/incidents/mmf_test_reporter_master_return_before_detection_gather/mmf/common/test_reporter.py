"""TestReporter: collects per-batch predictions for a dataset split and writes them out at the end
(mmf/common/test_reporter.py before PR #922, trimmed)."""
import json
import logging
import os

from mmf.utils.distributed import gather_tensor, is_master

logger = logging.getLogger(__name__)

DEFAULT_CANDIDATE_FIELDS = ["id", "question_id", "image_id", "context_tokens", "captions", "scores"]


class TestReporter:
    def __init__(self, datasets, dataloaders, dataset_type="test", save_dir="./save", experiment_name="run"):
        self.datasets = datasets
        self.dataloaders = dataloaders
        self.dataset_type = dataset_type
        self.report_folder = os.path.join(save_dir, "reports", experiment_name)
        self.candidate_fields = DEFAULT_CANDIDATE_FIELDS
        self.current_index = -1
        self.current_dataset = None
        self.current_dataloader = None
        self.report = []
        if is_master():
            os.makedirs(self.report_folder, exist_ok=True)

    def next_dataset(self, flush_report=True):
        if self.current_index >= 0 and flush_report:
            self.flush_report()
        self.report = []
        self.current_index += 1
        if self.current_index >= len(self.datasets):
            return False
        self.current_dataset = self.datasets[self.current_index]
        self.current_dataloader = self.dataloaders[self.current_index]
        return True

    def get_dataloader(self):
        return self.current_dataloader

    def prepare_batch(self, batch):
        if hasattr(self.current_dataset, "prepare_batch"):
            batch = self.current_dataset.prepare_batch(batch)
        return batch

    def flush_report(self):
        if not is_master():
            return
        name = self.current_dataset.dataset_name
        filepath = os.path.join(self.report_folder, f"{name}_{self.dataset_type}.json")
        with open(filepath, "w") as f:
            json.dump(self.report, f)
        logger.info(f"Wrote predictions for {name} to {filepath}")

    def postprocess_dataset_report(self):
        if hasattr(self.current_dataset, "on_prediction_end"):
            self.report = self.current_dataset.on_prediction_end(self.report)

    def add_to_report(self, report, model, execute_on_master_only=True):
        for key in self.candidate_fields:
            report = self.reshape_and_gather(report, key)

        if execute_on_master_only and not is_master():
            return  # expect: RC102
        results = []

        if hasattr(self.current_dataset, "format_for_prediction"):
            results = self.current_dataset.format_for_prediction(report)

        if hasattr(model, "format_for_prediction"):
            results = model.format_for_prediction(results, report)
        elif hasattr(model.module, "format_for_prediction"):
            results = model.module.format_for_prediction(results, report)

        self.report = self.report + results

    def reshape_and_gather(self, report, key):
        if key in report:
            num_dims = report[key].dim()
            if num_dims == 1:
                report[key] = gather_tensor(report[key]).view(-1)
            elif num_dims >= 2:
                # Collect dims other than batch
                other_dims = report[key].size()[1:]
                report[key] = gather_tensor(report[key]).view(-1, *other_dims)

        return report
