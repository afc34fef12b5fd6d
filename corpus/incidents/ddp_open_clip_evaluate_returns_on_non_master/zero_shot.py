"""Zero-shot ImageNet evaluation: classifier weights from class-name prompts, then top-1/top-5."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def build_zero_shot_classifier(model, tokenizer, classnames, templates, device):
    weights = []
    for name in classnames:
        texts = tokenizer([t(name) for t in templates]).to(device)
        emb = F.normalize(model.encode_text(texts), dim=-1).mean(0)
        weights.append(F.normalize(emb, dim=-1))
    return torch.stack(weights, dim=1)


def run(model, classifier, dataloader, args):
    top1 = top5 = n = 0.0
    with torch.no_grad():
        for images, target in dataloader:
            images, target = images.to(args.device), target.to(args.device)
            image_features = model(image=images)["image_features"]
            logits = 100.0 * image_features @ classifier
            pred = logits.topk(5, dim=-1).indices
            top1 += (pred[:, 0] == target).sum().item()
            top5 += (pred == target[:, None]).any(-1).sum().item()
            n += images.size(0)
    return top1 / n, top5 / n


def zero_shot_eval(model, data, epoch, args, tokenizer=None):
    if "imagenet-val" not in data:
        return {}
    classifier = build_zero_shot_classifier(model, tokenizer, data["classnames"], data["templates"], args.device)
    top1, top5 = run(model, classifier, data["imagenet-val"].dataloader, args)
    return {"imagenet-zeroshot-val-top1": top1, "imagenet-zeroshot-val-top5": top5}
