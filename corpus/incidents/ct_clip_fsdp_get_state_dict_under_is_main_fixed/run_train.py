"""CT-CLIP contrastive pre-training launched with `accelerate launch --use_fsdp ...` -- safe twin.

Thread: https://github.com/ibrahimethemhamamci/CT-CLIP/issues/16 (fix: PR #17)
Same program as ct_clip_fsdp_get_state_dict_under_is_main with the fix of PR #17 applied:
`accelerator.get_state_dict(self.CTClip, unwrap=False)` runs on every rank every `save_model_every`
steps; only the write and the message stay under `self.is_main`.
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
