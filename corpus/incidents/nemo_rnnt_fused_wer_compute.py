"""Reconstruction of https://github.com/NVIDIA-NeMo/Speech/issues/16003

Project: NVIDIA-NeMo/Speech (ASR, RNNTJoint with fuse_loss_wer=true).
What hung: multi-GPU fine-tuning of an RNN-T model (Nemotron ASR tutorial) with
`model.joint.fuse_loss_wer=true`, `joint.fused_batch_size=2` and
`validation_ds.batch_size=16`. RNNTJoint.forward splits each batch into
sub-batches of fused_batch_size and calls `self.wer.compute()` once per
sub-batch. During training the WER sync is switched off around that compute,
but the switch sits under `if self.training:`, so in validation every compute()
does a torchmetrics all_gather. The number of sub-batches follows the local
batch size: with 20 validation samples on 2 GPUs one rank got a batch of 16
(8 computes) and the other a batch of 4 (2 computes), and the ranks deadlocked
(reporter's diagnosis in the issue). An earlier training-time variant of the
same hang was fixed in NeMo PR #4348.
Fix (PR #16029, proposed by the reporter): disable the metric sync around the
per-sub-batch compute unconditionally; WER is reduced once at epoch level.
The surrounding LightningModule is trimmed; the joint loop follows NeMo.
expected: RC103 at line 53
"""
import lightning.pytorch as pl
import torch
from nemo.collections.asr.losses.rnnt import RNNTLoss
from nemo.collections.asr.metrics.wer import WER


class FusedRNNTJoint(torch.nn.Module):
    def __init__(self, enc_hidden, pred_hidden, joint_hidden, num_classes, fused_batch_size):
        super().__init__()
        self.enc = torch.nn.Linear(enc_hidden, joint_hidden)
        self.pred = torch.nn.Linear(pred_hidden, joint_hidden)
        self.joint_net = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(joint_hidden, num_classes + 1))
        self._fused_batch_size = fused_batch_size
        self._loss = None
        self._wer = None

    def set_loss(self, loss):
        self._loss = loss

    def set_wer(self, wer):
        self._wer = wer

    def joint(self, f, g):
        return self.joint_net(self.enc(f).unsqueeze(2) + self.pred(g).unsqueeze(1))

    def forward(self, encoder_outputs, decoder_outputs, encoder_lengths, transcripts, transcript_lengths,
                compute_wer=False):
        encoder_outputs = encoder_outputs.transpose(1, 2)
        decoder_outputs = decoder_outputs.transpose(1, 2)
        losses, target_lengths = [], []
        wers, wer_nums, wer_denoms = [], [], []
        batch_size = int(encoder_outputs.size(0))

        for batch_idx in range(0, batch_size, self._fused_batch_size):  # expect: RC103
            begin, end = batch_idx, min(batch_idx + self._fused_batch_size, batch_size)
            sub_enc = encoder_outputs.narrow(dim=0, start=begin, length=int(end - begin))
            sub_dec = decoder_outputs.narrow(dim=0, start=begin, length=int(end - begin))
            sub_transcripts = transcripts.narrow(dim=0, start=begin, length=int(end - begin))
            sub_enc_lens = encoder_lengths[begin:end]
            sub_transcript_lens = transcript_lengths[begin:end]

            sub_joint = self.joint(sub_enc, sub_dec)
            losses.append(self._loss(log_probs=sub_joint, targets=sub_transcripts,
                                     input_lengths=sub_enc_lens, target_lengths=sub_transcript_lens))
            target_lengths.append(sub_transcript_lens)

            if compute_wer:
                if self.training:
                    original_sync = self._wer._to_sync
                    self._wer._to_sync = False
                self._wer.update(predictions=sub_enc.transpose(1, 2).detach(), predictions_lengths=sub_enc_lens,
                                 targets=sub_transcripts.detach(), targets_lengths=sub_transcript_lens)
                wer, wer_num, wer_denom = self._wer.compute()
                self._wer.reset()
                if self.training:
                    self._wer._to_sync = original_sync
                wers.append(wer)
                wer_nums.append(wer_num)
                wer_denoms.append(wer_denom)

        loss = self._loss.reduce(losses, target_lengths)
        if not compute_wer:
            return loss, None, None, None
        return loss, sum(wers) / len(wers), sum(wer_nums), sum(wer_denoms)


class RNNTFinetuneModule(pl.LightningModule):
    def __init__(self, encoder, decoder, decoding, vocab_size, fused_batch_size=2):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.joint = FusedRNNTJoint(512, 640, 640, vocab_size, fused_batch_size)
        self.joint.set_loss(RNNTLoss(num_classes=vocab_size))
        self.joint.set_wer(WER(decoding=decoding, batch_dim_index=0, dist_sync_on_step=True))

    def validation_step(self, batch, batch_idx):
        signal, signal_len, transcript, transcript_len = batch
        encoded, encoded_len = self.encoder(audio_signal=signal, length=signal_len)
        decoder_out, _, _ = self.decoder(targets=transcript, target_length=transcript_len)
        loss, wer, wer_num, wer_denom = self.joint(
            encoder_outputs=encoded, decoder_outputs=decoder_out, encoder_lengths=encoded_len,
            transcripts=transcript, transcript_lengths=transcript_len, compute_wer=True,
        )
        self.log("val_loss", loss, sync_dist=True)
        return {"val_loss": loss, "val_wer_num": wer_num, "val_wer_denom": wer_denom}
