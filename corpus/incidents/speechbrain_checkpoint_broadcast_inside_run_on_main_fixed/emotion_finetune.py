"""Safe twin of speechbrain_checkpoint_broadcast_inside_run_on_main: the recipe is unchanged; as in
speechbrain#2404 the checkpointer agrees on its directory through `ddp_broadcast`, which skips the
collective when it runs inside `run_on_main`'s main-process-only section.

Thread: https://github.com/speechbrain/speechbrain/issues/2401 (fix: speechbrain#2404)
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
            run_on_main(
                self.checkpointer.save_and_keep_only,
                kwargs={"meta": dict(stats), "max_keys": ["accuracy"], "num_to_keep": 1},
            )
            print("Saved checkpoint")
