"""A model library's loader: a context-parallel configuration, when one is passed among the
keyword options, shards the loaded model over a device mesh that every rank must build."""
import torch
from torch.distributed.device_mesh import init_device_mesh


class ModelMixin(torch.nn.Module):
    @classmethod
    def from_pretrained(cls, path, **kwargs):
        torch_dtype = kwargs.pop("torch_dtype", None)
        parallel_config = kwargs.pop("parallel_config", None)
        model = cls()
        model.load_state_dict(torch.load(f"{path}/model.pt", map_location="cpu"))
        if torch_dtype is not None:
            model = model.to(torch_dtype)
        if parallel_config is not None:
            model.enable_parallelism(parallel_config)
        return model

    def enable_parallelism(self, config):
        self.mesh = init_device_mesh("cuda", (config.world_size,), mesh_dim_names=("cp",))


class AutoencoderKL(ModelMixin):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Conv2d(3, 8, 3)
        self.decoder = torch.nn.Conv2d(8, 3, 3)
