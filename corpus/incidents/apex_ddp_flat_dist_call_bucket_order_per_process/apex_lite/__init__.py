"""A trimmed copy of the 2018 `apex` package: `apex.parallel.DistributedDataParallel` and the fp16
helpers its ImageNet example uses."""
