"""Safe twin of deepspeed_t5_sample_generate_zero3: sampling uses `synced_gpus=True`, so ranks that
finished keep running dummy forwards until every rank is done.

Thread: https://github.com/huggingface/transformers/issues/18281 ("T5 generate with do_sample doesn't work on DeepSpeed Stage 3")
Project: huggingface/transformers
"""
import argparse

import deepspeed
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoTokenizer, T5ForConditionalGeneration

PROBE_PROMPTS = [
    "summarize: local_rank for distributed training on gpus",
    "summarize: the quick brown fox jumps over the lazy dog",
]


def parse_args():
    parser = argparse.ArgumentParser(description="t5 zero3 finetune")
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--model_name", default="t5-large")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--sample_every", type=int, default=200)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def sample_outputs(engine, tokenizer, device):
    tokenizer.padding_side = "left"
    prompts = tokenizer(PROBE_PROMPTS, padding="longest", truncation=True, max_length=1024,
                        return_tensors="pt").to(device)
    tokenizer.padding_side = "right"
    engine.eval()
    with torch.no_grad():
        gen = engine.module.generate(
            prompts.input_ids,
            attention_mask=prompts.attention_mask,
            max_length=128,
            do_sample=True,
            synced_gpus=True,
        )
    engine.train()
    return tokenizer.batch_decode(gen, skip_special_tokens=True)


def main(train_dataset, collate):
    args = parse_args()
    deepspeed.init_distributed()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = T5ForConditionalGeneration.from_pretrained(args.model_name)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, args=args)
    device = torch.device("cuda", args.local_rank)

    sampler = DistributedSampler(train_dataset)
    loader = DataLoader(train_dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate)
    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = engine(**batch).loss
            engine.backward(loss)
            engine.step()
            step += 1
            if step % args.sample_every == 0:
                texts = sample_outputs(engine, tokenizer, device)
                if args.local_rank == 0:
                    print(f"step {step} loss {loss.item():.4f} samples {texts}")


if __name__ == "__main__":
    main(None, None)
