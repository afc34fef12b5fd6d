"""lm-eval's `evaluate()` (v0.4.0): build this rank's requests, pad so that every rank runs the same
number of requests, run them through the LM, then wait for the other ranks. The padding is recorded
under `task.OUTPUT_TYPE` and read back under `reqtype` (lm-evaluation-harness#951)."""
from collections import defaultdict

import torch


def evaluate(lm, tasks, limit=None):
    requests = defaultdict(list)
    padding_requests = defaultdict(int)

    for task in tasks:
        task.build_all_requests(limit=limit, rank=lm.rank, world_size=lm.world_size)
        # aggregate Instances by LM method requested to get output
        reqtype = "loglikelihood" if task.OUTPUT_TYPE == "multiple_choice" else task.OUTPUT_TYPE
        requests[reqtype].extend(task.instances)

        if lm.world_size > 1:
            instances_rnk = torch.tensor(len(task.instances), device=lm.device)
            gathered_item = lm.gather(instances_rnk).cpu().tolist()
            # number of pseudo-requests to pad with (FSDP/ZeRO-3 require even batches among ranks)
            numpad = max(gathered_item) - gathered_item[lm.rank]
            padding_requests[task.OUTPUT_TYPE] += numpad

    for reqtype, reqs in requests.items():
        cloned_reqs = []
        for req in reqs:
            cloned_reqs.extend([req] * req.repeats)
        if lm.world_size > 1 and padding_requests[reqtype] > 0:
            for _ in range(padding_requests[reqtype]):
                cloned_reqs.extend([req] * req.repeats)

        resps = getattr(lm, reqtype)(cloned_reqs)
        for x, req in zip(resps, cloned_reqs):
            req.resps.append(x)
        if lm.world_size > 1:
            lm.barrier()

    results = {}
    for task in tasks:
        scores, docs = defaultdict(dict), {}
        for inst in task.instances:
            scores[inst.doc_id][inst.idx] = inst.resps[0]
            docs[inst.doc_id] = inst.doc
        acc = [max(s, key=s.get) == task.doc_to_target(docs[d]) for d, s in scores.items()]
        results[type(task).__name__] = sum(acc) / max(len(acc), 1)
    return results
