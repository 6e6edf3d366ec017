"""Everything that writes a release's files from a snapshot: the documents, distributions and
page pack (``release_files``) and what crawlers read first (``crawler_files``)."""
