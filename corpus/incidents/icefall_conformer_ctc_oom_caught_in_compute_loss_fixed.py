#!/usr/bin/env python3
"""Safe twin of icefall_conformer_ctc_oom_caught_in_compute_loss.py: an out-of-memory error is no
longer swallowed on one rank. As icefall does after #82/#343, the training step saves the offending
batch and re-raises, so the whole job fails (torch.multiprocessing.spawn terminates the other
workers) instead of one rank skipping its backward while the others wait in the DDP all-reduce.

Thread: https://github.com/k2-fsa/icefall/pull/8
"""
import argparse
import logging

import k2
import torch
import torch.multiprocessing as mp
import torch.nn as nn
from conformer import Conformer
from lhotse.utils import fix_random_seed
from madam import Madam
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils import clip_grad_norm_

from icefall.bpe_graph_compiler import BpeCtcTrainingGraphCompiler
from icefall.dataset.librispeech import LibriSpeechAsrDataModule
from icefall.dist import cleanup_dist, setup_dist
from icefall.utils import AttributeDict, encode_supervisions, setup_logger


def compute_loss_impl(params, model, batch, graph_compiler, is_training):
    device = graph_compiler.device
    feature = batch["inputs"].to(device)
    supervisions = batch["supervisions"]
    with torch.set_grad_enabled(is_training):
        nnet_output, encoder_memory, memory_mask = model(feature, supervisions)  # DDP forward
    supervision_segments, texts = encode_supervisions(supervisions, subsampling_factor=params.subsampling_factor)
    token_ids = graph_compiler.texts_to_ids(texts)
    decoding_graph = graph_compiler.compile(token_ids)
    dense_fsa_vec = k2.DenseFsaVec(nnet_output, supervision_segments, allow_truncate=params.subsampling_factor - 1)
    ctc_loss = k2.ctc_loss(decoding_graph=decoding_graph, dense_fsa_vec=dense_fsa_vec,
                           output_beam=params.beam_size, reduction="sum", use_double_scores=True)
    params.train_frames = supervision_segments[:, 2].sum().item()
    return ctc_loss


def compute_loss(params: AttributeDict, model: nn.Module, batch: dict,
                 graph_compiler: BpeCtcTrainingGraphCompiler, is_training: bool):
    return compute_loss_impl(params=params, model=model, batch=batch,
                             graph_compiler=graph_compiler, is_training=is_training)


def display_and_save_batch(batch: dict, params: AttributeDict) -> None:
    """Save the batch that failed so it can be inspected with torch.load()."""
    filename = f"conformer_ctc_madam_no_warmup/exp/batch-{params.cur_epoch}-{params.batch_idx_train}.pt"
    logging.info(f"Saving batch to {filename}, features shape: {tuple(batch['inputs'].shape)}")
    torch.save(batch, filename)


def train_one_epoch(params, model, optimizer, graph_compiler, train_dl):
    model.train()
    tot_loss, tot_frames = 0.0, 0.0
    for batch_idx, batch in enumerate(train_dl):
        params.batch_idx_train += 1
        try:
            loss = compute_loss(params=params, model=model, batch=batch,
                                graph_compiler=graph_compiler, is_training=True)
            optimizer.zero_grad()
            loss.backward()  # DDP gradient all-reduce happens here
            clip_grad_norm_(model.parameters(), 5.0, 2.0)
            optimizer.step()
        except:  # noqa
            display_and_save_batch(batch, params=params)
            raise

        tot_loss += loss.detach().cpu().item()
        tot_frames += params.train_frames
        if batch_idx % params.log_interval == 0:
            logging.info(f"Epoch {params.cur_epoch}, batch {batch_idx}, "
                         f"total avg loss: {tot_loss / max(tot_frames, 1):.4f}")


def run(rank, world_size, args):
    params = AttributeDict({"subsampling_factor": 4, "beam_size": 10, "log_interval": 10,
                            "batch_idx_train": 0, "num_epochs": args.num_epochs, "lang_dir": args.lang_dir})
    fix_random_seed(42)
    if world_size > 1:
        setup_dist(rank, world_size, args.master_port)
    setup_logger("conformer_ctc_madam_no_warmup/exp/log/log-train")
    device = torch.device("cuda", rank)
    graph_compiler = BpeCtcTrainingGraphCompiler(params.lang_dir, device=device, sos_token="<sos/eos>",
                                                 eos_token="<sos/eos>")
    model = Conformer(num_features=80, nhead=8, d_model=512, num_classes=500,
                      subsampling_factor=params.subsampling_factor, num_decoder_layers=0).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[rank])
    optimizer = Madam(model.parameters(), lr=1e-3)

    librispeech = LibriSpeechAsrDataModule(args)
    train_dl = librispeech.train_dataloaders()
    for epoch in range(params.num_epochs):
        train_dl.sampler.set_epoch(epoch)
        params.cur_epoch = epoch
        train_one_epoch(params, model, optimizer, graph_compiler, train_dl)

    if world_size > 1:
        cleanup_dist()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--master-port", type=int, default=12354)
    parser.add_argument("--num-epochs", type=int, default=35)
    parser.add_argument("--lang-dir", type=str, default="data/lang_bpe")
    LibriSpeechAsrDataModule.add_arguments(parser)
    args = parser.parse_args()
    world_size = args.world_size
    if world_size > 1:
        mp.spawn(run, args=(world_size, args), nprocs=world_size, join=True)
    else:
        run(rank=0, world_size=1, args=args)


torch.set_num_threads(1)
torch.set_num_interop_threads(1)

if __name__ == "__main__":
    main()
