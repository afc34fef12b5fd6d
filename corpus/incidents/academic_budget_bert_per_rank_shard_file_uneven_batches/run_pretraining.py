"""BERT pre-training on an academic budget (24h, 8 GPUs) with DeepSpeed: each epoch trains on one
hdf5 shard per worker, then synchronizes the workers and validates on the main process. Launched as
`deepspeed run_pretraining.py --dataset_path ... --deepspeed --deepspeed_config ds_config.json`.

Thread: https://github.com/deepspeedai/DeepSpeed/issues/2223 ("[BUG] Training hangs when each process
is trained on different number of batches", closed), reporting the hang of
IntelLabs/academic-budget-bert#26 ("The training process will get stuck after training for one
epoch") in that project's run_pretraining.py
Project: IntelLabs/academic-budget-bert (run_pretraining.py, pretraining/dataset/distributed_pretraining_dataset.py)
What hung: after IntelLabs/academic-budget-bert#23 removed the `global_rank = 0` override in
`_get_shard_file_index`, "different worker reading different shard, the total num of iteration for
each worker in an epoch is different. So at the end of an epoch, it has synchronization issue and
gets stuck" (#26). DeepSpeed#2223: "The root cause is -- each process trains on batches of different
size and its gets stuck during the `.step()` call on deepspeed engine object" (the `model.network.step()`
in `train`; e.g. "Rank = 2, Number of batches 8" while the other ranks have 4). "This issue
completely disappears, if same number of batches are provided to all the processes."
Fix: the thread's resolution -- the DeepSpeed maintainers: "The common practice with data parallel
training is for the gpus to process the same batch size. The hang you are experiencing is
unsurprising since imbalance in amount of work done by the gpus will break the tightly coordinated
synchronizations" -- is to give every process the same number of batches per epoch. The twin does
so by all-reducing (MIN) the per-worker batch count of the epoch's shard and stopping every worker
after that many batches (the mechanism is inferred; the thread gives no patch).
Expected rankcheck finding: RC103 on the `for batch_index_number, batch_index in enumerate(...)`
loop of `train` (the epoch function), whose trip count is the length of this worker's own shard
loader and whose body runs the DeepSpeed backward/step (gradient all-reduce).
Inferred: argument plumbing, the model wrapper, validation and checkpointing are reduced; the
scale-counter and time-budget logic of the real script are left out.
"""
import argparse
import logging
import time

import deepspeed
import torch
import torch.distributed as dist
from tqdm import tqdm
from transformers import BertConfig, BertForPreTraining

from pretraining.dataset.distributed_pretraining_dataset import PreTrainingDataset

logger = logging.getLogger(__name__)
global_step = 0
global_data_samples = 0


class BertPretrainingModel:
    def __init__(self, args):
        config = BertConfig.from_pretrained(args.model_config)
        self.model = BertForPreTraining(config)
        self.network, self.optimizer, _, self.lr_scheduler = deepspeed.initialize(
            args=args, model=self.model, model_parameters=self.model.parameters()
        )

    def forward(self, batch):
        input_ids, input_mask, segment_ids, nsp_labels, mlm_labels = batch
        mlm_labels = mlm_labels.masked_fill(mlm_labels == -1, -100)
        out = self.network(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids,
                           labels=mlm_labels, next_sentence_label=nsp_labels)
        return out.loss

    def train(self):
        self.network.train()


def pretrain_validation(args, model, index):
    if dist.get_rank() == 0:
        logger.info(f"Epoch {index}: validation is run on the main process by the eval script")


def train(args, index, model, pretrain_dataset_provider):
    global global_step, global_data_samples

    dataset_iterator, total_length = pretrain_dataset_provider.get_shard(index)
    current_data_sample_count = global_data_samples
    logger.info(f"worker-{dist.get_rank()}: begin epoch {index} shard_length {total_length}")
    pretrain_dataset_provider.prefetch_shard(index + 1)
    model.train()

    all_step_time = 0.0
    for batch_index_number, batch_index in enumerate(tqdm(dataset_iterator, smoothing=1)):  # expect: RC103
        if batch_index_number > args.max_steps_per_epoch:
            logger.info("Max steps per epochs reached. Resuming to next epoch ...")
            break
        step_start = time.time()
        batch = pretrain_dataset_provider.get_batch(batch_index)
        batch = tuple(t.to(args.device) for t in batch)
        total_loss = model.forward(batch)
        unscaled_loss = total_loss.item()
        current_data_sample_count += args.train_micro_batch_size_per_gpu * dist.get_world_size()

        model.network.backward(total_loss)
        if model.network.is_gradient_accumulation_boundary():
            model.network.step()
            global_step += 1
            if global_step % args.print_steps == 0 and dist.get_rank() == 0:
                logger.info(f"step={global_step}, loss={unscaled_loss:.4f}, samples={current_data_sample_count}")
        else:
            # Call DeepSpeed engine step on micro steps
            model.network.step()
        all_step_time += time.time() - step_start

    torch.cuda.synchronize()
    dist.barrier(model.network.data_parallel_group)
    pretrain_dataset_provider.release_shard(index)
    global_data_samples = current_data_sample_count
    pretrain_validation(args, model, index)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset_path", required=True)
    parser.add_argument("--model_config", default="bert-large-uncased")
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--train_micro_batch_size_per_gpu", type=int, default=32)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--num_epochs", type=int, default=16)
    parser.add_argument("--max_steps_per_epoch", type=int, default=1_000_000)
    parser.add_argument("--print_steps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def main():
    args = parse_args()
    deepspeed.init_distributed()
    torch.cuda.set_device(args.local_rank)
    args.device = torch.device("cuda", args.local_rank)
    model = BertPretrainingModel(args)
    pretrain_dataset_provider = PreTrainingDataset(args)
    for index in range(args.num_epochs):
        train(args, index, model, pretrain_dataset_provider)


if __name__ == "__main__":
    main()
