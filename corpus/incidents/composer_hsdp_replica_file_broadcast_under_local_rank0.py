"""Sharded-checkpoint reader used when resuming an HSDP (hybrid-sharded FSDP) run from an object
store: the first replica downloads the .distcp shard files, then every file is broadcast across the
replicate process group so the other replicas do not download again (composer/utils/checkpoint.py,
DistCPObjectStoreReader.read_data).

Thread: https://github.com/mosaicml/composer/pull/3313 ("Fix HSDP with ShardDegree < 8")
Project: mosaicml/composer
What hung: with HSDP on one node with a 2 x 4 device mesh, rank 0 "failed this checkpoint files
broadcast": the per-file `dist.broadcast_object_list(..., group=replicate_process_group)` sat under
`if dist.get_local_rank() == 0:` ("only 1 rank per node needs to transfer file"). Rank 4 is in the
same replicate group as rank 0 but has local rank 4, so it never joined; rank 0 waited in the
broadcast until the NCCL timeout and the resumption died.
Fix (the PR): let the first rank of each shard group join as well --
`if dist.get_local_rank() == 0 or dist.get_global_rank(shard_process_group) == 0:` -- so every
member of a replicate group takes part in its broadcast, and restrict only the file write to local
rank 0.
Expected rankcheck finding: RC101 on the per-file `dist.broadcast_object_list` under the
`dist.get_local_rank() == 0` test (rank obtained through composer's `dist` helper module).
Inferred: the trimmed download step and the `load_hsdp_checkpoint` driver; the broadcast block is
the pre-fix code.
"""
import logging
import os
from pathlib import Path
from typing import Optional

import torch
from torch.distributed import checkpoint as dist_cp
from torch.distributed._tensor import DeviceMesh
from torch.distributed.checkpoint.planner import LoadPlan, LoadPlanner

from composer.utils import dist
from composer.utils.checkpoint import FileSystemReaderWithValidation, download_object_or_file
from composer.utils.object_store import ObjectStore

log = logging.getLogger(__name__)


class DistCPObjectStoreReader(FileSystemReaderWithValidation):

    def __init__(self, source_path: str, destination_path: str, object_store: ObjectStore,
                 device_mesh: Optional[DeviceMesh]):
        self.source_path = source_path
        self.destination_path = destination_path
        self.object_store = object_store
        self.device_mesh = device_mesh

        Path(self.destination_path).mkdir(parents=True, exist_ok=True)
        metadata_destination = os.path.join(self.destination_path, '.metadata')
        if dist.get_local_rank() == 0:
            download_object_or_file(str(Path(source_path) / '.metadata'), metadata_destination, object_store)
        dist.barrier()
        super().__init__(destination_path)

    def read_data(self, plan: LoadPlan, planner: LoadPlanner):
        first_replica = self.device_mesh is None or self.device_mesh.ndim == 1 or (
            self.device_mesh.ndim >= 2 and self.device_mesh.get_local_rank(mesh_dim=0) == 0
        )

        # 1. Collect the files every rank needs (for deduplication across local ranks)
        relative_file_paths = {self.storage_data[item.storage_index].relative_path for item in plan.items}
        all_file_paths = dist.all_gather_object(relative_file_paths)

        # 2. First replica downloads what it needs
        if first_replica:
            local_rank_0 = dist.get_global_rank() - dist.get_local_rank()
            for relative_file_path in sorted(relative_file_paths):
                is_downloaded = any(relative_file_path in all_file_paths[i]
                                    for i in range(local_rank_0, dist.get_global_rank()))
                file_destination = str(Path(self.destination_path) / relative_file_path)
                if not is_downloaded and not os.path.exists(file_destination):
                    object_name = str(Path(self.source_path) / relative_file_path)
                    download_object_or_file(object_name, file_destination, self.object_store)

        # 3. Wait for all ranks to finish downloading
        dist.barrier()

        # 4. Broadcast files to all other replicas if HSDP
        if self.device_mesh is not None and self.device_mesh.ndim == 2:
            replicate_process_group = self.device_mesh.get_group(0)
            shard_size = self.device_mesh.size(1)
            rank_in_first_replica = dist.get_global_rank() % shard_size
            sender = dist.get_global_rank() == rank_in_first_replica
            receiver = dist.get_global_rank() != rank_in_first_replica

            file_list = [[f for f in sorted(os.listdir(self.destination_path)) if f.endswith('.distcp')]]
            dist.broadcast_object_list(file_list, src=rank_in_first_replica, group=replicate_process_group)
            file_list = file_list[0]

            for file_name in file_list:
                if dist.get_local_rank() == 0:  # Only 1 rank per node needs to transfer file
                    full_path = os.path.join(self.destination_path, file_name)
                    file_object = [None]
                    if sender:
                        with open(full_path, 'rb') as f:
                            file_object = [{'content': f.read()}]
                    dist.broadcast_object_list(  # expect: RC101
                        file_object,
                        src=dist.get_global_rank() % shard_size,
                        group=replicate_process_group,
                    )
                    received_file_object = file_object[0]
                    assert received_file_object is not None
                    if receiver and not os.path.exists(full_path):
                        with open(full_path, 'wb') as f:
                            f.write(received_file_object['content'])

            dist.barrier()

        return super().read_data(plan, planner)


def load_hsdp_checkpoint(state_dict: dict, source_path: str, object_store: ObjectStore,
                         device_mesh: DeviceMesh, local_dir: str = '/tmp/composer-ckpt') -> dict:
    """Resume every rank of an HSDP run from a sharded checkpoint stored remotely."""
    reader = DistCPObjectStoreReader(source_path, local_dir, object_store, device_mesh)
    dist_cp.load_state_dict(state_dict, storage_reader=reader)
    torch.cuda.synchronize()
    log.info(f'rank {dist.get_global_rank()} loaded checkpoint from {source_path}')
    return state_dict
