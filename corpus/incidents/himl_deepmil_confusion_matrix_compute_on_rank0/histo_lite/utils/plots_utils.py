"""Figures written with the validation and test outputs (histopathology/utils/plots_utils.py)."""
import logging
from pathlib import Path
from typing import Any, Collection, Dict, List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from torchmetrics import ConfusionMatrix  # noqa: E402

from .naming import ModelKey, PlotOption, ResultsKey  # noqa: E402

ResultsType = Dict[ResultsKey, List[Any]]


def save_figure(fig, figpath: Path) -> None:
    fig.savefig(figpath, bbox_inches="tight")
    plt.close(fig)


def save_scores_histogram(results: ResultsType, figures_dir: Path) -> None:
    fig, ax = plt.subplots()
    true = np.asarray(results[ResultsKey.TRUE_LABEL]).reshape(-1)
    probs = np.asarray(results[ResultsKey.PROB]).reshape(len(true), -1).max(axis=1)
    for label in np.unique(true):
        ax.hist(probs[true == label], bins=20, alpha=0.5, label=f"label {label}")
    ax.legend()
    save_figure(fig, figures_dir / "hist_scores.png")


def plot_normalized_confusion_matrix(cm: np.ndarray, class_names: Sequence[str]):
    fig, ax = plt.subplots(figsize=(1.2 * len(class_names) + 2, 1.2 * len(class_names) + 2))
    ax.imshow(cm, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(class_names)), labels=class_names, rotation=45)
    ax.set_yticks(range(len(class_names)), labels=class_names)
    for i in range(cm.shape[0]):
        for j in range(cm.shape[1]):
            ax.text(j, i, f"{cm[i, j]:.2f}", ha="center", va="center")
    ax.set_xlabel("Predicted")
    ax.set_ylabel("True")
    return fig


def save_confusion_matrix(conf_matrix_metric: ConfusionMatrix, class_names: Sequence[str], figures_dir: Path,
                          stage: ModelKey) -> None:
    """Plots and saves the normalized confusion matrix of the epoch's metric."""
    logging.info("Computing and saving confusion matrix...")
    cf_matrix = conf_matrix_metric.compute().cpu().numpy()
    logging.info(f"{stage.value}/confusion matrix:\n{cf_matrix}")
    cf_matrix_n = cf_matrix / cf_matrix.sum(axis=1, keepdims=True)
    fig = plot_normalized_confusion_matrix(cm=cf_matrix_n, class_names=class_names)
    save_figure(fig=fig, figpath=figures_dir / "normalized_confusion_matrix.png")


class DeepMILPlotsHandler:
    def __init__(self, plot_options: Collection[PlotOption], class_names: Optional[Sequence[str]] = None):
        self.plot_options = set(plot_options)
        self.class_names = class_names

    def save_plots(self, outputs_dir: Path, results: ResultsType, stage: ModelKey,
                   conf_matrix: Optional[ConfusionMatrix] = None) -> None:
        """Plots and saves all selected plot options of this stage."""
        figures_dir = outputs_dir / "fig"
        figures_dir.mkdir(exist_ok=True, parents=True)
        if PlotOption.HISTOGRAM in self.plot_options:
            save_scores_histogram(results=results, figures_dir=figures_dir)
        if PlotOption.CONFUSION_MATRIX in self.plot_options:
            assert self.class_names and conf_matrix is not None
            save_confusion_matrix(conf_matrix, class_names=self.class_names, figures_dir=figures_dir, stage=stage)
