"""A release and reading it: the folder's files and page pack (``folder``), its manifest
(``manifest``), the snapshot's tables loaded and held for serving (``snapshot``), releases on a
local disk (``local_store``) and in an S3-compatible store (``object_store``), and a replica
following a store (``replica``). Written by ``publish``, read by ``serve``."""
