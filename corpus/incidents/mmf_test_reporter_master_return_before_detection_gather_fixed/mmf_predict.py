"""`mmf_predict`-style inference of a DETR detector on COCO val2017 with 8 GPUs (torchrun, DDP) -- safe twin.

Thread: https://github.com/facebookresearch/mmf/pull/922 (merged as 0505b85b)
Same program as mmf_test_reporter_master_return_before_detection_gather with the PR's fix in
mmf/common/test_reporter.py: add_to_report no longer returns early on the non-master workers, so every
worker calls format_for_prediction and its all-gathers; only flush_report writes on the master.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from mmf.common.test_reporter import TestReporter
from mmf.datasets.coco_detection import DetectionCOCODataset
from mmf.trainers.evaluation_loop import TrainerEvaluationLoopMixin
from mmf.utils.distributed import synchronize


class SmallDETR(nn.Module):
    def __init__(self, num_classes=91, num_queries=100, hidden_dim=256):
        super().__init__()
        backbone = torchvision.models.resnet50()
        self.backbone = nn.Sequential(*list(backbone.children())[:-2])
        self.input_proj = nn.Conv2d(2048, hidden_dim, kernel_size=1)
        self.transformer = nn.Transformer(hidden_dim, nhead=8, num_encoder_layers=3, num_decoder_layers=3, batch_first=True)
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 4))

    def forward(self, sample_list):
        features = self.input_proj(self.backbone(sample_list["image"]))
        src = features.flatten(2).transpose(1, 2)
        queries = self.query_embed.weight.unsqueeze(0).expand(src.size(0), -1, -1)
        hs = self.transformer(src, queries)
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


class Predictor(TrainerEvaluationLoopMixin):
    def __init__(self, model, device, fp16=False, use_tqdm=True):
        self.model = model
        self.device = device
        self.fp16 = fp16
        self.use_tqdm = use_tqdm


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--image_dir", required=True)
    parser.add_argument("--annotation_file", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--save_dir", default="./save")
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    model = SmallDETR().to(device)
    model.load_state_dict(torch.load(args.checkpoint, map_location=device))
    model = DDP(model, device_ids=[local_rank])

    dataset = DetectionCOCODataset(args.image_dir, args.annotation_file)
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=DistributedSampler(dataset, shuffle=False),
        num_workers=4,
        drop_last=False,
    )
    reporter = TestReporter([dataset], [loader], dataset_type="val", save_dir=args.save_dir, experiment_name="detr_coco")

    Predictor(model, device, fp16=args.fp16, use_tqdm=dist.get_rank() == 0).prediction_loop(reporter)
    synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
