"""The abstract interpreter: rank dependence and collective trees, function by function."""
