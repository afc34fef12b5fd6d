"""Per-rank parquet token stream (reconstruction of recpre/huggingface_dataset.py's ParquetStreamPure).

Each rank reads its own strided slice of the parquet files; the slice is planned for a later
expansion to 8 ranks, so the ranks do not get the same number of files (nor of rows).
"""
import glob
import os
import random

import pyarrow.parquet as pq
import torch
from torch.utils.data import IterableDataset


class ParquetStreamPure(IterableDataset):
    def __init__(self, dataset_folder_path, seed=1337, shuffle_filenames=True, num_processes=1,
                 process_rank=0, repetitions=None, stateful=True, block_size=2048,
                 plan_for_later_rank_expansion_to=8):
        self.process_rank = process_rank
        parquet_files = sorted(glob.glob(os.path.join(dataset_folder_path, "*.parquet")))
        if shuffle_filenames:
            random.Random(seed).shuffle(parquet_files)
        stride = max(plan_for_later_rank_expansion_to, num_processes)
        self.parquet_files = parquet_files[process_rank::stride] if stride > 1 else parquet_files
        if not self.parquet_files:
            raise ValueError(f"Empty dataset on rank {process_rank}")
        self.repetitions = repetitions  # None: one pass over this rank's files, then stop
        self.stateful = stateful
        self.block_size = block_size
        self._state_init()

    def _state_init(self):
        self._state = {"file_idx": 0, "row_idx": 0, "epoch": 0}

    def __iter__(self):
        if not self.stateful:
            self._state_init()
        while True:
            while self._state["file_idx"] < len(self.parquet_files):
                table = pq.read_table(self.parquet_files[self._state["file_idx"]], columns=["input_ids"])
                rows = table.column("input_ids").to_pylist()
                while self._state["row_idx"] < len(rows):
                    ids = rows[self._state["row_idx"]][: self.block_size + 1]
                    self._state["row_idx"] += 1
                    yield torch.tensor(ids, dtype=torch.long)
                self._state["file_idx"] += 1
                self._state["row_idx"] = 0
            # the file list is used up: without repetitions the generator just returns
            self._state["epoch"] += 1
            if self.repetitions is None or self._state["epoch"] >= self.repetitions:
                return
            self._state["file_idx"] = 0
