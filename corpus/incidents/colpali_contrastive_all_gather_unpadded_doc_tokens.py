"""ColQwen2 (ColPali-style late-interaction retriever) fine-tuning with colpali-engine's
ContrastiveTrainer, a transformers Trainer subclass, on 4 GPUs with gradient accumulation. To get
in-batch negatives from every GPU, compute_loss all-gathers the document multi-vector embeddings
(batch, doc_tokens, dim) on each optimizer-step micro-batch and scores the local queries against all
of them.

Thread: https://github.com/illuin-tech/colpali/pull/278 ("fix: fix missing padding before gather")
Project: illuin-tech/colpali
What hung: the collator pads each process's documents to the longest in its own batch, so the
number of document tokens (dim 1 of doc_outputs) differs from process to process.
concat_all_gather calls torch.distributed.nn.functional.all_gather on those tensors, which sizes
every receive buffer like the local tensor: the collective runs with a different shape on every
rank. The PR reports the gathered doc_outputs being truncated to the local GPU's size; with NCCL a
size mismatch in all_gather can equally hang or hand back garbage.
Fix (the merged PR): pad doc_outputs across processes on the token dimension before the gather,
`self.accelerator.pad_across_processes(doc_outputs, dim=1, pad_index=0, pad_first=True)`.
Expected rankcheck finding: RC104 on the all_gather in concat_all_gather.
Inferred: the training script around the trainer (model, LoRA config, dataset, collator details,
hyper-parameters) and the inlined ColBERT loss; the trainer code follows colpali-engine before the PR.
"""
import torch
import torch.nn.functional as F
from colpali_engine.collators import VisualRetrieverCollator
from colpali_engine.models import ColQwen2, ColQwen2Processor
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from torch.distributed.nn.functional import all_gather  # PyTorch >= 2.1
from transformers import Trainer, TrainingArguments


def concat_all_gather(t: torch.Tensor) -> torch.Tensor:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.cat(all_gather(t), dim=0)  # expect: RC104
    return t


class ColbertLoss(torch.nn.Module):
    def __init__(self, temperature=0.02):
        super().__init__()
        self.temperature = temperature

    def forward(self, query_embeddings, doc_embeddings, offset=0):
        # late interaction: max over doc tokens, sum over query tokens
        scores = torch.einsum("bnd,csd->bcns", query_embeddings, doc_embeddings).amax(dim=3).sum(dim=2)
        labels = torch.arange(query_embeddings.shape[0], device=scores.device) + offset
        return F.cross_entropy(scores / self.temperature, labels)


class ContrastiveTrainer(Trainer):
    def __init__(self, loss_func, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_func = loss_func
        self.args.remove_unused_columns = False

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        query_outputs = model(input_ids=inputs["query_input_ids"], attention_mask=inputs["query_attention_mask"])
        doc_outputs = model(**{k[4:]: v for k, v in inputs.items() if k.startswith("doc")})
        offset = 0
        if self.accelerator.num_processes > 1 and self.accelerator.sync_gradients:
            # gather docs across all processes
            if num_items_in_batch is None:
                num_items_in_batch = inputs["doc_input_ids"].shape[0]
            doc_outputs = concat_all_gather(doc_outputs)
            rank = self.accelerator.process_index
            offset = rank * num_items_in_batch
        loss = self.loss_func(query_outputs, doc_outputs, offset=offset)
        return (loss, (query_outputs, doc_outputs)) if return_outputs else loss


def main():
    model_name = "vidore/colqwen2-base"
    model = ColQwen2.from_pretrained(model_name, torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2")
    processor = ColQwen2Processor.from_pretrained(model_name)
    model = get_peft_model(model, LoraConfig(r=32, lora_alpha=32, lora_dropout=0.1, init_lora_weights="gaussian",
                                             target_modules=r"(.*(model).*(down_proj|gate_proj|up_proj|k_proj|q_proj|v_proj|o_proj).*$|.*(custom_text_proj).*$)"))

    train_ds = load_dataset("vidore/colpali_train_set", split="train")
    eval_ds = load_dataset("vidore/colpali_train_set", split="test")
    collator = VisualRetrieverCollator(processor=processor, max_length=256)

    args = TrainingArguments(
        output_dir="checkpoints/colqwen2-lora",
        per_device_train_batch_size=32,
        per_device_eval_batch_size=16,
        gradient_accumulation_steps=4,
        num_train_epochs=1,
        learning_rate=5e-5,
        warmup_steps=100,
        bf16=True,
        gradient_checkpointing=True,
        gradient_checkpointing_kwargs={"use_reentrant": False},
        eval_strategy="steps",
        eval_steps=200,
        save_steps=500,
        logging_steps=10,
        dataloader_num_workers=8,
        ddp_find_unused_parameters=False,
        report_to="wandb",
    )
    trainer = ContrastiveTrainer(
        loss_func=ColbertLoss(), model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
        data_collator=collator,
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
