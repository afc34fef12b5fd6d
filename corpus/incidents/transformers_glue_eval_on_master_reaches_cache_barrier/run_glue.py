"""GLUE fine-tuning script launched with `python -m torch.distributed.launch --nproc_per_node=4`:
training runs on every process through DDP, evaluation only on the master process, and evaluation
loads its features through the same cache helper that pairs barriers across processes.

Thread: https://github.com/huggingface/transformers/pull/1081 ("Fix distributed barrier hang")
Project: huggingface/transformers (examples/run_glue.py, 2019)
What hung: "the evaluation is performed solely by the master process (cf L476: `if args.do_eval and
args.local_rank in [-1, 0]:`). During the evaluation, the process hangs/gets stucked at L290
(`torch.distributed.barrier()`)... the master process is waiting at L290 for his process friends who
already left the party without telling him".
Fix (the PR, merged): skip both cache barriers for the evaluation features (`and not evaluate`), so
the master-only evaluation issues no collective; this script is unchanged.
Expected rankcheck finding: RC101 on the `evaluate(...)` call inside the master-only evaluation block.
"""
import argparse
import logging

import torch
import torch.distributed
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler

from transformers import AdamW, BertConfig, BertForSequenceClassification, BertTokenizer

from glue_features import load_and_cache_examples

logger = logging.getLogger(__name__)


def train(args, train_dataset, model):
    sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    loader = DataLoader(train_dataset, sampler=sampler, batch_size=args.per_gpu_train_batch_size)
    optimizer = AdamW(model.parameters(), lr=args.learning_rate)
    if args.local_rank != -1:
        model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)
    model.train()
    for _ in range(int(args.num_train_epochs)):
        for batch in loader:
            batch = tuple(t.to(args.device) for t in batch)
            outputs = model(input_ids=batch[0], attention_mask=batch[1], token_type_ids=batch[2], labels=batch[3])
            outputs[0].backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            model.zero_grad()


def evaluate(args, model, tokenizer, prefix=""):
    eval_dataset = load_and_cache_examples(args, args.task_name, tokenizer, evaluate=True)
    loader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset), batch_size=args.eval_batch_size)
    model.eval()
    correct, total = 0, 0
    for batch in loader:
        batch = tuple(t.to(args.device) for t in batch)
        with torch.no_grad():
            logits = model(input_ids=batch[0], attention_mask=batch[1], token_type_ids=batch[2])[0]
        correct += (logits.argmax(-1) == batch[3]).sum().item()
        total += batch[3].numel()
    logger.info("***** Eval results %s ***** acc = %.4f", prefix, correct / max(total, 1))
    return {"acc": correct / max(total, 1)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--model_name_or_path", default="bert-base-uncased")
    parser.add_argument("--task_name", default="mrpc")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--do_train", action="store_true")
    parser.add_argument("--do_eval", action="store_true")
    parser.add_argument("--overwrite_cache", action="store_true")
    parser.add_argument("--per_gpu_train_batch_size", type=int, default=8)
    parser.add_argument("--eval_batch_size", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()

    if args.local_rank == -1:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")

    tokenizer = BertTokenizer.from_pretrained(args.model_name_or_path)
    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path, config=BertConfig.from_pretrained(args.model_name_or_path, num_labels=2))
    model.to(args.device)

    if args.do_train:
        train_dataset = load_and_cache_examples(args, args.task_name, tokenizer, evaluate=False)
        train(args, train_dataset, model)
        if args.local_rank in [-1, 0]:
            model.save_pretrained(args.output_dir)
            tokenizer.save_pretrained(args.output_dir)

    results = {}
    if args.do_eval and args.local_rank in [-1, 0]:
        for checkpoint in [args.output_dir]:
            model = BertForSequenceClassification.from_pretrained(checkpoint)
            model.to(args.device)
            result = evaluate(args, model, tokenizer, prefix=checkpoint)  # expect: RC101
            results.update(result)
    return results


if __name__ == "__main__":
    main()
