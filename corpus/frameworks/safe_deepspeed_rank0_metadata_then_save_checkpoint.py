"""The fix: only the metadata file is rank-0 work; every process reaches engine.save_checkpoint."""
import json
import os

import deepspeed
import deepspeed.comm as dist
import torch


def save(engine, save_dir: str, step: int, metrics: dict) -> None:
    if dist.get_rank() == 0:
        os.makedirs(save_dir, exist_ok=True)
        with open(os.path.join(save_dir, "metrics.json"), "w") as f:
            json.dump(metrics, f)
    engine.save_checkpoint(save_dir, tag=f"global_step{step}")


def main(config: dict) -> None:
    model = torch.nn.Linear(1024, 1024)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    for step in range(100):
        loss = engine(torch.randn(8, 1024, device=engine.device)).float().pow(2).mean()
        engine.backward(loss)
        engine.step()
    save(engine, "ckpt", 100, {"loss": loss.item()})
