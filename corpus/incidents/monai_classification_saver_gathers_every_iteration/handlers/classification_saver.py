"""Event handler that saves classification predictions as a CSV file (monai.handlers at v0.5.0).

Thread: https://github.com/Project-MONAI/MONAI/issues/2095 ("ClassificationSaver can't work if ranks have different iterations"); fixed by https://github.com/Project-MONAI/MONAI/pull/2096
Project: Project-MONAI/MONAI (monai/handlers/classification_saver.py, on pytorch-ignite engines)
What hung: "Currently, if the ranks have different iteration number, it will hang when it try to
`all_gather` info from ranks." The handler is attached to `Events.ITERATION_COMPLETED` and
all-gathers the batch's filenames and predictions at every iteration; distributed evaluation with
MONAI's `DistributedSampler(even_divisible=False)` (exact metrics, no duplicated samples) gives
the ranks different numbers of batches, so the rank with one batch more all-gathers alone at its
last iteration while the others have left `engine.run` (the PR's test: "rank 1 has more
iterations").
Fix (#2096, merged, by the maintainer who reported it): `__call__` only collects the batch's
filenames and outputs locally; a new `_finalize` attached to `Events.EPOCH_COMPLETED` all-gathers
everything once and rank `save_rank` writes the CSV.
Expected rankcheck finding: RC103 on `evaluator.run(val_loader)` in `evaluate_ddp.py`: the ignite
engine's internal loop runs once per batch of the uneven per-rank loader and fires this handler's
all-gathers at every round (the loop is inside the framework call).
(Trimmed: overwrite/CSV re-loading, the `name`-based logger set-up.)
"""
import logging
from typing import Callable, Optional

import ignite.distributed as idist
from ignite.engine import Engine, Events
from monai.data import CSVSaver
from monai.utils import ImageMetaKey as Key

from handlers.utils import evenly_divisible_all_gather, string_list_all_gather


class ClassificationSaver:
    """Event handler triggered on completing every iteration to save the classification predictions
    as CSV file. If running in distributed data parallel, only saves CSV file in the specified rank."""

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
        self._expected_rank: bool = idist.get_rank() == save_rank
        self.saver = CSVSaver(output_dir, filename, overwrite)
        self.batch_transform = batch_transform
        self.output_transform = output_transform
        self.logger = logging.getLogger(name)
        self._name = name

    def attach(self, engine: Engine) -> None:
        if self._name is None:
            self.logger = engine.logger
        if not engine.has_event_handler(self, Events.ITERATION_COMPLETED):
            engine.add_event_handler(Events.ITERATION_COMPLETED, self)
        if self._expected_rank and not engine.has_event_handler(self.saver.finalize, Events.COMPLETED):
            engine.add_event_handler(Events.COMPLETED, lambda engine: self.saver.finalize())

    def __call__(self, engine: Engine) -> None:
        _meta_data = self.batch_transform(engine.state.batch)
        if Key.FILENAME_OR_OBJ in _meta_data:
            # all gather filenames across ranks, only filenames are necessary
            _meta_data = {Key.FILENAME_OR_OBJ: string_list_all_gather(_meta_data[Key.FILENAME_OR_OBJ])}
        # all gather predictions across ranks
        _engine_output = evenly_divisible_all_gather(self.output_transform(engine.state.output))

        if self._expected_rank:
            self.saver.save_batch(_engine_output, _meta_data)
