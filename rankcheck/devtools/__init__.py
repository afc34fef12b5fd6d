"""Tools for contributors (not used at run time)."""
