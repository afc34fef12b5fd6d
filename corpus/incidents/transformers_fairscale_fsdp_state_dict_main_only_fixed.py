"""Safe twin of transformers_fairscale_fsdp_state_dict_main_only.py: every process takes the FSDP
`state_dict()` (it synchronizes the shards); process zero alone writes it.

Thread: https://github.com/huggingface/transformers/pull/10596
"""
import os

import torch
import torch.distributed as dist
from fairscale.nn.data_parallel import FullyShardedDataParallel
from transformers import Seq2SeqTrainer


class ShardedSeq2SeqTrainer(Seq2SeqTrainer):
    def _wrap_model(self, model, training=True, dataloader=None):
        if not isinstance(model, FullyShardedDataParallel):
            model = FullyShardedDataParallel(model, reshard_after_forward=True, mixed_precision=self.args.fp16)
        return model

    def _save(self, output_dir=None, state_dict=None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        if state_dict is None:
            state_dict = self.model.state_dict()
        torch.save(state_dict, os.path.join(output_dir, "pytorch_model.bin"))
        if self.tokenizer is not None:
            self.tokenizer.save_pretrained(output_dir)
        torch.save(self.args, os.path.join(output_dir, "training_args.bin"))

    def save_model(self, output_dir=None, _internal_call=False):
        state_dict = self.model.state_dict()
        if self.is_world_process_zero():
            self._save(output_dir, state_dict=state_dict)
        if self.args.local_rank != -1:
            dist.barrier()
