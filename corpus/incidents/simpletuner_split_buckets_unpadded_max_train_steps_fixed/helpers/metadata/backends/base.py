"""Aspect-ratio bucket bookkeeping for one dataset (trimmed MetadataBackend)."""
import json
import logging
import os
from math import ceil

logger = logging.getLogger("MetadataBackend")


class MetadataBackend:
    def __init__(self, id, instance_data_dir, cache_file, accelerator, batch_size, repeats=0):
        self.id = id
        self.instance_data_dir = instance_data_dir
        self.cache_file = cache_file
        self.accelerator = accelerator
        self.batch_size = batch_size
        self.repeats = repeats
        self.aspect_ratio_bucket_indices = {}
        self.seen_images = {}
        self.read_only = False

    def refresh_buckets(self):
        """Main process only: sort every image of the dataset into its aspect bucket."""
        buckets = {}
        with open(os.path.join(self.instance_data_dir, "sizes.json")) as fh:
            sizes = json.load(fh)
        for image_path, (width, height) in sorted(sizes.items()):
            aspect = str(round(width / height, 2))
            buckets.setdefault(aspect, []).append(image_path)
        self.aspect_ratio_bucket_indices = buckets
        with open(self.cache_file, "w") as fh:
            json.dump(buckets, fh)

    def reload_cache(self):
        with open(self.cache_file) as fh:
            self.aspect_ratio_bucket_indices = json.load(fh)

    def has_single_underfilled_bucket(self):
        buckets = list(self.aspect_ratio_bucket_indices.values())
        return len(buckets) == 1 and len(buckets[0]) < self.batch_size

    def __len__(self):
        """The number of batches this process will draw from its share of the buckets."""

        def repeat_len(bucket):
            return len(bucket) * (self.repeats + 1)

        return sum(
            (repeat_len(bucket) + (self.batch_size - 1)) // self.batch_size
            for bucket in self.aspect_ratio_bucket_indices.values()
            if repeat_len(bucket) >= self.batch_size
        )

    def split_buckets_between_processes(self, gradient_accumulation_steps=1, apply_padding=False):
        """Keep only this process's part of every bucket."""
        new_aspect_ratio_bucket_indices = {}
        total_images = sum(len(bucket) for bucket in self.aspect_ratio_bucket_indices.values())
        num_processes = self.accelerator.num_processes
        effective_batch_size = self.batch_size * num_processes * gradient_accumulation_steps

        for bucket, images in self.aspect_ratio_bucket_indices.items():
            total_img_count_incl_repeats = len(images) * (self.repeats + 1)
            num_batches = ceil(total_img_count_incl_repeats / effective_batch_size)
            trimmed_images = images[: num_batches * effective_batch_size]
            if len(trimmed_images) == 0:
                logger.error(f"Bucket {bucket} has no images left after trimming.")
            # with apply_padding every process gets the same share (the last image is repeated)
            with self.accelerator.split_between_processes(trimmed_images, apply_padding=apply_padding) as images_split:
                new_aspect_ratio_bucket_indices[bucket] = images_split

        self.aspect_ratio_bucket_indices = new_aspect_ratio_bucket_indices
        post_total = sum(len(bucket) for bucket in self.aspect_ratio_bucket_indices.values())
        if total_images != post_total:
            self.read_only = True
        logger.debug(f"(id={self.id}) items before split: {total_images}, after: {post_total}")

    def mark_batch_as_seen(self, image_paths):
        self.seen_images.update({path: True for path in image_paths})

    def is_seen(self, image_path):
        return self.seen_images.get(image_path, False)

    def reset_seen_images(self):
        self.seen_images = {}
