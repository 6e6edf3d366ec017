"""Releases in an S3-compatible object store: publish uploads them, replicas download them.

The store mirrors the local release folders (``release.local_store``) under one prefix::

    s3://bucket/prefix/releases/<version>/<path>    every file of the release, manifest.json last
    s3://bucket/prefix/current                      the version replicas serve, one line

A publish uploads every file of the finished release, the manifest after all the others, and
only then writes ``current``: a replica that reads the pointer finds the whole release behind
it. A replica downloads a release into a staging folder of its local cache, hashing each file
as it arrives; a file whose size or sha256 differs from the manifest's refuses the release
whole, and the cache's ``CURRENT`` is switched only once every file matched. Objects under
``releases/`` are never overwritten, so a rollback is one write of ``current``.

Neither side moves a file the other end already holds. A publish asks the store to copy, on
its side, each file whose sha256 and size the release ``current`` names lists, from that
release's object (S3's CopyObject: no byte of it crosses the network), and uploads only the
others; every release stays whole under its own prefix. A replica links each file its cache's
current release holds, with the same sha256 and size, and downloads only the others.

The endpoint, region and credentials are the usual ``AWS_*`` environment variables
(``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ...),
read by obstore, the S3 client (Rust, with retries and multipart uploads).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

import obstore
from obstore.store import S3Store

from release.local_store import is_version, point_current, previous_release, release_path, staged_release
from release.manifest import MANIFEST_FILE, Manifest, PublishedRelease, ReleaseError, ReleaseFile, read_manifest

POINTER = "current"
RELEASES = "releases"
TRANSFER_THREADS = 8  # files moved at once: the release's many small documents are latency-bound
DOWNLOAD_CHUNK_BYTES = 1024 * 1024
_STORE_URL = re.compile(r"^s3://(?P<bucket>[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])(?:/(?P<prefix>.*?))?/?$")
# A store that does not answer fails a publish or a replica's poll within a bounded time,
# rather than obstore's default of retrying for three minutes.
CLIENT_OPTIONS = {"connect_timeout": dt.timedelta(seconds=5), "timeout": dt.timedelta(seconds=120)}
RETRY_CONFIG = {"max_retries": 3, "retry_timeout": dt.timedelta(seconds=30)}


class StoreError(RuntimeError):
    """An object-store operation that failed, with the store, the object and what to do."""


Report = Callable[[str], None]


def _silent(line: str) -> None:
    pass


@dataclass(frozen=True)
class ReleaseStore:
    """The releases under one ``s3://bucket/prefix``."""

    url: str
    bucket: str
    prefix: str
    store: S3Store

    @classmethod
    def open(cls, url: str) -> ReleaseStore:
        """The store at ``url`` (``s3://bucket`` or ``s3://bucket/prefix``); nothing is contacted yet."""
        match = _STORE_URL.match(url.strip())
        if match is None:
            raise StoreError(f"{url!r} is not an object-store address: write it as s3://bucket/prefix")
        bucket, prefix = match["bucket"], (match["prefix"] or "").strip("/")
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or ""
        client_options = {**CLIENT_OPTIONS, "allow_http": endpoint.startswith("http://")}
        store = S3Store(bucket, prefix=prefix or None, client_options=client_options, retry_config=RETRY_CONFIG)
        return cls(url=f"s3://{bucket}/{prefix}".rstrip("/"), bucket=bucket, prefix=prefix, store=store)

    @classmethod
    def configured(cls, url: str | None) -> ReleaseStore | None:
        """The store a setting names (``REUSE_DATA_PUBLISH_TO``), or None when it names none."""
        return cls.open(url) if url else None

    def key(self, version: str, path: str = "") -> str:
        """The object name of ``path`` in release ``version`` (the release's folder when empty)."""
        if not is_version(version):
            raise StoreError(f"{version!r} is not a release version (`reuse-data snapshots list` shows them)")
        return f"{RELEASES}/{version}/{path}" if path else f"{RELEASES}/{version}/"

    def failed(self, doing: str, error: Exception) -> StoreError:
        """The error to raise when ``doing`` failed in this store (``release.question_store`` too)."""
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        return StoreError(
            f"could not {doing} in {self.url} ({message}); check AWS_ENDPOINT_URL, the credentials "
            "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and that the bucket exists"
        )

    # --- the pointer -----------------------------------------------------------------------

    def pointer(self) -> str | None:
        """The version ``current`` names, or None before the first upload."""
        try:
            text = bytes(obstore.get(self.store, POINTER).bytes()).decode("utf-8").strip()
        except FileNotFoundError:
            return None
        except Exception as error:
            raise self.failed(f"read {POINTER}", error) from error
        return text or None

    def switch(self, version: str) -> None:
        """Point ``current`` at ``version``, which must be a whole release in the store."""
        self.manifest(version)  # a release without its manifest is not whole: never point at it
        try:
            obstore.put(self.store, POINTER, f"{version}\n".encode())
        except Exception as error:
            raise self.failed(f"write {POINTER}", error) from error

    # --- what the store holds --------------------------------------------------------------

    def manifest(self, version: str) -> Manifest:
        """The manifest of release ``version`` in the store (StoreError if it has none)."""
        try:
            data = bytes(obstore.get(self.store, self.key(version, MANIFEST_FILE)).bytes())
        except FileNotFoundError as error:
            raise StoreError(
                f"{self.url} holds no whole release {version} (no {MANIFEST_FILE}); "
                "`reuse-data snapshots list --store` shows the ones it holds"
            ) from error
        except Exception as error:
            raise self.failed(f"read the manifest of {version}", error) from error
        try:
            manifest = Manifest.from_json(data)
        except (ReleaseError, ValueError, KeyError, TypeError) as error:
            raise StoreError(f"the manifest of {version} in {self.url} cannot be read ({error})") from error
        if manifest.version != version:
            raise StoreError(f"the manifest under {version} in {self.url} is release {manifest.version}'s")
        return manifest

    def versions(self) -> list[str]:
        """Every release folder in the store, oldest first (whole or not: see ``manifest``)."""
        try:
            listing = obstore.list_with_delimiter(self.store, f"{RELEASES}/")
        except Exception as error:
            raise self.failed("list the releases", error) from error
        names = [prefix.rstrip("/").rsplit("/", 1)[-1] for prefix in listing["common_prefixes"]]
        return sorted(name for name in names if is_version(name))

    # --- publish: upload -------------------------------------------------------------------

    def held(self, besides: str) -> dict[tuple[str, int], str]:
        """The objects of the release ``current`` names (unless it is ``besides``), by their
        files' (sha256, size): what a new release's unchanged files are copied from."""
        version = self.pointer()
        if version is None or version == besides:
            return {}
        try:
            manifest = self.manifest(version)
        except StoreError:  # not a whole release: nothing is taken from it
            return {}
        return {(file.sha256, file.size): self.key(version, file.path) for file in manifest.files.values()}

    def upload(self, folder: Path, report: Report = _silent) -> Manifest:
        """Upload the finished release ``folder``: every file its manifest lists (copied within
        the store from the current release when that holds it, module docstring), then the manifest."""
        manifest = read_manifest(folder)
        files = sorted(manifest.files.values(), key=lambda file: -file.size)  # the largest start first
        held = self.held(manifest.version)
        copied = [file for file in files if (file.sha256, file.size) in held]

        def put(file: ReleaseFile) -> None:
            source = held.get((file.sha256, file.size))
            try:
                if source is not None:
                    obstore.copy(self.store, source, self.key(manifest.version, file.path))
                else:
                    obstore.put(self.store, self.key(manifest.version, file.path), folder / file.path)
            except Exception as error:
                raise self.failed(f"upload {file.path} of release {manifest.version}", error) from error

        with ThreadPoolExecutor(max_workers=TRANSFER_THREADS) as pool:
            list(pool.map(put, files))
        try:  # last: its presence says every other file is in place
            obstore.put(self.store, self.key(manifest.version, MANIFEST_FILE), folder / MANIFEST_FILE)
        except Exception as error:
            raise self.failed(f"upload {MANIFEST_FILE} of release {manifest.version}", error) from error
        sent = [file for file in files if (file.sha256, file.size) not in held]
        report(
            f"uploaded release {manifest.version} to {self.url}: {len(sent) + 1} files sent "
            f"({sum(file.size for file in sent) / 1e6:.1f} MB), {len(copied)} unchanged copied within the store "
            f"({sum(file.size for file in copied) / 1e6:.1f} MB)"
        )
        return manifest

    def publish(self, folder: Path, report: Report = _silent) -> None:
        """Upload the release ``folder`` and point ``current`` at it."""
        manifest = self.upload(folder, report)
        self.switch(manifest.version)
        report(f"{self.url}/{POINTER} now names {manifest.version}")

    # --- replicas: download ----------------------------------------------------------------

    def download(self, version: str, cache: Path, report: Report = _silent) -> Path:
        """Copy release ``version`` into the local store ``cache``, checking every file against its
        manifest as it arrives, and make it the cache's ``CURRENT``. A release already whole in
        the cache is not downloaded again. On any fault nothing of it stays in the cache."""
        final = release_path(cache, version)
        if not (final / MANIFEST_FILE).is_file():
            manifest = self.manifest(version)
            previous = previous_release(cache)
            with staged_release(cache, version) as staging:
                linked = self._fetch(manifest, staging, previous)
                (staging / MANIFEST_FILE).write_bytes(manifest.to_json())
            fetched = [file for path, file in manifest.files.items() if path not in linked]
            report(
                f"downloaded release {version} from {self.url}: {len(fetched)} files, "
                f"{sum(file.size for file in fetched) / 1e6:.1f} MB ({len(linked)} unchanged linked from "
                f"{previous.manifest.version if previous else 'no release'})"
            )
        point_current(cache, version)
        return final

    def _fetch(self, manifest: Manifest, staging: Path, previous: PublishedRelease | None) -> set[str]:
        """Every file of ``manifest`` into ``staging``: linked from ``previous`` when it holds the
        same content, else downloaded and hashed on the way; the paths linked. StoreError naming
        every file that is missing from the store or differs from the manifest."""
        faults: list[str] = []
        linked = set()
        for path, expected in manifest.files.items():
            same = previous.by_content.get((expected.sha256, expected.size)) if previous else None
            if same is not None:
                target = staging / path
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(previous.path_of(same), target)
                linked.add(path)

        def fetch(path: str) -> None:
            expected = manifest.files[path]
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            digest, size = sha256(), 0
            try:
                with target.open("wb") as handle:
                    for chunk in obstore.get(self.store, self.key(manifest.version, path)).stream(
                        min_chunk_size=DOWNLOAD_CHUNK_BYTES
                    ):
                        digest.update(chunk)
                        handle.write(chunk)
                        size += len(chunk)
            except FileNotFoundError:
                faults.append(f"{path} is missing")
                return
            except Exception as error:
                raise self.failed(f"download {path} of release {manifest.version}", error) from error
            if size != expected.size:
                faults.append(f"{path} has {size} bytes, the manifest says {expected.size}")
            elif digest.hexdigest() != expected.sha256:
                faults.append(f"{path} differs from its sha256 in the manifest")

        to_fetch = sorted(set(manifest.files) - linked, key=lambda path: -manifest.files[path].size)
        with ThreadPoolExecutor(max_workers=TRANSFER_THREADS) as pool:
            list(pool.map(fetch, to_fetch))
        if faults:
            shown = "; ".join(sorted(faults)[:5]) + (f"; and {len(faults) - 5} more" if len(faults) > 5 else "")
            raise StoreError(f"release {manifest.version} in {self.url} is incomplete or altered: {shown}")
        return linked
