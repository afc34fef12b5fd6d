"""A trimmed copy of the parts of hi-ml-histopathology (microsoft/hi-ml, hi-ml-histopathology/src/
histopathology/*, June 2022) that a DeepMIL slide-classification run goes through: the Lightning module
with its torchmetrics, and the outputs handler that gathers the epoch results and writes tables and
plots on the global rank 0."""
