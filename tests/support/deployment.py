"""A whole deployment on one machine: object store, N replicas on hosts of their own, a balancer.

- SeaweedFS serves S3 on the machine's address of a private subnet (``tests.support.hosts``).
- Each replica is `reuse-data serve --from s3://…` in a network namespace of its own, with an
  empty home and a name of its own (``replica-<n>``, its folder of questions in the store):
  nothing is shared with the build side but the store.
- nginx, configured by ``deploy/nginx.conf.template``, balances 127.0.0.1:<port> over them.
- ``publish`` builds nothing: it publishes the given build warehouse again as a new release
  (to a local folder and the store), as the pipeline's publish asset does.

Where namespaces cannot be made (not root), the replicas run on loopback ports of this host
instead, and ``isolated`` says so.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from release.object_store import ReleaseStore
from tests.support.harness import Server, free_port, home_environment, running
from tests.support.hosts import Host, HostsUnavailable, private_hosts
from tests.support.nginx import balancer
from tests.support.seaweedfs import SeaweedFS

REPLICA_PORT = 8000  # each replica has its host's ports to itself


@dataclass
class Deployment:
    store: ReleaseStore
    replicas: list[Server]
    balancer_url: str
    local_releases: Path  # the build side's releases
    warehouse: Path
    isolated: bool  # each replica in a network namespace of its own

    def publish(self) -> str:
        """A new release of the warehouse, uploaded and pointed at; its version."""
        from publish.new_release import publish_release

        return publish_release(self.local_releases, self.warehouse, before_switch=self.store.publish).version

    def served(self) -> list[str | None]:
        """The version each replica serves (None: not ready)."""
        versions = []
        for replica in self.replicas:
            reply = replica.get("/readyz", timeout=5)
            versions.append(reply.json()["dataset_version"] if reply.status == 200 else None)
        return versions

    def wait_converged(self, version: str, seconds: float) -> float:
        """Seconds until every replica serves ``version``; AssertionError past ``seconds``."""
        started = time.monotonic()
        while (served := self.served()) != [version] * len(self.replicas):
            assert time.monotonic() - started < seconds, f"replicas serve {served}, not all {version}"
            time.sleep(0.05)
        return time.monotonic() - started


@contextmanager
def _store_environment(variables: dict[str, str]) -> Iterator[None]:
    """``variables`` in this process's environment (obstore reads the AWS ones) for the block."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def deployment(
    folder: Path, warehouse: Path, replicas: int = 3, workers: int = 1, environ: dict[str, str] | None = None
) -> Iterator[Deployment]:
    """The deployment of ``replicas`` replicas serving releases of ``warehouse``, with ``environ`` in
    theirs; the first release is published and served by all before the block starts."""
    with ExitStack() as stack:
        try:
            network = stack.enter_context(private_hosts(replicas))
            machine, hosts, isolated = network.machine, network.hosts, True
        except HostsUnavailable:
            machine, hosts, isolated = Host(None, "127.0.0.1"), [Host(None, "127.0.0.1")] * replicas, False
        weed = SeaweedFS(folder / "seaweedfs", ip=machine.address).start()
        stack.callback(weed.stop)
        stack.enter_context(_store_environment(weed.environment()))
        store = ReleaseStore.open(weed.url("releases"))
        deployed = Deployment(store, [], "", folder / "build" / "snapshots", warehouse, isolated)
        deployed.publish()

        for number, host in enumerate(hosts, start=1):
            port = REPLICA_PORT if isolated else free_port()
            home = folder / f"replica-{number}"
            env = {
                **home_environment(home),
                **weed.environment(),
                "REUSE_DATA_SERVE_FROM": store.url,
                "REUSE_DATA_REPLICA_NAME": f"replica-{number}",
                **(environ or {}),
            }
            argv = host.command(
                [
                    sys.executable,
                    "-m",
                    "reuse_data.cli",
                    "serve",
                    "--host",
                    host.address,
                    "--port",
                    str(port),
                    "--workers",
                    str(workers),
                ]
            )
            log = folder / f"replica-{number}.log"
            process = stack.enter_context(running(argv, port, "/readyz", env, log, host=host.address))
            deployed.replicas.append(Server(port, home, process, log, host=host.address))

        upstreams = [f"{replica.host}:{replica.port}" for replica in deployed.replicas]
        deployed.balancer_url = stack.enter_context(balancer(folder / "nginx", free_port(), upstreams))
        yield deployed
