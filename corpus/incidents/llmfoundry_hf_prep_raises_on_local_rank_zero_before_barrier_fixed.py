"""Fixed twin of llmfoundry_hf_prep_raises_on_local_rank_zero_before_barrier: the preparation is
wrapped in try/except so local rank 0 always writes the signal file and reaches the barrier; the
error is re-raised afterwards.
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

        error: Optional[Exception] = None
        filtered = None
        try:
            if os.path.isdir(dataset_name):
                data_files = [os.path.join(dataset_name, f) for f in os.listdir(dataset_name)]
                extensions = {os.path.splitext(f)[1] for f in data_files}
                if len(extensions) != 1 or not extensions <= set(SUPPORTED_EXTENSIONS):
                    raise NotImplementedError(
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
        except Exception as e:
            error = e

        # local rank 0 always tells the other ranks it is done (and whether it failed)
        if dist.get_local_rank() == 0:
            log.debug("Local rank 0 finished data prep")
            with open(signal_file_path, "wb") as f:
                f.write(b"local_rank0_completed_data_prep" if error is None else b"local_rank0_failed_data_prep")

        # all ranks sync up here, having completed (or abandoned) data processing
        dist.barrier()

        if dist.get_local_rank() == 0:
            os.remove(signal_file_path)
        if error is not None:
            raise error
        return filtered
