"""EleutherAI `sae` (now `sparsify`): trains one top-k sparse autoencoder per transformer layer on
the residual stream of a frozen LM, with `torchrun` -- either DDP-replicated SAEs (default) or
`--distribute_layers`, where each rank owns a slice of the layers. Every `save_every` steps the
trainer writes the SAEs and synchronizes.

Thread: https://github.com/EleutherAI/sparsify/pull/5 ("Fix hang after calling `SaeTrainer.save()` w/ DDP")
Project: EleutherAI/sae (renamed EleutherAI/sparsify)
What hung: on 8xA100 with default arguments "the trainer hangs after saving--the layers are
successfully saved, but afterwards the trainer doesn't make progress and stays stuck on iteration
999. Running with `TORCH_DISTRIBUTED_DEBUG=DETAIL` [...] the trainer instead crashes with a process
desync exception, saying rank 0 is in a barrier while the others have moved on to reduce. [...] The
first `if` causes the other processes to leave the function immediately, so only rank 0 hits the
barrier." The others are in the next step's `maybe_all_reduce` of the FVU metric / the DDP
gradient all-reduce of the SAEs.
Fix (the PR, merged): drop the early return; only the writing is under
`if self.cfg.distribute_layers or not dist.is_initialized() or dist.get_rank() == 0:`, and every
rank reaches `dist.barrier()` (guarded by `dist.is_initialized()`).
Expected rankcheck finding: RC102 on the `return` of `save()` taken on ranks != 0 when layers are
not distributed (a rank test conjoined with a config flag), which skips the barrier rank 0 reaches.
(Trimmed: wandb logging, dead-latent AuxK loss, geometric-median init of the decoder bias, decoder
gradient projection, 8-bit Adam; the Sae module is reduced to its top-k forward. The dataset is cut
to a multiple of the world size before `shard`, as sparsify#94 later did for a separate hang, so
that the uneven last batch is not a second cause here.)
"""
import os
from dataclasses import dataclass, field
from typing import List, NamedTuple, Optional

import torch
import torch.distributed as dist
from datasets import load_dataset
from simple_parsing import parse
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup


@dataclass
class TrainConfig:
    model: str = "EleutherAI/pythia-160m"
    dataset: str = "togethercomputer/RedPajama-Data-1T-Sample"
    expansion_factor: int = 32
    k: int = 32
    batch_size: int = 8
    grad_acc_steps: int = 1
    lr: float = 2e-4
    lr_warmup_steps: int = 1000
    layers: List[int] = field(default_factory=list)
    distribute_layers: bool = False
    """Store a single copy of each SAE, instead of copying them across devices."""
    save_every: int = 1000
    run_name: Optional[str] = None
    max_length: int = 2048


class ForwardOutput(NamedTuple):
    fvu: Tensor
    latent_indices: Tensor


class Sae(nn.Module):
    def __init__(self, d_in: int, expansion_factor: int, k: int, device):
        super().__init__()
        d_sae = d_in * expansion_factor
        self.k = k
        self.encoder = nn.Linear(d_in, d_sae, device=device)
        self.W_dec = nn.Parameter(self.encoder.weight.data.clone())
        self.b_dec = nn.Parameter(torch.zeros(d_in, device=device))

    def forward(self, x: Tensor) -> ForwardOutput:
        pre_acts = torch.relu(self.encoder(x - self.b_dec))
        top_acts, top_indices = pre_acts.topk(self.k, sorted=False)
        buf = top_acts.new_zeros(top_acts.shape[:-1] + (self.W_dec.shape[0],))
        sae_out = buf.scatter_(-1, top_indices, top_acts) @ self.W_dec + self.b_dec
        e = sae_out - x
        total_variance = (x - x.mean(0)).pow(2).sum()
        return ForwardOutput(e.pow(2).sum() / total_variance, top_indices)

    def save_to_disk(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)
        torch.save(self.state_dict(), os.path.join(path, "sae.pt"))


class SaeTrainer:
    def __init__(self, cfg: TrainConfig, dataset, model):
        if not cfg.layers:
            cfg.layers = list(range(model.config.num_hidden_layers))
        self.cfg = cfg
        self.dataset = dataset
        self.distribute_layers()
        self.model = model
        device = model.device
        d_in = model.config.hidden_size
        self.saes = nn.ModuleList([Sae(d_in, cfg.expansion_factor, cfg.k, device) for _ in cfg.layers])
        self.optimizer = torch.optim.Adam(self.saes.parameters(), lr=cfg.lr)
        self.lr_scheduler = get_linear_schedule_with_warmup(
            self.optimizer, cfg.lr_warmup_steps, len(dataset) // cfg.batch_size)

    def distribute_layers(self):
        if not self.cfg.distribute_layers:
            self.layer_plan = {}
            return
        layers_per_rank, rem = divmod(len(self.cfg.layers), dist.get_world_size())
        assert rem == 0, "Number of layers must be divisible by world size"
        self.layer_plan = {
            rank: self.cfg.layers[start:start + layers_per_rank]
            for rank, start in enumerate(range(0, len(self.cfg.layers), layers_per_rank))
        }
        self.cfg.layers = self.layer_plan[dist.get_rank()]

    def maybe_all_reduce(self, x: Tensor) -> Tensor:
        if not dist.is_initialized() or self.cfg.distribute_layers:
            return x
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        return x / dist.get_world_size()

    def scatter_hiddens(self, hidden_list: List[Tensor]) -> List[Tensor]:
        outputs = [torch.stack([hidden_list[i] for i in layers], dim=1) for layers in self.layer_plan.values()]
        buffer = outputs[0].new_empty(
            hidden_list[0].shape[0] * dist.get_world_size(),
            len(self.layer_plan[dist.get_rank()]),
            *hidden_list[0].shape[1:],
        )
        inputs = buffer.split([len(output) for output in outputs])
        dist.all_to_all([x for x in inputs], outputs)
        return buffer.unbind(1)

    def fit(self):
        rank_zero = not dist.is_initialized() or dist.get_rank() == 0
        ddp = dist.is_initialized() and not self.cfg.distribute_layers
        device = self.model.device
        dl = DataLoader(self.dataset, batch_size=self.cfg.batch_size, shuffle=True)
        pbar = tqdm(dl, desc="Training", disable=not rank_zero)
        wrapped = [DDP(sae, device_ids=[dist.get_rank()]) for sae in self.saes] if ddp else list(self.saes)
        avg_fvu = torch.zeros(len(self.saes), device=device)

        for i, batch in enumerate(pbar):
            with torch.no_grad():
                hidden_list = self.model(batch["input_ids"].to(device), output_hidden_states=True).hidden_states[:-1]
                if self.layer_plan:
                    hidden_list = self.scatter_hiddens(hidden_list)
                else:
                    hidden_list = [hidden_list[layer] for layer in self.cfg.layers]

            for j, hiddens in enumerate(hidden_list):
                out = wrapped[j](hiddens.flatten(0, 1))
                avg_fvu[j] += self.maybe_all_reduce(out.fvu.detach())
                out.fvu.div(self.cfg.grad_acc_steps).backward()
                torch.nn.utils.clip_grad_norm_(self.saes[j].parameters(), 1.0)

            step, substep = divmod(i + 1, self.cfg.grad_acc_steps)
            if substep == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.lr_scheduler.step()
                if rank_zero:
                    pbar.set_postfix(fvu=avg_fvu.mean().item())
                avg_fvu.zero_()
                if (step + 1) % self.cfg.save_every == 0:
                    self.save()

        self.save()
        pbar.close()

    def save(self):
        """Save the SAEs to disk."""
        if (dist.is_initialized() and dist.get_rank() != 0) and not self.cfg.distribute_layers:
            return  # expect: RC102

        for layer, sae in zip(self.cfg.layers, self.saes):
            print(f"Saving layer {layer}")
            path = self.cfg.run_name or "checkpoints"
            sae.save_to_disk(f"{path}/layer_{layer}")

        # Barrier to ensure all ranks have saved before continuing
        dist.barrier()


def load_artifacts(cfg: TrainConfig, rank: int):
    tokenizer = AutoTokenizer.from_pretrained(cfg.model)
    model = AutoModel.from_pretrained(cfg.model, device_map={"": f"cuda:{rank}"}, torch_dtype=torch.bfloat16)
    dataset = load_dataset(cfg.dataset, split="train", trust_remote_code=True)
    dataset = dataset.map(lambda ex: tokenizer(ex["text"], truncation=True, max_length=cfg.max_length,
                                               padding="max_length"), batched=True, remove_columns=["text", "meta"])
    return model, dataset.with_format("torch")


def run():
    local_rank = os.environ.get("LOCAL_RANK")
    ddp = local_rank is not None
    rank = int(local_rank) if ddp else 0
    if ddp:
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl")
    cfg = parse(TrainConfig)

    # Awkward hack to prevent other ranks from duplicating data preprocessing
    if not ddp or rank == 0:
        model, dataset = load_artifacts(cfg, rank)
    if ddp:
        dist.barrier()
        if rank != 0:
            model, dataset = load_artifacts(cfg, rank)
        # drop the remainder so that every rank gets the same number of rows
        dataset = dataset.select(range(len(dataset) - len(dataset) % dist.get_world_size()))
        dataset = dataset.shard(dist.get_world_size(), rank)
    SaeTrainer(cfg, dataset, model).fit()


if __name__ == "__main__":
    run()
