"""HGNetv2 backbone of the D-FINE detector, with the stage-1 pretrained weights fetched on first use.

Safe twin of dfine_pretrained_backbone_wrong_path_exit_on_nonzero_ranks: only rank 0 downloads, every
rank then passes `safe_barrier()` and loads the same file `local_model_dir +
"PPHGNetV2_<name>_stage1.pth"` (Peterande/D-FINE#221), so the non-zero ranks no longer fail and
exit before the DDP wrap.
"""
import logging
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["HGNetv2"]


def safe_barrier():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()


def safe_get_rank():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank()
    return 0


class ConvBNAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size, stride=1, groups=1, use_act=True):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, stride, padding=(kernel_size - 1) // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        self.act = nn.ReLU() if use_act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class StemBlock(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs):
        super().__init__()
        self.stem1 = ConvBNAct(in_chs, mid_chs, 3, stride=2)
        self.stem2 = ConvBNAct(mid_chs, out_chs, 3, stride=2)

    def forward(self, x):
        return self.stem2(self.stem1(x))


class HG_Block(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs, layer_num, kernel_size=3, residual=False):
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList(
            ConvBNAct(in_chs if i == 0 else mid_chs, mid_chs, kernel_size) for i in range(layer_num)
        )
        self.aggregation = ConvBNAct(in_chs + layer_num * mid_chs, out_chs, 1)

    def forward(self, x):
        identity = x
        outs = [x]
        for layer in self.layers:
            x = layer(x)
            outs.append(x)
        x = self.aggregation(torch.cat(outs, dim=1))
        return x + identity if self.residual else x


class HG_Stage(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs, block_num, layer_num, downsample=True, kernel_size=3):
        super().__init__()
        self.downsample = ConvBNAct(in_chs, in_chs, 3, stride=2, groups=in_chs, use_act=False) if downsample else nn.Identity()
        self.blocks = nn.Sequential(
            *[HG_Block(in_chs if i == 0 else out_chs, mid_chs, out_chs, layer_num, kernel_size, residual=i > 0) for i in range(block_num)]
        )

    def forward(self, x):
        return self.blocks(self.downsample(x))


class FrozenBatchNorm2d(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.eps = eps

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        bias = self.bias - self.running_mean * scale
        return x * scale.view(1, -1, 1, 1) + bias.view(1, -1, 1, 1)


class HGNetv2(nn.Module):
    arch_configs = {
        "B0": {
            "stem_channels": [3, 16, 16],
            "stage_config": {
                "stage1": [16, 16, 64, 1, False, 3, 3],
                "stage2": [64, 32, 256, 1, True, 3, 3],
                "stage3": [256, 64, 512, 2, True, 5, 3],
                "stage4": [512, 128, 1024, 1, True, 5, 3],
            },
            "url": "https://github.com/Peterande/storage/releases/download/dfinev1.0/PPHGNetV2_B0_stage1.pth",
        },
        "B4": {
            "stem_channels": [3, 32, 48],
            "stage_config": {
                "stage1": [48, 48, 128, 1, False, 3, 6],
                "stage2": [128, 96, 512, 1, True, 3, 6],
                "stage3": [512, 192, 1024, 3, True, 5, 6],
                "stage4": [1024, 384, 2048, 1, True, 5, 6],
            },
            "url": "https://github.com/Peterande/storage/releases/download/dfinev1.0/PPHGNetV2_B4_stage1.pth",
        },
    }

    def __init__(self, name, return_idx=(1, 2, 3), freeze_at=0, freeze_norm=True, pretrained=True, local_model_dir="weight/hgnetv2/"):
        super().__init__()
        self.return_idx = list(return_idx)
        stem_channels = self.arch_configs[name]["stem_channels"]
        stage_config = self.arch_configs[name]["stage_config"]
        download_url = self.arch_configs[name]["url"]
        self._out_channels = [stage_config[k][2] for k in stage_config]

        self.stem = StemBlock(*stem_channels)
        self.stages = nn.ModuleList()
        for k in stage_config:
            in_chs, mid_chs, out_chs, block_num, downsample, kernel_size, layer_num = stage_config[k]
            self.stages.append(HG_Stage(in_chs, mid_chs, out_chs, block_num, layer_num, downsample, kernel_size))

        if freeze_at >= 0:
            for p in self.stem.parameters():
                p.requires_grad = False
        if freeze_norm:
            self._freeze_norm(self)

        if pretrained:
            try:
                # If the file doesn't exist locally, download from the URL
                if safe_get_rank() == 0:
                    print("If the pretrained HGNetV2 can't be downloaded automatically, please check your network connection "
                          f"or download the model manually from {download_url} to {local_model_dir}.")
                    state = torch.hub.load_state_dict_from_url(download_url, map_location="cpu", model_dir=local_model_dir)
                    print(f"Loaded stage1 {name} HGNetV2 from URL.")

                # Wait for rank 0 to download the model
                safe_barrier()

                # All processes load the downloaded model
                model_path = local_model_dir + "PPHGNetV2_" + name + "_stage1.pth"
                state = torch.load(model_path, map_location="cpu")

                self.load_state_dict(state)
                print(f"Loaded stage1 {name} HGNetV2 from URL.")

            except (Exception, KeyboardInterrupt) as e:
                if safe_get_rank() == 0:
                    print(f"{str(e)}")
                    logging.error("CRITICAL WARNING: Failed to load pretrained HGNetV2 model")
                    logging.error(f"Please check your network connection. Or download the model manually from {download_url} to {local_model_dir}.")
                exit()

    def _freeze_norm(self, m: nn.Module):
        if isinstance(m, nn.BatchNorm2d):
            frozen = FrozenBatchNorm2d(m.num_features)
            return frozen
        for name, child in m.named_children():
            new_child = self._freeze_norm(child)
            if new_child is not child:
                setattr(m, name, new_child)
        return m

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for idx, stage in enumerate(self.stages):
            x = stage(x)
            if idx in self.return_idx:
                outs.append(x)
        return outs
