"""Entry point: fine-tune RF-DETR pose on two or more GPUs, `torchrun --nproc_per_node=2 train_pose.py`.

Part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349; see
libreyolo/training/trainer.py for the incident description.
"""
import argparse
from types import SimpleNamespace

from libreyolo.models.rfdetr.nn import LibreRFDETRModel
from libreyolo.models.rfdetr.trainer import RFDETRConfig, RFDETRTrainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="coco8-pose")
    parser.add_argument("--size", default="s")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--imgsz", type=int, default=560)
    args = parser.parse_args()

    config = RFDETRConfig(data=args.data, size=args.size, epochs=args.epochs, batch=args.batch, imgsz=args.imgsz)
    model = LibreRFDETRModel(config=args.size, nb_classes=1, pose=True, num_keypoints=config.num_keypoints)
    wrapper = SimpleNamespace(task="pose", names={0: "person"}, num_keypoints=config.num_keypoints)
    trainer = RFDETRTrainer(model, wrapper_model=wrapper, config=config)
    results = trainer.train()
    print(results["final_loss"])


if __name__ == "__main__":
    main()
