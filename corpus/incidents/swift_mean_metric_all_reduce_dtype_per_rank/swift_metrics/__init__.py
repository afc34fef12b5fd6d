"""Metric helpers of an ms-swift-based SFT project (MeanMetric, token/sequence accuracy)."""
