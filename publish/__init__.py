"""Everything that writes a release: one publish start to finish (``new_release``), the snapshot
copied from the build's marts (``snapshot_copy``), the documents, distributions and page pack
(``release_files``) and what crawlers read first (``crawler_files``)."""
