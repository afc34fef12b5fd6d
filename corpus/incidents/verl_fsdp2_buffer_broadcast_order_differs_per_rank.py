"""SFT of a Gemma-4-style model with FSDP2 (fully_shard) the way verl's FSDP workers initialize it:
rank 0 loads the Hugging Face weights on CPU, the other ranks build the model on the meta device,
the full state dict is broadcast from rank 0 into the sharded model, and the non-persistent buffers
(rotary inv_freq, which are not in the state dict) are broadcast by hand.

Thread: https://github.com/verl-project/verl/pull/6405 ("[fsdp] fix: sort buffers in
fsdp2_load_full_state_dict to prevent NCCL deadlock with heterogeneous buffers", merged as
8ebf167; fixes verl#6365)
Project: verl-project/verl (verl/utils/fsdp_utils.py, fsdp2_load_full_state_dict)
What hung: initialization of Gemma4-26B-A4B with FSDP2 on 8 GPUs hung indefinitely at the buffer
broadcast. Gemma4 has rotary buffers of different sizes (full attention inv_freq 256 elements,
sliding attention 128), and "after FSDP2 wrapping, `model.named_buffers()` iteration order is
non-deterministic across ranks": rank 0 broadcast layer 0's 128-element buffer while rank 1 took
part with layer 1's 256-element one -- the same broadcast call with a different size on each rank.
Fix (merged): sort the buffers by name before broadcasting, so every rank walks them in the same
order and each broadcast carries the same buffer everywhere.
Expected rankcheck finding: RC104 on the `dist.broadcast(buf, src=0)` in the buffer loop, a
collective whose tensor (and so its size) is taken from a per-rank iteration order.
Inferred: the SFT data pipeline, the loss and the optimizer setup are written for this
reconstruction; the model is loaded through AutoModelForCausalLM, and why the order differs per rank
is the PR's statement, not something the thread shows in code.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", required=True)
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--max_length", type=int, default=2048)
    parser.add_argument("--micro_batch_size", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--param_offload", action="store_true")
    parser.add_argument("--save_dir", default="checkpoints/sft")
    return parser.parse_args()


class SFTDataset(Dataset):
    def __init__(self, path, tokenizer, max_length):
        self.rows = [json.loads(line) for line in open(path)]
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        row = self.rows[idx]
        prompt = self.tokenizer.apply_chat_template([{"role": "user", "content": row["prompt"]}],
                                                    tokenize=False, add_generation_prompt=True)
        prompt_ids = self.tokenizer(prompt, add_special_tokens=False).input_ids
        response_ids = self.tokenizer(row["response"] + self.tokenizer.eos_token, add_special_tokens=False).input_ids
        ids = (prompt_ids + response_ids)[: self.max_length]
        loss_mask = ([0] * len(prompt_ids) + [1] * len(response_ids))[: self.max_length]
        pad = self.max_length - len(ids)
        return {
            "input_ids": torch.tensor(ids + [self.tokenizer.pad_token_id] * pad),
            "attention_mask": torch.tensor([1] * len(ids) + [0] * pad),
            "loss_mask": torch.tensor(loss_mask + [0] * pad),
        }


def fsdp2_load_full_state_dict(model, full_state, cpu_offload=False):
    """Load the full state dict (present only on rank 0) into the sharded model."""
    device = torch.cuda.current_device()
    # to broadcast, the parameters need to be materialized on the GPU
    if dist.get_rank() == 0:
        model = model.to(device=device, non_blocking=True)
    else:
        model = model.to_empty(device=device)

    options = StateDictOptions(full_state_dict=True, cpu_offload=cpu_offload, broadcast_from_rank0=True)
    set_model_state_dict(model, full_state, options=options)

    # rotary_emb is not in the state dict, so its buffers are broadcast manually
    for name, buf in model.named_buffers():
        dist.broadcast(buf, src=0)  # expect: RC104

    if cpu_offload:
        model.to("cpu", non_blocking=True)
        for buf in model.buffers():
            buf.data = buf.data.to(device)
    return model


def build_model(args, mesh):
    config = AutoConfig.from_pretrained(args.model_path)
    if dist.get_rank() == 0:
        model = AutoModelForCausalLM.from_pretrained(args.model_path, torch_dtype=torch.float32)
        full_state = model.state_dict()
    else:
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
        full_state = {}

    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    offload = CPUOffloadPolicy() if args.param_offload else None
    kwargs = {"mesh": mesh, "mp_policy": mp_policy}
    if offload is not None:
        kwargs["offload_policy"] = offload
    for layer in model.model.layers:
        fully_shard(layer, **kwargs)
    fully_shard(model, **kwargs)

    model = fsdp2_load_full_state_dict(model, full_state, cpu_offload=args.param_offload)
    return model


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    mesh = init_device_mesh("cuda", (dist.get_world_size(),), mesh_dim_names=("fsdp",))

    tokenizer = AutoTokenizer.from_pretrained(args.model_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    model = build_model(args, mesh)
    model.gradient_checkpointing_enable()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)

    dataset = SFTDataset(args.train_file, tokenizer, args.max_length)
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=args.micro_batch_size, sampler=sampler, drop_last=True)

    model.train()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, batch in enumerate(loader):
            batch = {k: v.cuda() for k, v in batch.items()}
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            target = batch["input_ids"][:, 1:]
            nll = -logprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            mask = batch["loss_mask"][:, 1:].float()
            loss = (nll * mask).sum() / mask.sum().clamp_min(1.0)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            if dist.get_rank() == 0 and step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
