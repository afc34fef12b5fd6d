"""Trimmed copy of axolotl (August 2023, with axolotl#461): the sample-packing data loader and the
Trainer subclass that uses it."""
