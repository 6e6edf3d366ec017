"""reuse-data: the public data service of an independent publisher of reusable-product reviews.

This package is the command line on top (``reuse_data.cli``): it imports the parts (inputs,
pipelines, warehouse, ask, release, public, publish, serve, intake, foundations) and none of
them imports it.
"""
