"""composer's HuggingFaceModel.eval_forward: an evaluator's batches carry a `mode` naming its task
("generate", "icl_task"), set by the code that builds every rank's batches for that evaluator, so
`batch.get("mode") == "generate"` takes every rank into the same arm, with its collectives."""
import torch.distributed as dist


class HuggingFaceModel:
    def __init__(self, model, tokenizer, use_logits=False):
        self.model = model
        self.tokenizer = tokenizer
        self.use_logits = use_logits

    def eval_forward(self, batch, outputs=None):
        if batch.get("mode", None) == "generate":
            generation = self.model.generate(batch["input_ids"], synced_gpus=dist.get_world_size() > 1)
            return self.tokenizer.batch_decode(generation)
        if self.use_logits or batch["mode"] in ("icl_task", "lm_task"):
            scores = self.model(batch["input_ids"]).logits
            dist.all_reduce(scores.sum().reshape(1))
            return scores
        return self.model(batch["input_ids"])
