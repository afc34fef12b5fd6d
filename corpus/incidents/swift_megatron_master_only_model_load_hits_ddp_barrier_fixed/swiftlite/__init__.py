"""A trimmed copy of the pieces of ms-swift's Megatron path that the save step goes through."""
