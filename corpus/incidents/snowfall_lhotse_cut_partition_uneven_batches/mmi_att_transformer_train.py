#!/usr/bin/env python3
"""snowfall LF-MMI + attention conformer training on LibriSpeech (egs/librispeech/asr/simple_v1/
mmi_att_transformer_train.py, April 2021), one process per GPU started by `mp.spawn`
(`--world-size 2`). Each process draws dynamic-size batches (up to `--max-duration` seconds of audio)
from a lhotse `SingleCutSampler`, which gives it its own contiguous slice of the training cuts, and
every training step ends in DDP's gradient all-reduce.

Thread: https://github.com/k2-fsa/snowfall/issues/152 ("DDP address in use"; the hang at the end of
DDP training), fixed in lhotse by https://github.com/lhotse-speech/lhotse/pull/267
Project: k2-fsa/snowfall with lhotse (the sampler lives in lhotse_lite/sampling.py)
What hung: csukuangfj in the issue: "if different nodes have a different number of utterances in
its dataloader, the node with most utterances will hang in the end. I suspect the reason is due to
`allreduce` called inside `backward`. Since nodes with fewer utterances exit earlier, the node with
most utterances waits inside `allreduce`", pointing at lhotse's `partition_cut_ids` (each rank takes
`ceil(total / world_size)` consecutive cuts, so the last rank gets fewer). The script itself carries
the note "The training process is very likely to hang at this point" at the closing barrier. With
dynamic batches the batch count follows each rank's own cuts, so the epoch loop below runs a
different number of DDP steps on each process.
Fix (lhotse#267, merged the next day; "Update to the latest lhotse should help" in snowfall#162):
samplers no longer partition the cuts: every rank forms the batches of the whole (equally shuffled)
CutSet, draws `world_size` of them at a time and keeps the one at its rank, so all ranks stop on the
same step ("This ensures that we can return an equal number of batches in all distributed workers in
spite of using a dynamic batch size").
Expected rankcheck finding: RC103 on the training loop of `train_one_epoch`, whose trip count is the
number of batches the lhotse sampler forms from this rank's partition of the cuts.
(Trimmed: tensorboard diagnostics, the attention decoder loss and checkpoint resuming are left out;
model, lexicon, graph compiler and loss come from the snowfall and k2 packages.)
"""
import argparse
import logging
import os
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils import clip_grad_value_

from lhotse.utils import fix_random_seed, nullcontext
from snowfall.common import describe, save_checkpoint, setup_logger
from snowfall.dist import cleanup_dist, setup_dist
from snowfall.lexicon import Lexicon
from snowfall.models.conformer import Conformer
from snowfall.models.transformer import Noam
from snowfall.objectives import LFMMILoss, encode_supervisions
from snowfall.training.mmi_graph import MmiTrainingGraphCompiler, create_bigram_phone_lm

from asr_datamodule import LibriSpeechAsrDataModule


def get_objf(batch, model, P, device, graph_compiler, is_training, is_update,
             accum_grad=1, den_scale=1.0, optimizer=None):
    feature = batch['inputs']
    # at entry, feature is [N, T, C]
    feature = feature.permute(0, 2, 1)  # now feature is [N, C, T]
    feature = feature.to(device)

    supervisions = batch['supervisions']
    supervision_segments, texts = encode_supervisions(supervisions)

    loss_fn = LFMMILoss(graph_compiler=graph_compiler, P=P, den_scale=den_scale)

    grad_context = nullcontext if is_training else torch.no_grad
    with grad_context():
        nnet_output, encoder_memory, memory_mask = model(feature, supervisions)
        # nnet_output is [N, C, T]
        nnet_output = nnet_output.permute(0, 2, 1)  # now nnet_output is [N, T, C]
        mmi_loss, tot_frames, all_frames = loss_fn(nnet_output, texts, supervision_segments)

    if is_training:
        loss = (-mmi_loss) / (len(texts) * accum_grad)
        loss.backward()
        if is_update:
            clip_grad_value_(model.parameters(), 5.0)
            optimizer.step()
            optimizer.zero_grad()

    return -mmi_loss.detach().cpu().item(), tot_frames.cpu().item(), all_frames.cpu().item()


def get_validation_objf(dataloader, model, P, device, graph_compiler, den_scale=1.0):
    total_objf = 0.
    total_frames = 0.  # for display only
    total_all_frames = 0.  # all frames including those seqs that failed.

    model.eval()
    for batch_idx, batch in enumerate(dataloader):
        objf, frames, all_frames = get_objf(
            batch=batch, model=model, P=P, device=device, graph_compiler=graph_compiler,
            is_training=False, is_update=False, den_scale=den_scale)
        total_objf += objf
        total_frames += frames
        total_all_frames += all_frames
    return total_objf, total_frames, total_all_frames


def train_one_epoch(dataloader, valid_dataloader, model, P, device, graph_compiler, optimizer,
                    accum_grad, den_scale, current_epoch, num_epochs, global_batch_idx_train):
    """One epoch training and validation."""
    total_objf, total_frames, total_all_frames = 0., 0., 0.
    valid_average_objf = float('inf')
    time_waiting_for_batch = 0
    forward_count = 0
    prev_timestamp = datetime.now()

    model.train()
    for batch_idx, batch in enumerate(dataloader):  # expect: RC103
        forward_count += 1
        if forward_count == accum_grad:
            is_update = True
            forward_count = 0
        else:
            is_update = False

        global_batch_idx_train += 1
        timestamp = datetime.now()
        time_waiting_for_batch += (timestamp - prev_timestamp).total_seconds()

        if forward_count == 1 or accum_grad == 1:
            P.set_scores_stochastic_(model.module.P_scores)
            assert P.requires_grad is True

        curr_batch_objf, curr_batch_frames, curr_batch_all_frames = get_objf(
            batch=batch, model=model, P=P, device=device, graph_compiler=graph_compiler,
            is_training=True, is_update=is_update, accum_grad=accum_grad,
            den_scale=den_scale, optimizer=optimizer)

        total_objf += curr_batch_objf
        total_frames += curr_batch_frames
        total_all_frames += curr_batch_all_frames

        if batch_idx % 10 == 0:
            logging.info(
                'batch {}, epoch {}/{} global average objf: {:.6f} over {} frames ({:.1f}% kept), '
                'current batch average objf: {:.6f} over {} frames, avg time waiting for batch {:.3f}s'.format(
                    batch_idx, current_epoch, num_epochs,
                    total_objf / total_frames, total_frames, 100.0 * total_frames / total_all_frames,
                    curr_batch_objf / (curr_batch_frames + 0.001), curr_batch_frames,
                    time_waiting_for_batch / max(1, batch_idx)))

        if batch_idx > 0 and batch_idx % 200 == 0:
            total_valid_objf, total_valid_frames, total_valid_all_frames = get_validation_objf(
                dataloader=valid_dataloader, model=model, P=P, device=device, graph_compiler=graph_compiler)
            valid_average_objf = total_valid_objf / total_valid_frames
            model.train()
            logging.info('Validation average objf: {:.6f} over {} frames ({:.1f}% kept)'.format(
                valid_average_objf, total_valid_frames, 100.0 * total_valid_frames / total_valid_all_frames))
        prev_timestamp = datetime.now()
    return total_objf / total_frames, valid_average_objf, global_batch_idx_train


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument('--world-size', type=int, default=1, help='Number of GPUs for DDP training.')
    parser.add_argument('--num-epochs', type=int, default=10, help='Number of training epochs.')
    parser.add_argument('--start-epoch', type=int, default=0, help='Number of start epoch.')
    parser.add_argument('--warm-step', type=int, default=5000, help='The number of warm-up steps for Noam.')
    parser.add_argument('--accum-grad', type=int, default=1, help='Number of gradient accumulation.')
    parser.add_argument('--den-scale', type=float, default=1.0, help='denominator scale in mmi loss.')
    parser.add_argument('--nhead', type=int, default=4, help='Number of attention heads in transformer.')
    parser.add_argument('--attention-dim', type=int, default=256, help='Number of units in attention layers.')
    return parser


def run(rank, world_size, args):
    '''
    Args:
      rank:
        It is a value between 0 and `world_size-1`, which is
        passed automatically by `mp.spawn()` in :func:`main`.
        The node with rank 0 is responsible for saving checkpoint.
      world_size:
        Number of GPUs for DDP training.
      args:
        The return value of get_parser().parse_args()
    '''
    fix_random_seed(42)
    setup_dist(rank, world_size)

    exp_dir = Path('exp-conformer-noam-mmi-att-musan-sa')
    setup_logger(f'{exp_dir}/log/log-train-{rank}')

    logging.info("Loading lexicon and symbol tables")
    lexicon = Lexicon(Path('data/lang_nosp'))

    device = torch.device('cuda', rank)
    graph_compiler = MmiTrainingGraphCompiler(lexicon=lexicon, device=device)
    phone_ids = lexicon.phone_symbols()
    P = create_bigram_phone_lm(phone_ids)
    P.scores = torch.zeros_like(P.scores)
    P = P.to(device)

    librispeech = LibriSpeechAsrDataModule(args)
    train_dl = librispeech.train_dataloaders()
    valid_dl = librispeech.valid_dataloaders()

    if not torch.cuda.is_available():
        logging.error('No GPU detected!')
        sys.exit(-1)

    logging.info("About to create model")
    model = Conformer(
        num_features=80,
        nhead=args.nhead,
        d_model=args.attention_dim,
        num_classes=len(phone_ids) + 1,  # +1 for the blank symbol
        subsampling_factor=4,
        num_decoder_layers=0)
    model.P_scores = nn.Parameter(P.scores.clone(), requires_grad=True)
    model.to(device)
    describe(model)
    model = DDP(model, device_ids=[rank])

    optimizer = Noam(model.parameters(), model_size=args.attention_dim, factor=1.0, warm_step=args.warm_step)

    best_valid_objf = np.inf
    best_model_path = os.path.join(exp_dir, 'best_model.pt')
    global_batch_idx_train = 0  # for logging only

    for epoch in range(args.start_epoch, args.num_epochs):
        train_dl.sampler.set_epoch(epoch)
        curr_learning_rate = optimizer._rate
        logging.info('epoch {}, learning rate {}'.format(epoch, curr_learning_rate))
        objf, valid_objf, global_batch_idx_train = train_one_epoch(
            dataloader=train_dl,
            valid_dataloader=valid_dl,
            model=model,
            P=P,
            device=device,
            graph_compiler=graph_compiler,
            optimizer=optimizer,
            accum_grad=args.accum_grad,
            den_scale=args.den_scale,
            current_epoch=epoch,
            num_epochs=args.num_epochs,
            global_batch_idx_train=global_batch_idx_train,
        )
        # the lower, the better
        if valid_objf < best_valid_objf:
            best_valid_objf = valid_objf
            save_checkpoint(filename=best_model_path, optimizer=None, scheduler=None, model=model,
                            epoch=epoch, learning_rate=curr_learning_rate, objf=objf,
                            valid_objf=valid_objf, global_batch_idx_train=global_batch_idx_train,
                            local_rank=rank)
        # we always save the model for every epoch
        model_path = os.path.join(exp_dir, 'epoch-{}.pt'.format(epoch))
        save_checkpoint(filename=model_path, optimizer=optimizer, scheduler=None, model=model,
                        epoch=epoch, learning_rate=curr_learning_rate, objf=objf, valid_objf=valid_objf,
                        global_batch_idx_train=global_batch_idx_train, local_rank=rank)

    logging.warning('Done')
    torch.distributed.barrier()
    # NOTE: The training process is very likely to hang at this point.
    # If you press ctrl + c, your GPU memory will not be freed.
    cleanup_dist()


def main():
    parser = get_parser()
    LibriSpeechAsrDataModule.add_arguments(parser)
    args = parser.parse_args()
    world_size = args.world_size
    assert world_size >= 1
    mp.spawn(run, args=(world_size, args), nprocs=world_size, join=True)


torch.set_num_threads(1)
torch.set_num_interop_threads(1)

if __name__ == '__main__':
    main()
