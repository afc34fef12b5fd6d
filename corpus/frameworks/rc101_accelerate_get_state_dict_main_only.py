"""Saving an FSDP model trained with accelerate: get_state_dict is called only on the main process,
but under FSDP (and DeepSpeed ZeRO-3) it all-gathers every shard (huggingface/accelerate#3250)."""
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
    if accelerator.is_main_process:
        state_dict = accelerator.get_state_dict(model)  # expect: RC101
        accelerator.save(state_dict, checkpoint_path)
