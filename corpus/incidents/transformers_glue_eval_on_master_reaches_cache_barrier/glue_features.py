"""Feature cache for the GLUE fine-tuning example (pytorch-transformers 1.x era): in distributed
training only the first process tokenizes the dataset and writes the cache; the others wait at a
barrier and read it afterwards. The evaluation set goes through the same function.

Thread: https://github.com/huggingface/transformers/pull/1081 ("Fix distributed barrier hang")
Project: huggingface/transformers (examples/run_glue.py, 2019; `load_and_cache_examples` lived in
run_glue.py and is split into its own module here, an arrangement of this reconstruction)
What hung: "During the evaluation, the process hangs/gets stucked at L290 (`torch.distributed.barrier()`).
It turns out that all the processes except the master one already exit at L476 and thus never enter
the symmetric `torch.distributed.barrier()` at L254-255." (issue #998: "More precisely it hangs on
line 280", the barrier under `if args.local_rank == 0:` after the cache is written)
Fix (the PR, merged): "Adding a `and not evaluate` condition both at L254 and L289" -- the barriers
are only for the training features, which every process loads.
Expected rankcheck finding: none in this module; RC101 in run_glue.py on the `evaluate(...)` call made
under `args.local_rank in [-1, 0]`, which reaches the rank-0 barrier below.
"""
import logging
import os

import torch
import torch.distributed
from torch.utils.data import TensorDataset

from transformers import glue_convert_examples_to_features, glue_output_modes, glue_processors

logger = logging.getLogger(__name__)


def load_and_cache_examples(args, task, tokenizer, evaluate=False):
    if args.local_rank not in [-1, 0]:
        # Wait until the first process has built the features and written the cache.
        torch.distributed.barrier()

    processor = glue_processors[task]()
    output_mode = glue_output_modes[task]
    split = "dev" if evaluate else "train"
    cached_features_file = os.path.join(
        args.data_dir,
        "cached_{}_{}_{}_{}".format(split, args.model_name_or_path.split("/")[-1], args.max_seq_length, task),
    )
    if os.path.exists(cached_features_file) and not args.overwrite_cache:
        logger.info("Loading features from cached file %s", cached_features_file)
        features = torch.load(cached_features_file)
    else:
        logger.info("Creating features from dataset file at %s", args.data_dir)
        label_list = processor.get_labels()
        examples = processor.get_dev_examples(args.data_dir) if evaluate else processor.get_train_examples(args.data_dir)
        features = glue_convert_examples_to_features(
            examples, tokenizer, label_list=label_list, max_length=args.max_seq_length, output_mode=output_mode
        )
        if args.local_rank in [-1, 0]:
            logger.info("Saving features into cached file %s", cached_features_file)
            torch.save(features, cached_features_file)

    if args.local_rank == 0:
        # The first process is done: release the others waiting above.
        torch.distributed.barrier()

    all_input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)
    all_attention_mask = torch.tensor([f.attention_mask for f in features], dtype=torch.long)
    all_token_type_ids = torch.tensor([f.token_type_ids for f in features], dtype=torch.long)
    label_dtype = torch.long if output_mode == "classification" else torch.float
    all_labels = torch.tensor([f.label for f in features], dtype=label_dtype)
    return TensorDataset(all_input_ids, all_attention_mask, all_token_type_ids, all_labels)
