"""RTG pipeline entry point for multi-GPU training (`python -m torch.distributed.launch
--nproc_per_node 4 pipeline.py experiments/deen-base`), after the fix of isi-nlp/rtg#11 released in
0.6.1: the early-stopping decision of the main process reaches every worker through a flag file
read after the checkpoint barrier.

Thread: https://github.com/isi-nlp/rtg/issues/11 ("Early stop on distributed training: barrier calls
are not in sync"; "Fixed in 0.6.1", commits 59305b2 and 3d0cc05 "Sync early stopping across worker
processes")
Project: isi-nlp/rtg (rtg/module/tfmnmt.py, `TransformerTrainer.train`)
Fix (0.6.1, 3d0cc05): when the stopper fires, the main process touches `_EARLY_STOPPED` in the model
directory instead of breaking; every process passes the checkpoint barrier, then every process
breaks if the flag file exists (written before the barrier, in the shared experiment directory).
Expected rankcheck finding: none (safe twin).
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
