"""Safe twin of sglang_hiradix_writing_check_skips_all_reduce: as in the merged fix of
sglang#26923 (and #27489 / #28430 for the other radix caches), `writing_check` no longer returns
early on an empty local `ongoing_write_through`; every TP rank enters the MIN all-reduce (an empty
rank contributes 0) and only the ack-consuming loop is guarded by the local state.

Thread: https://github.com/sgl-project/sglang/pull/26923
"""
import heapq
import logging
import pickle
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


def broadcast_pyobj(data: List, rank: int, dist_group: dist.ProcessGroup, src: int = 0) -> List:
    """Broadcast a Python object list from `src` over a CPU (gloo) group, as sglang.srt.utils."""
    if rank == src:
        if len(data) == 0:
            dist.broadcast(torch.tensor([0], dtype=torch.long), src=src, group=dist_group)
        else:
            serialized = pickle.dumps(data)
            tensor_data = torch.ByteTensor(np.frombuffer(serialized, dtype=np.uint8))
            dist.broadcast(torch.tensor([len(serialized)], dtype=torch.long), src=src, group=dist_group)
            dist.broadcast(tensor_data, src=src, group=dist_group)
        return data
    tensor_size = torch.tensor([0], dtype=torch.long)
    dist.broadcast(tensor_size, src=src, group=dist_group)
    size = int(tensor_size.item())
    if size == 0:
        return []
    tensor_data = torch.empty(size, dtype=torch.uint8)
    dist.broadcast(tensor_data, src=src, group=dist_group)
    return pickle.loads(tensor_data.numpy().tobytes())


class TreeNode:
    _counter = 0

    def __init__(self, key, value=None):
        TreeNode._counter += 1
        self.id = TreeNode._counter
        self.key = key
        self.value = value
        self.host_value = None
        self.lock_ref = 0
        self.hit_count = 0
        self.last_access_time = 0.0

    @property
    def backuped(self) -> bool:
        return self.host_value is not None

    def __lt__(self, other):
        return self.last_access_time < other.last_access_time


class HiRadixCache:
    def __init__(self, cache_controller, tp_group: dist.ProcessGroup, write_through_threshold: int = 1):
        self.cache_controller = cache_controller
        self.tp_group = tp_group
        self.tp_world_size = dist.get_world_size(group=tp_group)
        self.write_through_threshold = write_through_threshold
        self.ongoing_write_through: Dict[int, TreeNode] = {}
        self.ongoing_load_back: Dict[int, TreeNode] = {}
        self.evictable_leaves: List[TreeNode] = []

    def inc_lock_ref(self, node: TreeNode) -> None:
        node.lock_ref += 1

    def dec_lock_ref(self, node: TreeNode) -> None:
        node.lock_ref -= 1
        if node.lock_ref == 0:
            heapq.heappush(self.evictable_leaves, node)

    def write_backup(self, node: TreeNode) -> int:
        host_indices = self.cache_controller.write(device_indices=node.value, node_id=node.id)
        if host_indices is None:
            # host pool full on this rank: nothing is enqueued here
            return 0
        node.host_value = host_indices
        self.ongoing_write_through[node.id] = node
        self.inc_lock_ref(node)
        return len(host_indices)

    def inc_hit_count(self, node: TreeNode) -> None:
        node.hit_count += 1
        if not node.backuped and node.hit_count >= self.write_through_threshold:
            self.write_backup(node)

    def writing_check(self) -> None:
        # Always enter the all-reduce: ranks may disagree on whether the queue is empty.
        finish_count = 0
        if len(self.ongoing_write_through) > 0:
            for _, finish_event, _ in self.cache_controller.ack_write_queue:
                if not finish_event.query():
                    break
                finish_count += 1
        queue_size = torch.tensor(finish_count, dtype=torch.int, device="cpu")
        if self.tp_world_size > 1:
            # synchronize TP workers to make the same update to radix cache
            dist.all_reduce(queue_size, op=dist.ReduceOp.MIN, group=self.tp_group)

        finish_count = int(queue_size.item())
        if len(self.ongoing_write_through) > 0:
            while finish_count > 0:
                _, finish_event, ack_list = self.cache_controller.ack_write_queue.pop(0)
                finish_event.synchronize()
                for ack_id in ack_list:
                    backuped_node = self.ongoing_write_through.pop(ack_id)
                    self.dec_lock_ref(backuped_node)
                finish_count -= 1

    def loading_check(self) -> None:
        # DMA completions of host->device loads, consumed locally on each rank
        while self.cache_controller.ack_load_queue:
            finish_event, ack_list = self.cache_controller.ack_load_queue[0]
            if not finish_event.query():
                break
            self.cache_controller.ack_load_queue.pop(0)
            for ack_id in ack_list:
                node = self.ongoing_load_back.pop(ack_id, None)
                if node is not None:
                    self.dec_lock_ref(node)

    def evict(self, num_tokens: int) -> int:
        evicted = 0
        while evicted < num_tokens and self.evictable_leaves:
            node = heapq.heappop(self.evictable_leaves)
            if node.lock_ref > 0:
                continue
            if not node.backuped:
                evicted += self.write_backup(node)
                continue
            self.cache_controller.mem_pool_device.free(node.value)
            evicted += len(node.value)
        return evicted


class Scheduler:
    def __init__(self, server_args, tp_rank: int, tp_cpu_group: dist.ProcessGroup, tree_cache: HiRadixCache,
                 recv_from_tokenizer, model_runner):
        self.server_args = server_args
        self.tp_rank = tp_rank
        self.tp_size = server_args.tp_size
        self.tp_cpu_group = tp_cpu_group
        self.tree_cache = tree_cache
        self.recv_from_tokenizer = recv_from_tokenizer
        self.model_runner = model_runner
        self.waiting_queue: List = []
        self.running_batch = None

    def recv_requests(self) -> List:
        if self.tp_rank == 0:
            recv_reqs = []
            while True:
                req = self.recv_from_tokenizer.poll()
                if req is None:
                    break
                recv_reqs.append(req)
        else:
            recv_reqs = None
        if self.tp_size != 1:
            recv_reqs = broadcast_pyobj(recv_reqs, self.tp_rank, self.tp_cpu_group, src=0)
        return recv_reqs

    def check_hicache_events(self) -> None:
        self.tree_cache.writing_check()
        self.tree_cache.loading_check()

    def get_new_batch_prefill(self) -> Optional[list]:
        self.check_hicache_events()
        if not self.waiting_queue:
            return None
        batch, self.waiting_queue = self.waiting_queue[: self.server_args.max_prefill_reqs], \
            self.waiting_queue[self.server_args.max_prefill_reqs:]
        for req in batch:
            for node in req.matched_nodes:
                self.tree_cache.inc_hit_count(node)
        return batch

    def event_loop_normal(self) -> None:
        while True:
            self.waiting_queue.extend(self.recv_requests())
            batch = self.get_new_batch_prefill()
            if batch is not None:
                self.running_batch = self.model_runner.forward(batch)  # TP all-reduces inside
            elif self.running_batch is not None:
                self.running_batch = self.model_runner.decode(self.running_batch)
