"""The fix from the accelerate examples: every process calls gather_for_metrics; only the metric
bookkeeping and printing are for the main process."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    accelerator = Accelerator()
    model = torch.nn.Linear(16, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    eval_dataloader = DataLoader(TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,))), batch_size=8)
    model, optimizer, eval_dataloader = accelerator.prepare(model, optimizer, eval_dataloader)

    model.eval()
    correct = 0
    total = 0
    for inputs, labels in eval_dataloader:
        with torch.no_grad():
            logits = model(inputs)
        predictions = logits.argmax(dim=-1)
        all_predictions, all_labels = accelerator.gather_for_metrics((predictions, labels))
        correct += (all_predictions == all_labels).sum().item()
        total += all_labels.numel()
    if accelerator.is_main_process:
        print(f"accuracy: {correct / max(total, 1):.3f}")


if __name__ == "__main__":
    main()
