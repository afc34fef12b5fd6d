"""CT-CLIP contrastive pre-training (CT volumes + radiology reports) launched with
`accelerate launch --use_fsdp --fsdp_sharding_strategy 1 run_train.py ...`.

Thread: https://github.com/ibrahimethemhamamci/CT-CLIP/issues/16 ("Saved model is incomplete when use
--use_fsdp", fix proposed in PR #17 "fix(train): fix save model when using fsdp")
Project: ibrahimethemhamamci/CT-CLIP (scripts/run_train.py + scripts/CTCLIPTrainer.py), Hugging Face accelerate
What hung: with FSDP the trainer saved `unwrap_model(model).state_dict()` on the main process only, which
wrote a single shard. The maintainer suggested replacing it, still inside `if self.is_main and not (steps %
self.save_model_every):`, by `self.accelerator.get_state_dict(self.CTClip, unwrap=False)`. The reporter:
"after saving model with above code, it will get stuck in the backward of next step". Under FSDP
`get_state_dict` gathers the full parameters (all-gathers over the sharding group), so the main process
waited in those all-gathers while the other ranks had already entered the next step's forward/backward
collectives.
Fix (PR #17 by the reporter): call `get_state_dict` on every rank and keep only the file write
(`accelerator.save` + print) under `self.is_main`.
Expected rankcheck finding: RC101 on `state_dict = self.accelerator.get_state_dict(...)` at
CTCLIPTrainer.py:118 (a gathering framework call made only under the main-process test).
Inferred: the CT-ViT image encoder and CXR-BERT text tower are replaced by small modules (ct_clip.py),
the dataset by a tensor-file dataset (data.py); the rank-0 quick-inference block of train_step, the
unused save()/load() helpers and the nifti/plot utilities are left out.
"""
import argparse

from transformers import BertTokenizer

from CTCLIPTrainer import CTClipTrainer
from ct_clip import CTCLIP, SmallVolumeEncoder, SmallTextEncoder


def parse_args():
    parser = argparse.ArgumentParser(description="CT-CLIP training")
    parser.add_argument("--data_train", required=True)
    parser.add_argument("--reports_file_train", required=True)
    parser.add_argument("--results_folder", default="./results_ctclip")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--num_train_steps", type=int, default=100001)
    parser.add_argument("--lr", type=float, default=1.25e-6)
    parser.add_argument("--save_model_every", type=int, default=1000)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--dim_latent", type=int, default=512)
    return parser.parse_args()


def main():
    args = parse_args()
    tokenizer = BertTokenizer.from_pretrained("microsoft/BiomedVLP-CXR-BERT-specialized", do_lower_case=True)

    clip = CTCLIP(
        image_encoder=SmallVolumeEncoder(dim=294912 // 576),
        text_encoder=SmallTextEncoder(vocab_size=tokenizer.vocab_size, dim=768),
        dim_image=294912 // 576,
        dim_text=768,
        dim_latent=args.dim_latent,
    )

    trainer = CTClipTrainer(
        clip,
        tokenizer=tokenizer,
        data_train=args.data_train,
        reports_file_train=args.reports_file_train,
        batch_size=args.batch_size,
        num_train_steps=args.num_train_steps,
        lr=args.lr,
        save_model_every=args.save_model_every,
        results_folder=args.results_folder,
        num_workers=args.num_workers,
    )
    trainer.train()


if __name__ == "__main__":
    main()
