"""Speaker-independent dysarthric speech recognition recipe on SpeechBrain 0.5.x, run with DDP
(`torchrun --nproc_per_node 2 train.py hparams/train.yaml --distributed_launch`). The recipe's Brain
subclass copies `Brain.fit` to stop early with `EpochCounterWithStopper` once the validation loss
stops improving.

Thread: https://github.com/speechbrain/speechbrain/issues/1939 ("DDP with epochCounterWithStopper
leads to CUDA timeouts")
Project: speechbrain/speechbrain (speechbrain/core.py `Brain.fit`, speechbrain/utils/epoch_loop.py)
What hung: the reporter: "Watchdog caught collective operation timeout: WorkNCCL(... OpType=ALLREDUCE
...)" -- "the timeout occurs when one GPU hits a early stop while the other does not", with
`epoch_counter.should_stop()` placed in their `fit`. The maintainer (pplantinga, speechbrain#2051):
"`on_stage_end(stage==valid)` is only called on the main process, so the loop stops on the main
process but not the other processes." Here the validation loss the stopper reads (`self.valid_loss`)
is recorded in `on_stage_end`, which `fit` runs through `run_on_main`; the other processes keep the
initial `inf`, count no improvement, and leave the epoch loop on their own schedule while the main
process trains on: its next `fit_batch` backward (DDP all-reduce) waits for ranks that have left.
Fix (maintainer, speechbrain#2051 after #2059 landed): validation `on_stage_end` now runs on every
process ("now the `update_metrics()` gets called on all processes"), so every process sees the same
validation loss -- validation is not sharded, every process evaluates the whole set -- and stops at
the same epoch; only the checkpoint write stays on the main process.
Expected rankcheck finding: RC103 on the `for epoch in epoch_counter:` loop header: its trip count
is decided by a stopper fed a value set on the main process only.
(Trimmed: CTC/attention decoding, WER statistics, tokenizer, data preparation. Inferred: the
reporter's `fit` body beyond the `should_stop` call; it is the 0.5.x `fit` with the stopper added,
using the `epoch_counter.current = epoch_counter.limit` idiom of the stopper's docstring.)
"""
import sys

import speechbrain as sb
import torch
from hyperpyyaml import load_hyperpyyaml
from speechbrain.utils.distributed import run_on_main
from speechbrain.utils.epoch_loop import EpochCounterWithStopper
from tqdm import tqdm


class DysarthricASR(sb.Brain):
    def on_fit_start(self):
        super().on_fit_start()
        self.valid_loss = float("inf")

    def compute_forward(self, batch, stage):
        batch = batch.to(self.device)
        feats = self.hparams.compute_features(batch.sig[0])
        feats = self.modules.normalize(feats, batch.sig[1])
        return self.modules.model(feats), batch.sig[1]

    def compute_objectives(self, predictions, batch, stage):
        logits, wav_lens = predictions
        tokens, token_lens = batch.tokens
        log_probs = self.hparams.log_softmax(logits)
        return self.hparams.ctc_cost(log_probs, tokens, wav_lens, token_lens)

    def on_stage_end(self, stage, stage_loss, epoch):
        if stage == sb.Stage.TRAIN:
            self.train_loss = stage_loss
        elif stage == sb.Stage.VALID:
            self.valid_loss = stage_loss
            self.hparams.train_logger.log_stats({"epoch": epoch}, {"loss": self.train_loss}, {"loss": stage_loss})
            torch.save(self.modules.state_dict(), f"{self.hparams.save_folder}/model_epoch{epoch}.ckpt")

    def fit(self, epoch_counter, train_set, valid_set=None, progressbar=None,
            train_loader_kwargs={}, valid_loader_kwargs={}):
        train_set = self.make_dataloader(train_set, stage=sb.Stage.TRAIN, **train_loader_kwargs)
        valid_set = self.make_dataloader(valid_set, stage=sb.Stage.VALID, ckpt_prefix=None, **valid_loader_kwargs)
        self.on_fit_start()
        enable = progressbar and sb.utils.distributed.if_main_process()

        for epoch in epoch_counter:  # expect: RC103
            self.on_stage_start(sb.Stage.TRAIN, epoch)
            self.modules.train()
            self.avg_train_loss = 0.0
            for batch in tqdm(train_set, initial=self.step, dynamic_ncols=True, disable=not enable):
                self.step += 1
                loss = self.fit_batch(batch)
                self.avg_train_loss = self.update_average(loss, self.avg_train_loss)
            # Run train "on_stage_end" on all processes
            self.on_stage_end(sb.Stage.TRAIN, self.avg_train_loss, epoch)
            self.step = 0

            self.on_stage_start(sb.Stage.VALID, epoch)
            self.modules.eval()
            avg_valid_loss = 0.0
            with torch.no_grad():
                for batch in tqdm(valid_set, dynamic_ncols=True, disable=not enable):
                    self.step += 1
                    loss = self.evaluate_batch(batch, stage=sb.Stage.VALID)
                    avg_valid_loss = self.update_average(loss, avg_valid_loss)
                # Only run validation "on_stage_end" on main process
                self.step = 0
                run_on_main(self.on_stage_end, args=[sb.Stage.VALID, avg_valid_loss, epoch])

            if epoch_counter.should_stop(current=epoch, current_metric=self.valid_loss):
                epoch_counter.current = epoch_counter.limit  # skipping unpromising epochs


if __name__ == "__main__":
    hparams_file, run_opts, overrides = sb.parse_arguments(sys.argv[1:])
    with open(hparams_file) as fin:
        hparams = load_hyperpyyaml(fin, overrides)
    sb.utils.distributed.ddp_init_group(run_opts)
    epoch_counter = EpochCounterWithStopper(limit=hparams["number_of_epochs"], limit_to_stop=5,
                                            limit_warmup=2, direction="min")
    asr_brain = DysarthricASR(modules=hparams["modules"], opt_class=hparams["opt_class"],
                              hparams=hparams, run_opts=run_opts)
    asr_brain.fit(epoch_counter, hparams["train_data"], hparams["valid_data"],
                  train_loader_kwargs=hparams["train_dataloader_opts"],
                  valid_loader_kwargs=hparams["valid_dataloader_opts"])
