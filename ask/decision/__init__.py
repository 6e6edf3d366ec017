"""The decision: each entry's features and the fusion fitted on them, beneath the engine (which
imports it), so it imports nothing above it."""
