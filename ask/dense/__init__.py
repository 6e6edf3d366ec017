"""Dense evidence: the sentence encoder, how its threads run, and the entry vectors it made."""
