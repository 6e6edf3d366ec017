"""Fine-tuning the ask encoder in PyTorch (the only part of ``ask`` that imports it): ``network``, ``trainer``."""

from ask.encoder_threads import ensure_encoder_threads

# PyTorch's OpenMP runtime reads how its threads wait when it loads, with the first import of torch.
ensure_encoder_threads()
