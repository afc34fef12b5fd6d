"""A small hook-based training runner in the style of ppln."""
