"""Contrastive denoising training group of an RT-DETR style decoder (as
src/zoo/rtdetr/denoising.py): noised copies of this rank's ground-truth boxes and labels become extra
decoder queries, embedded with the decoder's `denoising_class_embed`.

Safe twin of rtdetr_denoising_group_returns_none_on_empty_batch: as merged in RT-DETR#684, a rank
whose batch has no ground truth builds one masked-out dummy query (one group, `pad_gt_mask` all
zero) instead of returning early, so `denoising_class_embed` is in the graph on every rank; the loss
gives the dummy query zero weight (train.py).

Thread: https://github.com/lyuwenyu/RT-DETR/issues/672
"""
import torch


def box_cxcywh_to_xyxy(x):
    cx, cy, w, h = x.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def box_xyxy_to_cxcywh(x):
    x0, y0, x1, y1 = x.unbind(-1)
    return torch.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dim=-1)


def inverse_sigmoid(x, eps=1e-5):
    x = x.clip(min=0.0, max=1.0)
    return torch.log(x.clip(min=eps) / (1 - x).clip(min=eps))


def get_contrastive_denoising_training_group(targets, num_classes, num_queries, class_embed,
                                             num_denoising=100, label_noise_ratio=0.5, box_noise_scale=1.0):
    if num_denoising <= 0:
        return None, None, None, None
    num_gts = [len(t["labels"]) for t in targets]
    device = targets[0]["labels"].device
    max_gt_num = max(num_gts)
    is_empty_batch = False
    if max_gt_num == 0:
        # No ground truth on this rank: returning None here would drop the denoising branch from the
        # graph on this rank only and desynchronize DDP's gradient all-reduce. Build one masked-out
        # dummy query instead (zero loss, symmetric graph).
        max_gt_num = 1
        is_empty_batch = True

    num_group = 1 if is_empty_batch else max(num_denoising // max_gt_num, 1)
    bs = len(num_gts)
    input_query_class = torch.full([bs, max_gt_num], num_classes, dtype=torch.int64, device=device)
    input_query_bbox = torch.zeros([bs, max_gt_num, 4], device=device)
    pad_gt_mask = torch.zeros([bs, max_gt_num], dtype=torch.bool, device=device)
    for i, num_gt in enumerate(num_gts):
        if num_gt > 0:
            input_query_class[i, :num_gt] = targets[i]["labels"]
            input_query_bbox[i, :num_gt] = targets[i]["boxes"]
            pad_gt_mask[i, :num_gt] = True

    # every group holds a positive and a negative copy of each ground truth
    input_query_class = input_query_class.tile([1, 2 * num_group])
    input_query_bbox = input_query_bbox.tile([1, 2 * num_group, 1])
    pad_gt_mask = pad_gt_mask.tile([1, 2 * num_group])
    negative_gt_mask = torch.zeros([bs, max_gt_num * 2, 1], device=device)
    negative_gt_mask[:, max_gt_num:] = 1
    negative_gt_mask = negative_gt_mask.tile([1, num_group, 1])
    positive_gt_mask = (1 - negative_gt_mask).squeeze(-1) * pad_gt_mask
    dn_positive_idx = torch.nonzero(positive_gt_mask)[:, 1]
    dn_positive_idx = torch.split(dn_positive_idx, [n * num_group for n in num_gts])
    num_denoising = int(max_gt_num * 2 * num_group)

    if label_noise_ratio > 0:
        mask = torch.rand(input_query_class.shape, device=device) < (label_noise_ratio * 0.5)
        new_label = torch.randint_like(input_query_class, 0, num_classes)
        input_query_class = torch.where(mask & pad_gt_mask, new_label, input_query_class)
    if box_noise_scale > 0:
        known_bbox = box_cxcywh_to_xyxy(input_query_bbox)
        diff = torch.tile(input_query_bbox[..., 2:] * 0.5, [1, 1, 2]) * box_noise_scale
        rand_sign = torch.randint_like(input_query_bbox, 0, 2) * 2.0 - 1.0
        rand_part = torch.rand_like(input_query_bbox)
        rand_part = ((rand_part + 1.0) * negative_gt_mask + rand_part * (1 - negative_gt_mask)) * rand_sign
        known_bbox = (known_bbox + rand_part * diff).clip(min=0.0, max=1.0)
        input_query_bbox = inverse_sigmoid(box_xyxy_to_cxcywh(known_bbox))

    input_query_class = class_embed(input_query_class)

    tgt_size = num_denoising + num_queries
    attn_mask = torch.zeros([tgt_size, tgt_size], dtype=torch.bool, device=device)
    attn_mask[num_denoising:, :num_denoising] = True  # matching queries cannot see the noised copies
    for i in range(num_group):  # groups cannot see each other
        start, end = max_gt_num * 2 * i, max_gt_num * 2 * (i + 1)
        attn_mask[start:end, :start] = True
        attn_mask[start:end, end:num_denoising] = True
    dn_meta = {"dn_positive_idx": dn_positive_idx, "dn_num_group": num_group,
               "dn_num_split": [num_denoising, num_queries]}
    return input_query_class, input_query_bbox, attn_mask, dn_meta
