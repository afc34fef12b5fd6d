"""The program model: the summary IR, and the whole program linked from the summaries (names
resolved across modules, the call graph, which functions reach a collective)."""
