"""Fine-tuning the ask encoder in PyTorch (the only part of ``ask`` that imports it): ``network``, ``trainer``."""
