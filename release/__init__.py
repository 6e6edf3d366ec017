"""A release as it is read: the folder's files and page pack (``folder``), the snapshot's tables
loaded and held for serving (``snapshot``), the local and S3 stores (``store``) and a replica
following a store (``replica``). Written by ``publish``, read by ``serve``."""
