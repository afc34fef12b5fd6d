"""The sequence comparison: classes of ranks, the collectives each class issues, and where they
part."""
