"""The DeepSpeed docs' form: every rank enters GatheredParameters; only rank 0 writes inside it."""
import deepspeed
import torch
import torch.distributed as dist


def export_embeddings(engine, path: str) -> None:
    embedding = engine.module.embed_tokens
    with deepspeed.zero.GatheredParameters(embedding.weight, modifier_rank=None):
        if dist.get_rank() == 0:
            torch.save(embedding.weight.detach().cpu(), path)


def main(model: torch.nn.Module, ds_config: dict) -> None:
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    export_embeddings(engine, "embeddings.pt")
