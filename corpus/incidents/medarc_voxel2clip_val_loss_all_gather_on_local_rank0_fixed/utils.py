"""Loss and data helpers shared by the fMRI -> CLIP training scripts."""
import random

import numpy as np
import torch
import torch.distributed.nn
import torch.nn.functional as F


def seed_everything(seed, cudnn_deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = cudnn_deterministic


def gather_features(image_features, voxel_features=None):
    """Concatenate the features of every rank (autograd-aware all_gather)."""
    all_image_features = torch.cat(torch.distributed.nn.all_gather(image_features), dim=0)
    if voxel_features is not None:
        all_voxel_features = torch.cat(torch.distributed.nn.all_gather(voxel_features), dim=0)
        return all_image_features, all_voxel_features
    return all_image_features


def mixco(voxels, beta=0.15, s_thresh=0.5):
    perm = torch.randperm(voxels.shape[0], device=voxels.device)
    voxels_shuffle = voxels[perm]
    betas = torch.distributions.Beta(beta, beta).sample([voxels.shape[0]]).to(voxels.device)
    select = (torch.rand(voxels.shape[0]) <= s_thresh).to(voxels.device)
    shape = [-1] + [1] * (voxels.dim() - 1)
    voxels[select] = voxels[select] * betas[select].reshape(*shape) + voxels_shuffle[select] * (1 - betas[select]).reshape(*shape)
    betas[~select] = 1
    return voxels, perm, betas, select


def mixco_nce(preds, targs, temp=0.1, perm=None, betas=None, select=None, distributed=False, local_rank=None):
    """Contrastive loss against the CLIP targets of the whole (gathered) batch."""
    if distributed:
        all_targs = gather_features(targs)
        brain_clip = (preds @ all_targs.T) / temp
    else:
        brain_clip = (preds @ targs.T) / temp
    if perm is not None and betas is not None and select is not None:
        probs = torch.diag(betas)
        probs[torch.arange(preds.shape[0], device=preds.device), perm] = 1 - betas
        if distributed:
            probs_all = torch.zeros_like(brain_clip)
            n = brain_clip.shape[0]
            probs_all[:, local_rank * n:(local_rank + 1) * n] = probs
            probs = probs_all
        return -(brain_clip.log_softmax(-1) * probs).sum(-1).mean()
    return F.cross_entropy(brain_clip, torch.arange(brain_clip.shape[0], device=brain_clip.device))


def soft_clip_loss(preds, targs, temp=0.125, distributed=False):
    if distributed:
        all_targs = gather_features(targs)
        clip_clip = (targs @ all_targs.T) / temp
        brain_clip = (preds @ all_targs.T) / temp
    else:
        clip_clip = (targs @ targs.T) / temp
        brain_clip = (preds @ targs.T) / temp
    loss1 = -(brain_clip.log_softmax(-1) * clip_clip.softmax(-1)).sum(-1).mean()
    loss2 = -(brain_clip.T.log_softmax(-1) * clip_clip.T.softmax(-1)).sum(-1).mean()
    return (loss1 + loss2) / 2


def cosine_anneal(start, end, steps):
    return end + (start - end) / 2 * (1 + torch.cos(torch.pi * torch.arange(steps) / (steps - 1)))


def topk(similarities, labels, k=1):
    topsum = 0
    for i in range(k):
        topsum += torch.sum(torch.argsort(similarities, dim=1)[:, -(i + 1)] == labels) / len(labels)
    return topsum.item()


def batchwise_cosine_similarity(z0, z1):
    z0 = F.normalize(z0, dim=-1)
    z1 = F.normalize(z1, dim=-1)
    return z0 @ z1.T


def save_ckpt(model, optimizer, losses, val_losses, epoch, tag, outdir):
    unwrapped = model.module if hasattr(model, "module") else model
    torch.save(
        {"epoch": epoch, "model_state_dict": unwrapped.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
         "train_losses": losses, "val_losses": val_losses},
        f"{outdir}/{tag}.pth",
    )
