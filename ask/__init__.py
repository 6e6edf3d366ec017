"""The ask engine: language choice (``language``), text analysis (``analysis``) and ranking (``index``)."""
