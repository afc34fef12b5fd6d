"""The fix: every stage runs eval_batch (it returns the loss broadcast to all stages); only the last
stage prints."""
import deepspeed
import torch
from deepspeed.pipe import PipelineModule


def build(ds_config: dict, num_stages: int):
    layers = [torch.nn.Linear(512, 512) for _ in range(8)]
    net = PipelineModule(layers=layers, num_stages=num_stages, loss_fn=torch.nn.MSELoss())
    engine, _, _, _ = deepspeed.initialize(model=net, model_parameters=[p for p in net.parameters() if p.requires_grad], config=ds_config)
    return engine


def train(ds_config: dict, train_iter, eval_iter, steps: int) -> None:
    engine = build(ds_config, num_stages=2)
    for step in range(steps):
        engine.train_batch(data_iter=train_iter)
        if step % 100 == 0:
            eval_loss = engine.eval_batch(data_iter=eval_iter)
            if engine.is_last_stage():
                print(f"step {step}: eval loss {eval_loss.item():.4f}")
