"""Encoder-decoder model with a CTC/attention ASR branch and an optional speech-translation branch.
The ST loss exists only for utterances that have a translation (mixed ASR-only / ST corpora)."""
import json

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence


class ASRSTModel(torch.nn.Module):
    def __init__(self, token_list, st_token_list, d_model=256, st_weight=0.5):
        super().__init__()
        with open(token_list) as f:
            self.vocab = [t.strip() for t in f]
        with open(st_token_list) as f:
            self.st_vocab = [t.strip() for t in f]
        self.st_weight = st_weight
        self.frontend = torch.nn.Linear(80, d_model)
        self.encoder = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(d_model, 4, batch_first=True), 6)
        self.ctc = torch.nn.Linear(d_model, len(self.vocab))
        self.st_decoder = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(d_model, 4, batch_first=True), 3)
        self.st_embed = torch.nn.Embedding(len(self.st_vocab), d_model)
        self.st_out = torch.nn.Linear(d_model, len(self.st_vocab))

    def forward(self, speech, speech_lengths, text, text_lengths, text_st=None, text_st_lengths=None):
        batch_size = speech.size(0)
        enc = self.encoder(self.frontend(speech))
        log_probs = self.ctc(enc).log_softmax(-1).transpose(0, 1)
        loss_ctc = F.ctc_loss(log_probs, text, speech_lengths, text_lengths, zero_infinity=True)

        loss_st = None
        if text_st is not None:
            dec = self.st_decoder(self.st_embed(text_st[:, :-1]), enc)
            logits = self.st_out(dec)
            loss_st = F.cross_entropy(logits.reshape(-1, logits.size(-1)), text_st[:, 1:].reshape(-1), ignore_index=-1)

        loss = loss_ctc if loss_st is None else (1 - self.st_weight) * loss_ctc + self.st_weight * loss_st
        stats = dict(
            loss=loss.detach(),
            loss_ctc=loss_ctc.detach(),
            loss_st=loss_st.detach() if loss_st is not None else None,
        )
        weight = torch.tensor(batch_size, device=loss.device)
        return loss, stats, weight


def build_dataset(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def collate(items):
    speech = pad_sequence([torch.load(it["feats"]) for it in items], batch_first=True)
    speech_lengths = torch.tensor([it["num_frames"] for it in items])
    text = pad_sequence([torch.tensor(it["token_ids"]) for it in items], batch_first=True, padding_value=-1)
    text_lengths = torch.tensor([len(it["token_ids"]) for it in items])
    batch = dict(speech=speech, speech_lengths=speech_lengths, text=text, text_lengths=text_lengths)
    st_items = [it for it in items if it.get("st_token_ids")]
    if len(st_items) == len(items):
        batch["text_st"] = pad_sequence([torch.tensor(it["st_token_ids"]) for it in items], batch_first=True, padding_value=-1)
        batch["text_st_lengths"] = torch.tensor([len(it["st_token_ids"]) for it in items])
    return batch
