"""A Trainer subclass of a seq2seq project trained with fairscale's FullyShardedDataParallel
(`--sharded_ddp zero_dp_3`): `save_model` writes the weights from the world-process-zero only and
lets the others wait at a barrier.

Thread: https://github.com/huggingface/transformers/pull/10596 ("Fairscale FSDP fix model save")
Project: huggingface/transformers (Trainer with fairscale FSDP)
What hung: "training with fairscale fully-sharded wrapper was hanging: it looks like recent changes
in fairscale make a synchronization during the model state dict call, which results in the
training hanging if we don't call that state_dict method on all processes." `_save` calls
`self.model.state_dict()`, which for the FSDP wrapper gathers the shards -- on process zero only.
Fix (sgugger): "Gather state dict on all processes (because of the sync) but save it on process
zero": take `state_dict = self.model.state_dict()` on every process and pass it to `_save`.
Expected rankcheck finding: RC101 on the guarded `self._save(output_dir)`, which reaches the
fairscale FSDP `state_dict()`.
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
        if self.is_world_process_zero():
            self._save(output_dir)  # expect: RC101
        if self.args.local_rank != -1:
            dist.barrier()
