"""Query decoder of an RT-DETR style detector (as RTDETRTransformer): top-k encoder tokens become
the object queries; in training, the contrastive denoising queries are prepended to them."""
import torch
import torch.nn as nn

from rtdetr_lite.denoising import get_contrastive_denoising_training_group


class RTDETRDecoder(nn.Module):
    def __init__(self, num_classes=80, hidden_dim=256, num_queries=300, num_layers=3, num_denoising=100,
                 label_noise_ratio=0.5, box_noise_scale=1.0):
        super().__init__()
        self.num_classes = num_classes
        self.num_queries = num_queries
        self.num_denoising = num_denoising
        self.label_noise_ratio = label_noise_ratio
        self.box_noise_scale = box_noise_scale
        self.denoising_class_embed = nn.Embedding(num_classes + 1, hidden_dim, padding_idx=num_classes)
        self.enc_output = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.LayerNorm(hidden_dim))
        self.enc_score_head = nn.Linear(hidden_dim, num_classes)
        self.enc_bbox_head = nn.Linear(hidden_dim, 4)
        self.query_pos_head = nn.Sequential(nn.Linear(4, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, hidden_dim))
        self.layers = nn.ModuleList(
            [nn.TransformerDecoderLayer(hidden_dim, 8, 1024, batch_first=True) for _ in range(num_layers)])
        self.dec_score_head = nn.Linear(hidden_dim, num_classes)
        self.dec_bbox_head = nn.Linear(hidden_dim, 4)

    def forward(self, memory, targets=None):
        if self.training and self.num_denoising > 0:
            dn_class, dn_bbox_unact, attn_mask, dn_meta = get_contrastive_denoising_training_group(
                targets, self.num_classes, self.num_queries, self.denoising_class_embed,
                num_denoising=self.num_denoising, label_noise_ratio=self.label_noise_ratio,
                box_noise_scale=self.box_noise_scale)
        else:
            dn_class, dn_bbox_unact, attn_mask, dn_meta = None, None, None, None

        enc = self.enc_output(memory)
        enc_scores = self.enc_score_head(enc)
        topk_ind = enc_scores.max(-1).values.topk(self.num_queries, dim=1).indices
        enc_topk_logits = enc_scores.gather(1, topk_ind.unsqueeze(-1).expand(-1, -1, self.num_classes))
        enc_topk_bbox_unact = self.enc_bbox_head(enc).gather(1, topk_ind.unsqueeze(-1).expand(-1, -1, 4))
        target = enc.gather(1, topk_ind.unsqueeze(-1).expand(-1, -1, enc.shape[-1])).detach()
        ref_unact = enc_topk_bbox_unact.detach()
        if dn_class is not None:
            target = torch.cat([dn_class, target], dim=1)
            ref_unact = torch.cat([dn_bbox_unact, ref_unact], dim=1)

        tgt = target + self.query_pos_head(ref_unact.sigmoid())
        for layer in self.layers:
            tgt = layer(tgt, memory, tgt_mask=attn_mask)
        logits = self.dec_score_head(tgt)
        boxes = (self.dec_bbox_head(tgt) + ref_unact).sigmoid()

        out = {"enc_outputs": {"pred_logits": enc_topk_logits, "pred_boxes": enc_topk_bbox_unact.sigmoid()}}
        if dn_meta is not None:
            dn_logits, logits = torch.split(logits, dn_meta["dn_num_split"], dim=1)
            dn_boxes, boxes = torch.split(boxes, dn_meta["dn_num_split"], dim=1)
            out["dn_aux_outputs"] = [{"pred_logits": dn_logits, "pred_boxes": dn_boxes}]
            out["dn_meta"] = dn_meta
        out["pred_logits"], out["pred_boxes"] = logits, boxes
        return out
