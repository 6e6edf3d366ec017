"""The decision: each entry's features, the fusion fitted on them, and how well it answers."""
