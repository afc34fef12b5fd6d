"""Emotion-recognition recipe (wav2vec2 fine-tuning) on SpeechBrain: at the end of each validation
stage the recipe saves a checkpoint with `run_on_main(self.checkpointer.save_and_keep_only, ...)`.

Thread: https://github.com/speechbrain/speechbrain/issues/2401 ("Possible NCCL-level deadlock during
checkpointing": the freeze when end-of-epoch checkpoints are written from the main process only);
cause and fix in https://github.com/speechbrain/speechbrain/pull/2404 ("Make a ddp broadcast clone
that handles main-process-only")
Project: speechbrain/speechbrain
What hung: "Checkpointing with DDP uses a torch.distributed broadcast to communicate the folder for
saving to all procs. However, this broadcast causes a freeze if checkpointing is called in a
main-process-only section of the code." `run_on_main` runs the save on the main process only, whose
`broadcast_object_list` waits for processes that are sitting in `run_on_main`'s barrier.
Fix (the PR): a `ddp_broadcast` that knows when it runs inside a main-process-only section and then
skips the collective (the recipe is unchanged).
Expected rankcheck finding: RC101 on the `run_on_main(self.checkpointer.save_and_keep_only, ...)`
call, which runs a broadcast on the main process only.
"""
import speechbrain as sb
import torch

from distributed import run_on_main


class EmotionBrain(sb.Brain):
    def compute_forward(self, batch, stage):
        wavs, lens = batch.sig
        feats = self.modules.wav2vec2(wavs.to(self.device), lens.to(self.device))
        return self.hparams.log_softmax(self.modules.output_mlp(self.hparams.avg_pool(feats, lens)))

    def compute_objectives(self, predictions, batch, stage):
        emo, _ = batch.emo_encoded
        loss = self.hparams.compute_cost(predictions, emo.to(self.device))
        if stage != sb.Stage.TRAIN:
            self.error_metrics.append(batch.id, predictions, emo)
        return loss

    def on_stage_end(self, stage, stage_loss, epoch=None):
        stats = {"loss": stage_loss}
        if stage == sb.Stage.VALID:
            stats["accuracy"] = 1 - self.error_metrics.summarize("average")
            old_lr, new_lr = self.hparams.lr_annealing(1 - stats["accuracy"])
            sb.nnet.schedulers.update_learning_rate(self.optimizer, new_lr)
            self.hparams.train_logger.log_stats(stats_meta={"epoch": epoch, "lr": old_lr}, valid_stats=stats)
            run_on_main(  # expect: RC101
                self.checkpointer.save_and_keep_only,
                kwargs={"meta": dict(stats), "max_keys": ["accuracy"], "num_to_keep": 1},
            )
            print("Saved checkpoint")
