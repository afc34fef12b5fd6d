"""The documented order: every process takes part in get_state_dict; accelerator.save writes once
(only on the main process), so it needs no guard at all."""
import torch
from accelerate import Accelerator, FullyShardedDataParallelPlugin
from torch.distributed.fsdp.fully_sharded_data_parallel import FullStateDictConfig


def build_accelerator() -> Accelerator:
    fsdp_plugin = FullyShardedDataParallelPlugin(
        state_dict_config=FullStateDictConfig(offload_to_cpu=True, rank0_only=True),
    )
    return Accelerator(fsdp_plugin=fsdp_plugin)


def main(checkpoint_path: str) -> None:
    accelerator = build_accelerator()
    model = torch.nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    # ... training ...
    accelerator.wait_for_everyone()
    state_dict = accelerator.get_state_dict(model)
    accelerator.save(state_dict, checkpoint_path)
    if accelerator.is_main_process:
        print(f"saved {len(state_dict)} tensors to {checkpoint_path}")
