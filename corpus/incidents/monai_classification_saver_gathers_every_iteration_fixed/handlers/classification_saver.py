"""Safe twin of monai_classification_saver_gathers_every_iteration: as in the merged fix of
MONAI#2096, `__call__` only collects each batch's filenames and predictions locally; `_finalize`,
attached to `Events.EPOCH_COMPLETED`, all-gathers them once per epoch -- reached once by every
rank whatever its number of iterations -- and the `save_rank` rank writes the CSV.

Thread: https://github.com/Project-MONAI/MONAI/issues/2095 (fix: https://github.com/Project-MONAI/MONAI/pull/2096)
"""
import logging
import warnings
from typing import Callable, List, Optional

import ignite.distributed as idist
import torch
from ignite.engine import Engine, Events
from monai.data import CSVSaver
from monai.utils import ImageMetaKey as Key
from monai.utils import issequenceiterable

from handlers.utils import evenly_divisible_all_gather, string_list_all_gather


class ClassificationSaver:
    """Event handler that collects the classification predictions of every iteration and saves them
    as CSV file at the end of the epoch, in the specified rank only."""

    def __init__(
        self,
        output_dir: str = "./",
        filename: str = "predictions.csv",
        overwrite: bool = True,
        batch_transform: Callable = lambda x: x,
        output_transform: Callable = lambda x: x,
        name: Optional[str] = None,
        save_rank: int = 0,
    ) -> None:
        self.save_rank = save_rank
        self.output_dir = output_dir
        self.filename = filename
        self.overwrite = overwrite
        self.batch_transform = batch_transform
        self.output_transform = output_transform
        self.logger = logging.getLogger(name)
        self._name = name
        self._outputs: List[torch.Tensor] = []
        self._filenames: List[str] = []

    def attach(self, engine: Engine) -> None:
        if self._name is None:
            self.logger = engine.logger
        if not engine.has_event_handler(self._started, Events.EPOCH_STARTED):
            engine.add_event_handler(Events.EPOCH_STARTED, self._started)
        if not engine.has_event_handler(self, Events.ITERATION_COMPLETED):
            engine.add_event_handler(Events.ITERATION_COMPLETED, self)
        if not engine.has_event_handler(self._finalize, Events.EPOCH_COMPLETED):
            engine.add_event_handler(Events.EPOCH_COMPLETED, self._finalize)

    def _started(self, engine: Engine) -> None:
        self._outputs = []
        self._filenames = []

    def __call__(self, engine: Engine) -> None:
        filenames = self.batch_transform(engine.state.batch).get(Key.FILENAME_OR_OBJ)
        if issequenceiterable(filenames):
            self._filenames.extend(filenames)
        outputs = self.output_transform(engine.state.output)
        if outputs is not None:
            self._outputs.append(outputs)

    def _finalize(self, engine: Engine) -> None:
        """All gather classification results from ranks and save to CSV file."""
        ws = idist.get_world_size()
        if self.save_rank >= ws:
            raise ValueError("target save rank is greater than the distributed group size.")

        outputs = torch.cat(self._outputs, dim=0)
        filenames = self._filenames
        if ws > 1:
            outputs = evenly_divisible_all_gather(outputs)
            filenames = string_list_all_gather(filenames)

        if len(filenames) == 0:
            meta_dict = None
        else:
            if len(filenames) != len(outputs):
                warnings.warn(f"filenames length: {len(filenames)} doesn't match outputs length: {len(outputs)}.")
            meta_dict = {Key.FILENAME_OR_OBJ: filenames}

        # save to CSV file only in the expected rank
        if idist.get_rank() == self.save_rank:
            saver = CSVSaver(self.output_dir, self.filename, self.overwrite)
            saver.save_batch(outputs, meta_dict)
            saver.finalize()
