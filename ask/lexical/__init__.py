"""Lexical evidence: a question's words read in six languages and scripts, and the BM25F index."""
