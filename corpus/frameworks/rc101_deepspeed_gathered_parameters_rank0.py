"""Exporting ZeRO-3 weights: only rank 0 enters deepspeed.zero.GatheredParameters, whose entry
all-gathers the partitioned parameters from every rank."""
import deepspeed
import torch
import torch.distributed as dist


def export_embeddings(engine, path: str) -> None:
    embedding = engine.module.embed_tokens
    if dist.get_rank() == 0:
        with deepspeed.zero.GatheredParameters(embedding.weight, modifier_rank=None):  # expect: RC101
            torch.save(embedding.weight.detach().cpu(), path)


def main(model: torch.nn.Module, ds_config: dict) -> None:
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    export_embeddings(engine, "embeddings.pt")
