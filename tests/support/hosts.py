"""Separate hosts on one machine: a network namespace per host, joined by a bridge (iproute2).

Each host has its own network stack (its own loopback, interfaces and ports), reached at its
own address on a private subnet that exists only on this machine; the machine itself is the
bridge's address, where the object store and the balancer listen. Processes started with
``Host.command`` run inside the host's namespace, so nothing passes between replicas but what
goes over that subnet. ``private_hosts`` removes every namespace and link it made, even when the
test fails.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

IP = shutil.which("ip") or "/usr/sbin/ip"


class HostsUnavailable(RuntimeError):
    """This machine does not let the tests make network namespaces (not root, or no CAP_NET_ADMIN)."""


def _ip(*args: str) -> None:
    completed = subprocess.run([IP, *args], capture_output=True, text=True)
    if completed.returncode != 0:
        raise HostsUnavailable(f"`ip {' '.join(args)}` failed: {completed.stderr.strip()}")


@dataclass(frozen=True)
class Host:
    namespace: str | None  # None: the machine itself
    address: str

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this host."""
        return [IP, "netns", "exec", self.namespace, *argv] if self.namespace else argv


@dataclass(frozen=True)
class PrivateNetwork:
    machine: Host  # the bridge's address: the machine as the hosts see it
    hosts: list[Host]


@contextmanager
def private_hosts(count: int) -> Iterator[PrivateNetwork]:
    """``count`` hosts in network namespaces on a fresh bridge; HostsUnavailable if not allowed."""
    tag = secrets.token_hex(2)
    subnet = f"10.231.{int(tag, 16) % 250 + 1}"
    bridge = f"rd{tag}br"
    made_bridge, namespaces = False, []
    try:
        _ip("link", "add", bridge, "type", "bridge")
        made_bridge = True
        _ip("addr", "add", f"{subnet}.1/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        hosts = []
        for number in range(1, count + 1):
            namespace, outside, inside = f"reuse-{tag}-{number}", f"rd{tag}h{number}", f"rd{tag}n{number}"
            _ip("netns", "add", namespace)
            namespaces.append(namespace)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", namespace)
            _ip("link", "set", outside, "master", bridge)
            _ip("link", "set", outside, "up")
            address = f"{subnet}.{10 + number}"
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", inside)
            _ip("-n", namespace, "link", "set", inside, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            hosts.append(Host(namespace, address))
        yield PrivateNetwork(Host(None, f"{subnet}.1"), hosts)
    finally:
        for namespace in namespaces:  # deleting a namespace deletes its end of the veth pair, and so both
            subprocess.run([IP, "netns", "del", namespace], capture_output=True)
        if made_bridge:
            subprocess.run([IP, "link", "del", bridge], capture_output=True)
