"""reuse-data: the public data service of an independent publisher of reusable-product reviews."""
