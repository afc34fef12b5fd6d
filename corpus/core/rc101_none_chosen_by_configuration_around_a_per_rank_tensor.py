"""Whether a value is None is decided by what chose the path, not by what the value holds:
ColossalChat's GRPO consumer computes `kl` from this rank's micro batch when the configured KL
coefficient is positive and sets it to None otherwise, then all-reduces it under `if kl is not
None:`. Every rank takes the same arm of the configuration test, so every rank reduces. The tensor
is per-rank data; that it exists is not.

The look-alike makes the value None on a test of this rank's own data (a non-finite value dropped
on the ranks that saw one): there the ranks part."""
import torch
import torch.distributed as dist


class GRPOConsumer:
    def __init__(self, beta, model, reference, sp_group):
        self.beta = beta
        self.model = model
        self.reference = reference
        self.sp_group = sp_group
        self.sp_size = dist.get_world_size(sp_group)
        self.sp_rank = dist.get_rank(sp_group)

    def fit(self, loader):
        for batch in loader:
            self.step(batch["input_ids"], batch["action_mask"])

    def step(self, input_ids, action_mask):
        # Sequence parallel: this rank's chunk of every sequence.
        chunk = input_ids.chunk(self.sp_size, dim=1)[self.sp_rank]
        mask = action_mask.chunk(self.sp_size, dim=1)[self.sp_rank]
        logp = self.model(chunk).log_softmax(-1)
        ref_logp = self.reference(chunk).log_softmax(-1)
        if self.beta > 0:
            per_token_kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1
            kl = torch.sum(per_token_kl * mask, dim=-1) / torch.sum(mask, dim=-1)
        else:
            kl = None
        loss = -(logp * mask).sum()
        loss.backward()
        if kl is not None:
            dist.all_reduce(kl.mean())
        z_loss = None if self.beta <= 0 else logp.logsumexp(-1).pow(2).mean()
        if z_loss is not None:
            dist.all_reduce(z_loss)


def lookalike_loop(model, loader):
    for batch in loader:
        loss = model(batch).sum()
        kl = loss.detach() * 0.1
        if torch.isnan(kl):
            kl = None
        if kl is not None:
            dist.all_reduce(kl)  # expect: RC101
        loss.backward()


def tool_images_step(model, prompts):
    # Each rank samples with its own seed: what the tools return differs per rank.
    completions = model.generate(prompts, seed=dist.get_rank())
    tool_images = [c.images for c in completions]
    images = None
    if any(tool_images):
        if images is None:
            images = [found if found else None for found in tool_images]
        else:
            images = [(existing or []) + found for existing, found in zip(images, tool_images)]
    if images is not None:
        dist.gather_object(images, None, dst=0)  # expect: RC101
