"""Enum names shared by the module, the outputs handler and the plots (histopathology/utils/naming.py)."""
from enum import Enum


class ModelKey(str, Enum):
    TRAIN = "train"
    VAL = "val"
    TEST = "test"


class MetricsKey(str, Enum):
    ACC = "accuracy"
    ACC_MACRO = "macro_accuracy"
    AUROC = "auroc"
    COHENKAPPA = "cohenkappa"
    CONF_MATRIX = "confusion_matrix"


class ResultsKey(str, Enum):
    SLIDE_ID = "slide_id"
    LOSS = "loss"
    PROB = "prob"
    CLASS_PROBS = "prob_class"
    PRED_LABEL = "pred_label"
    TRUE_LABEL = "true_label"
    BAG_ATTN = "bag_attn"


class PlotOption(Enum):
    HISTOGRAM = "histogram"
    CONFUSION_MATRIX = "confusion_matrix"
    TOP_BOTTOM_TILES = "top_bottom_tiles"
