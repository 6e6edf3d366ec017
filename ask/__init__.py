"""The ask engine: built by the pipeline, loaded by the server from a snapshot (``engine``).

Its rooms: ``entries`` (what it answers with), ``lexical`` (analysis, scripts, the BM25F index
and its stored form), ``dense`` (the encoder, its threads, entry vectors, the vector cache),
``decision`` (the features and the fitted fusion), ``model`` (the encoder's model file, delta,
store and tokenizer) and ``training`` (PyTorch, only there). Above the rooms stand the engine and
``evaluation`` (how well it answers the labelled questions), which asks the engine; no room imports
either (``tests/unit/test_layout.py``).
docs/architecture.md's table names each module.
"""
