"""RTG pipeline entry point for multi-GPU training (`python -m torch.distributed.launch
--nproc_per_node 4 pipeline.py experiments/deen-base`): reads the experiment's conf.yml and
trains the transformer NMT model with early stopping on validation loss.

Thread: https://github.com/isi-nlp/rtg/issues/11 ("Early stop on distributed training: barrier calls
are not in sync"; the maintainer closed it with "Fixed in 0.6.1", commits 59305b2 and 3d0cc05 "Sync
early stopping across worker processes")
Project: isi-nlp/rtg (rtg/module/tfmnmt.py, `TransformerTrainer.train`)
What hung: the maintainer's report: "Early stop in distributed training leads to hanging at the end
of training instead of exiting. Revisit the barrier() calls and control flow". Only the global main
process validates and feeds the early stopper; when the stopper fires it `break`s out of the batch
loop inside `if distr.is_global_main:`, skipping the `distr.barrier()` that closes every checkpoint
block. It goes on to the end-of-training barrier, which the other workers take for the checkpoint
barrier; they keep training, and their next optimizer step waits in the per-parameter gradient
all-reduce (`DistribTorch.average_gradients`) for a main process that has finished training.
Fix (0.6.1, 3d0cc05): the main process records the decision in an `_EARLY_STOPPED` flag file in the
model directory instead of breaking; every process then passes the checkpoint barrier, and every
process breaks if the flag file exists.
Expected rankcheck finding: RC102 on the main-process-only `break` in rtg_lite/trainer.py, taken
before the checkpoint barrier and the gradient all-reduces the other workers still run.
(Trimmed: vocabulary/BPE preparation, the data base and sorted batching, tensorboard, decoding and
the test step after training. Inferred: the toy token-id TSV data and its sharding by rank.)
"""
import argparse
from pathlib import Path

import torch
import yaml

from rtg_lite import log
from rtg_lite.distrib import dtorch
from rtg_lite.trainer import Experiment, TransformerNMT, TransformerTrainer


def main():
    parser = argparse.ArgumentParser(prog="rtg-pipe", description="RTG Pipeline CLI")
    parser.add_argument("exp", help="Working directory of experiment")
    parser.add_argument("--local_rank", type=int, default=0, help="set by torch.distributed.launch")
    args = parser.parse_args()

    conf = yaml.safe_load(Path(args.exp, "conf.yml").read_text())
    if dtorch.is_distributed:
        dtorch.setup()
        torch.cuda.set_device(max(dtorch.local_rank, 0))
    if conf.get("trainer", {}).get("fp16"):
        dtorch.enable_fp16()

    exp = Experiment(args.exp, conf)
    model_args = conf["model_args"]
    model = TransformerNMT(src_vocab=model_args["src_vocab"], tgt_vocab=model_args["tgt_vocab"],
                           model_dim=model_args.get("model_dim", 512), n_heads=model_args.get("attn_head", 8),
                           enc_layers=model_args.get("enc_layers", 6), dec_layers=model_args.get("dec_layers", 6),
                           ff_size=model_args.get("ff_size", 2048), dropout=model_args.get("dropout", 0.1))
    device = f"cuda:{max(dtorch.local_rank, 0)}" if torch.cuda.is_available() else "cpu"
    trainer = TransformerTrainer(exp, model, lr=conf["optim"]["args"].get("lr", 5e-4),
                                 grad_accum=conf["trainer"].get("grad_accum", 1), device=device)
    trainer_conf = conf["trainer"]
    early_stopped = trainer.train(steps=trainer_conf["steps"], check_point=trainer_conf["check_point"],
                                  batch_size=trainer_conf["batch_size"], keep_models=trainer_conf.get("keep_models", 10),
                                  log_interval=trainer_conf.get("log_interval", 10),
                                  early_stop=trainer_conf.get("early_stop"))
    if dtorch.is_global_main:
        log.info(f"Training finished; early stopped: {early_stopped}")
    dtorch.close()


if __name__ == "__main__":
    main()
