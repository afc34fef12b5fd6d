"""The fix: every process calls load_checkpoint (it returns (None, None) when there is nothing)."""
import deepspeed
import torch


def maybe_resume(engine, ckpt_dir: str) -> int:
    load_path, client_state = engine.load_checkpoint(ckpt_dir)
    if load_path is None:
        return 0
    return client_state["step"]


def main(config: dict) -> None:
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 8), num_layers=4)
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    start = maybe_resume(engine, "ckpt")
    print(f"resuming from step {start}")
