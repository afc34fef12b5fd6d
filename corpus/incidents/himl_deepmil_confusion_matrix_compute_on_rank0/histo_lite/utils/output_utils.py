"""Validation and test outputs of DeepMIL models (histopathology/utils/output_utils.py): every rank
gathers the epoch results, then the global rank 0 writes the outputs table and the figures, for the
best validation epoch so far and for the test run."""
import logging
import shutil
from itertools import chain
from pathlib import Path
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence

import pandas as pd
import torch
import torch.distributed as dist
from ruamel.yaml import YAML
from torchmetrics import Metric

from .naming import MetricsKey, ModelKey, PlotOption, ResultsKey
from .plots_utils import DeepMILPlotsHandler

BatchResultsType = Dict[ResultsKey, Any]
EpochResultsType = List[BatchResultsType]
ResultsType = Dict[ResultsKey, List[Any]]

OUTPUTS_CSV_FILENAME = "test_output.csv"
VAL_OUTPUTS_SUBDIR = "val"
PREV_VAL_OUTPUTS_SUBDIR = "val_old"
TEST_OUTPUTS_SUBDIR = "test"


def gather_results(epoch_results: EpochResultsType) -> EpochResultsType:
    """Gather the per-batch results of all ranks (every rank must call this)."""
    if dist.is_available() and dist.is_initialized():
        world_size = dist.get_world_size()
        if world_size > 1:
            object_list: List[Optional[EpochResultsType]] = [None] * world_size
            dist.all_gather_object(object_list, epoch_results)
            epoch_results = list(chain(*object_list))  # type: ignore
    return epoch_results


def collate_results_on_cpu(epoch_results: EpochResultsType) -> ResultsType:
    results: ResultsType = {}
    for key in epoch_results[0].keys():
        values: List[Any] = []
        for batch_results in epoch_results:
            value = batch_results[key]
            if isinstance(value, torch.Tensor):
                value = value.detach().cpu()
                values.extend(value.tolist() if value.dim() > 0 else [value.item()])
            else:
                values.extend(value)
        results[key] = values
    return results


def save_outputs_csv(results: ResultsType, outputs_dir: Path) -> None:
    columns = [ResultsKey.SLIDE_ID, ResultsKey.TRUE_LABEL, ResultsKey.PRED_LABEL, ResultsKey.PROB]
    df = pd.DataFrame({key.value: results[key] for key in columns if key in results})
    df.to_csv(outputs_dir / OUTPUTS_CSV_FILENAME, index=False)


class OutputsPolicy:
    """When to save validation epoch outputs: at each new best value of the primary metric."""

    def __init__(self, outputs_root: Path, primary_val_metric: MetricsKey, maximise: bool) -> None:
        self.outputs_root = outputs_root
        self.primary_val_metric = primary_val_metric
        self.maximise = maximise
        self._best_metric_epoch = 0
        self._best_metric_value = float("-inf") if maximise else float("inf")
        if self.best_metric_file_path.exists():
            contents = YAML().load(self.best_metric_file_path)
            self._best_metric_epoch = contents["best_epoch"]
            self._best_metric_value = contents["best_value"]

    @property
    def best_metric_file_path(self) -> Path:
        return self.outputs_root / "best_val_metric.yml"

    def should_save_validation_outputs(self, metrics_dict: Mapping[MetricsKey, Metric], epoch: int,
                                       is_global_rank_zero: bool = True) -> bool:
        # The metric needs to be computed on all ranks to allow synchronisation
        metric_value = float(metrics_dict[self.primary_val_metric].compute())

        # Validation outputs and best metric should be saved only by the global rank-0 process
        if not is_global_rank_zero:
            return False
        is_best = metric_value > self._best_metric_value if self.maximise else metric_value < self._best_metric_value
        if is_best:
            self._best_metric_value = metric_value
            self._best_metric_epoch = epoch
            self.outputs_root.mkdir(parents=True, exist_ok=True)
            YAML().dump({"best_epoch": epoch, "best_value": metric_value,
                         "primary_metric": self.primary_val_metric.value}, self.best_metric_file_path)
        return is_best

    def should_save_test_outputs(self, is_global_rank_zero: bool = True) -> bool:
        return is_global_rank_zero


class DeepMILOutputsHandler:
    """Writes validation and test outputs for DeepMIL models."""

    def __init__(self, outputs_root: Path, n_classes: int, class_names: Optional[Sequence[str]],
                 primary_val_metric: MetricsKey, maximise: bool, val_plot_options: Collection[PlotOption],
                 test_plot_options: Collection[PlotOption]) -> None:
        self.outputs_root = outputs_root
        self.n_classes = n_classes
        self.class_names = list(class_names) if class_names else [str(i) for i in range(max(n_classes, 2))]
        self.outputs_policy = OutputsPolicy(outputs_root=outputs_root, primary_val_metric=primary_val_metric,
                                            maximise=maximise)
        self.val_plots_handler = DeepMILPlotsHandler(val_plot_options, class_names=self.class_names)
        self.test_plots_handler = DeepMILPlotsHandler(test_plot_options, class_names=self.class_names)

    @property
    def validation_outputs_dir(self) -> Path:
        return self.outputs_root / VAL_OUTPUTS_SUBDIR

    @property
    def previous_validation_outputs_dir(self) -> Path:
        return self.outputs_root / PREV_VAL_OUTPUTS_SUBDIR

    @property
    def test_outputs_dir(self) -> Path:
        return self.outputs_root / TEST_OUTPUTS_SUBDIR

    def _save_outputs(self, epoch_results: EpochResultsType, metrics_dict: Mapping[MetricsKey, Metric],
                      outputs_dir: Path, stage: ModelKey = ModelKey.VAL) -> None:
        """Render and save the outputs table and the figures of one stage."""
        results = collate_results_on_cpu(epoch_results)
        outputs_dir.mkdir(exist_ok=True, parents=True)
        save_outputs_csv(results, outputs_dir)
        plots_handler = self.val_plots_handler if stage == ModelKey.VAL else self.test_plots_handler
        plots_handler.save_plots(outputs_dir, results, stage, conf_matrix=metrics_dict[MetricsKey.CONF_MATRIX])

    def save_validation_outputs(self, epoch_results: EpochResultsType, metrics_dict: Mapping[MetricsKey, Metric],
                                epoch: int, is_global_rank_zero: bool = True) -> None:
        # All DDP processes must reach this point to allow synchronising epoch results
        gathered_epoch_results = gather_results(epoch_results)

        # Only global rank-0 process should actually render and save the outputs
        if self.outputs_policy.should_save_validation_outputs(metrics_dict, epoch, is_global_rank_zero):
            # move the previous best outputs aside so that a failed write cannot mix two epochs
            if self.validation_outputs_dir.exists():
                if self.previous_validation_outputs_dir.exists():
                    shutil.rmtree(self.previous_validation_outputs_dir)
                self.validation_outputs_dir.rename(self.previous_validation_outputs_dir)
            self._save_outputs(gathered_epoch_results, metrics_dict, self.validation_outputs_dir, ModelKey.VAL)  # expect: RC101
            if self.previous_validation_outputs_dir.exists():
                shutil.rmtree(self.previous_validation_outputs_dir)
            logging.info(f"Saved validation outputs of epoch {epoch} to {self.validation_outputs_dir}")

    def save_test_outputs(self, epoch_results: EpochResultsType, metrics_dict: Mapping[MetricsKey, Metric],
                          is_global_rank_zero: bool = True) -> None:
        # All DDP processes must reach this point to allow synchronising epoch results
        gathered_epoch_results = gather_results(epoch_results)

        # Only global rank-0 process should actually render and save the outputs
        if self.outputs_policy.should_save_test_outputs(is_global_rank_zero):
            self._save_outputs(gathered_epoch_results, metrics_dict, self.test_outputs_dir, ModelKey.TEST)  # expect: RC101
