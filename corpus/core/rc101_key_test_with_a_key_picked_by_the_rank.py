"""The look-alike of safe_key_test_with_a_key_chosen_alike.py that hangs: each rank looks up a
key of its own (`fields[rank % len(fields)]`), and only the ranks whose field the batch holds
enter the all-reduce."""
import torch
import torch.distributed as dist


def count_tokens(model, loader, tokens_seen, fields):
    key = fields[dist.get_rank() % len(fields)]
    for batch in loader:
        if key in batch:
            present = torch.ones(1)
            dist.all_reduce(present)  # expect: RC101
            tokens_seen += present.item()
        model(**batch).loss.backward()
    return tokens_seen
