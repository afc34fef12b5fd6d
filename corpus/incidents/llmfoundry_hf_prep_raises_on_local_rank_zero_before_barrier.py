"""Fine-tuning dataset builder of an LLM Foundry (Composer) run: local rank 0 tokenizes the Hugging
Face dataset first, the other ranks wait for its signal file and then read the cache, and all ranks
meet at a `dist.barrier()`.

Thread: https://github.com/mosaicml/llm-foundry/pull/749 ("Catch exception raised in hf prep properly")
Project: mosaicml/llm-foundry
What hung: "There is a barrier deadlock in `build_from_hf` if an Exception is raised ... the non
local rank 0 processes depend on a signal file to be written but if a rank 0 process raises an
exception then we never reach the `dist.barrier()` state resulting in a deadlock." Local rank 0
runs the preparation alone (the others are parked in `local_rank_zero_download_and_wait`), so an
exception there -- e.g. the unsupported-format error -- leaves every other rank waiting forever.
Fix (the merged PR): wrap the preparation in try/except so local rank 0 always writes the signal
file and reaches the barrier, then re-raise the error on every rank.
Expected rankcheck finding: RC102 on the `raise` taken by local rank 0 alone before the barrier.
"""
import logging
import os
from typing import Any, Callable, Dict, Optional

import datasets as hf_datasets
from composer.utils import dist
from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)
SUPPORTED_EXTENSIONS = [".csv", ".json", ".jsonl", ".parquet"]


def _tokenize_formatted_example(example: Dict[str, Any], tokenizer: PreTrainedTokenizerBase) -> Dict[str, Any]:
    return tokenizer(text=example["prompt"], text_target=example["response"])


class DatasetConstructor:
    def build_from_hf(
        self,
        dataset_name: str,
        split: str,
        max_seq_len: int,
        preprocessing_fn: Optional[Callable[[Dict[str, Any]], Dict[str, str]]],
        tokenizer: PreTrainedTokenizerBase,
        hf_kwargs: Dict[str, Any],
    ) -> hf_datasets.Dataset:
        signal_file_path = f".node_{dist.get_node_rank()}_local_rank0_data_prep_completed"

        # non local-rank-0 processes wait here until local rank 0 has cached the dataset
        if dist.get_local_rank() != 0:
            log.debug("Waiting for local_rank 0 to finish data prep")
            with dist.local_rank_zero_download_and_wait(signal_file_path):
                pass

        if os.path.isdir(dataset_name):
            data_files = [os.path.join(dataset_name, f) for f in os.listdir(dataset_name)]
            extensions = {os.path.splitext(f)[1] for f in data_files}
            if len(extensions) != 1 or not extensions <= set(SUPPORTED_EXTENSIONS):
                raise NotImplementedError(  # expect: RC102
                    f"Local dataset {dataset_name} must contain files of exactly one of the supported "
                    f"types {SUPPORTED_EXTENSIONS}, found {sorted(extensions)}"
                )
            dataset = hf_datasets.load_dataset(extensions.pop()[1:], data_files=data_files, split=split, **hf_kwargs)
        else:
            dataset = hf_datasets.load_dataset(dataset_name, split=split, **hf_kwargs)

        def dataset_mapper(example: Dict):
            if preprocessing_fn is not None:
                example = preprocessing_fn(example)
            return _tokenize_formatted_example(example, tokenizer)

        num_proc = max(1, min(8, (os.cpu_count() or 8) // max(1, dist.get_local_world_size())))
        tokenized = dataset.map(dataset_mapper, batched=False, remove_columns=dataset.column_names, num_proc=num_proc)
        filtered = tokenized.filter(lambda ex: len(ex["input_ids"]) < max_seq_len, num_proc=num_proc)

        # local rank 0 tells the other ranks that the cache is ready
        if dist.get_local_rank() == 0:
            log.debug("Local rank 0 finished data prep")
            with open(signal_file_path, "wb") as f:
                f.write(b"local_rank0_completed_data_prep")

        # all ranks sync up here, having completed data processing
        dist.barrier()

        if dist.get_local_rank() == 0:
            os.remove(signal_file_path)
        return filtered
