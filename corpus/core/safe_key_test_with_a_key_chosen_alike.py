"""The Trainer's token counter: the name of the model's main input is looked up once
(`getattr(model, "main_input_name", "input_ids")`) and tested against this rank's batch. A batch's
keys are its collator's, alike on every rank; a key the code chose alike asks what a constant
key asks. The look-alike whose key is picked by the rank is in
rc101_key_test_with_a_key_picked_by_the_rank.py."""
import torch.distributed as dist


def count_tokens(model, loader, tokens_seen):
    main_input_name = getattr(model, "main_input_name", "input_ids")
    for batch in loader:
        if main_input_name not in batch:
            print("model has no main input name")
        else:
            counted = batch[main_input_name].new_tensor([batch[main_input_name].numel()])
            dist.all_reduce(counted)
            tokens_seen += counted.item()
        model(**batch).loss.backward()
    return tokens_seen
