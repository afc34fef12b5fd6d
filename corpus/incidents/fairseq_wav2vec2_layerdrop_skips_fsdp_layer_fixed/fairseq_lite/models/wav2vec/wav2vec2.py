"""Trimmed fairseq/models/wav2vec/wav2vec2.py: the conv feature extractor, time masking, and the
Transformer encoder with LayerDrop, each encoder layer made its own FSDP unit."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from fairseq_lite.data.data_utils import compute_mask_indices
from fairseq_lite.distributed import fsdp_wrap


class ConvFeatureExtraction(nn.Module):
    def __init__(self, conv_layers=((512, 10, 5),) + ((512, 3, 2),) * 4 + ((512, 2, 2),) * 2):
        super().__init__()
        blocks, in_d = [], 1
        for dim, k, stride in conv_layers:
            blocks.append(nn.Sequential(nn.Conv1d(in_d, dim, k, stride=stride, bias=False), nn.GELU()))
            in_d = dim
        self.conv_layers = nn.ModuleList(blocks)

    def forward(self, x):
        x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class TransformerSentenceEncoderLayer(nn.Module):
    def __init__(self, embed_dim=768, ffn_dim=3072, heads=12, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(embed_dim, heads, dropout=dropout)
        self.self_attn_layer_norm = nn.LayerNorm(embed_dim)
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)
        self.final_layer_norm = nn.LayerNorm(embed_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, self_attn_padding_mask=None, need_weights=False):
        residual = x
        x, attn = self.self_attn(x, x, x, key_padding_mask=self_attn_padding_mask, need_weights=need_weights)
        x = self.self_attn_layer_norm(residual + self.dropout(x))
        residual = x
        x = self.fc2(self.dropout(F.gelu(self.fc1(x))))
        x = self.final_layer_norm(residual + self.dropout(x))
        return x, attn


class TransformerEncoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.embedding_dim = args.encoder_embed_dim
        self.pos_conv = nn.Sequential(
            nn.Conv1d(self.embedding_dim, self.embedding_dim, 128, padding=64, groups=16), nn.GELU()
        )
        self.layers = nn.ModuleList(
            fsdp_wrap(TransformerSentenceEncoderLayer(self.embedding_dim, args.encoder_ffn_embed_dim,
                                                      args.encoder_attention_heads, args.dropout))
            for _ in range(args.encoder_layers)
        )
        self.layer_norm = nn.LayerNorm(self.embedding_dim)
        self.layerdrop = args.encoder_layerdrop

    def forward(self, x, padding_mask=None):
        return self.extract_features(x, padding_mask)

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x = x.masked_fill(padding_mask.unsqueeze(-1), 0)
        x_conv = self.pos_conv(x.transpose(1, 2))[:, :, : x.size(1)].transpose(1, 2)
        x = self.layer_norm(x + x_conv)
        x = x.transpose(0, 1)  # B x T x C -> T x B x C

        layer_results = []
        for i, layer in enumerate(self.layers):
            dropout_probability = np.random.random()
            if not self.training or (dropout_probability > self.layerdrop):
                mul_factor = 1
            else:
                mul_factor = 0
            # every rank runs every layer (and so every FSDP all-gather); a dropped layer's output
            # is discarded instead of not being computed
            layer_out, z = layer(x, self_attn_padding_mask=padding_mask, need_weights=False)
            if mul_factor > 0:
                x = layer_out
                layer_results.append(x)
        return x.transpose(0, 1), layer_results


class Wav2Vec2Model(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.feature_extractor = ConvFeatureExtraction()
        self.post_extract_proj = nn.Linear(512, args.encoder_embed_dim)
        self.mask_prob = args.mask_prob
        self.mask_length = args.mask_length
        self.mask_emb = nn.Parameter(torch.empty(args.encoder_embed_dim).uniform_())
        self.encoder = TransformerEncoder(args)
        self.final_proj = nn.Linear(args.encoder_embed_dim, args.final_dim)
        self.project_q = nn.Linear(512, args.final_dim)
        self.num_negatives = args.num_negatives
        self.logit_temp = args.logit_temp

    def _feature_padding_mask(self, padding_mask, num_frames):
        if padding_mask is None:
            return None
        extra = padding_mask.size(1) % num_frames
        if extra > 0:
            padding_mask = padding_mask[:, :-extra]
        return padding_mask.view(padding_mask.size(0), num_frames, -1).all(-1)

    def apply_mask(self, x, padding_mask):
        B, T, C = x.shape
        mask_indices = compute_mask_indices((B, T), padding_mask, self.mask_prob, self.mask_length, min_masks=2)
        mask_indices = torch.from_numpy(mask_indices).to(x.device)
        x = x.clone()
        x[mask_indices] = self.mask_emb.to(x.dtype)
        return x, mask_indices

    def sample_negatives(self, y, num_masked):
        bsz, tsz, fsz = y.shape
        idx = torch.randint(0, tsz, (bsz, num_masked * self.num_negatives), device=y.device)
        negs = y[torch.arange(bsz, device=y.device)[:, None], idx]
        return negs.view(bsz, num_masked, self.num_negatives, fsz).permute(2, 0, 1, 3)

    def forward(self, source, padding_mask=None):
        features = self.feature_extractor(source).transpose(1, 2)
        unmasked = features
        features = self.post_extract_proj(features)
        padding_mask = self._feature_padding_mask(padding_mask, features.size(1))
        x, mask_indices = self.apply_mask(features, padding_mask)
        x, _ = self.encoder(x, padding_mask=padding_mask)

        num_masked = int(mask_indices[0].sum())
        x = self.final_proj(x[mask_indices].view(x.size(0), -1, x.size(-1)))
        y = self.project_q(unmasked[mask_indices].view(x.size(0), -1, unmasked.size(-1)))
        negs = self.sample_negatives(y, num_masked)
        targets = torch.cat([y.unsqueeze(0), negs], dim=0)
        logits = F.cosine_similarity(x.unsqueeze(0).float(), targets.float(), dim=-1) / self.logit_temp
        return {"logits": logits, "num_masked": num_masked}


def contrastive_loss(net_output):
    logits = net_output["logits"]  # (1 + negatives) x B x M
    logits = logits.permute(1, 2, 0).reshape(-1, logits.size(0))
    target = logits.new_zeros(logits.size(0), dtype=torch.long)
    return F.cross_entropy(logits, target, reduction="sum")
