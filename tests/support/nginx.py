"""nginx from Debian's package as the balancer in front of replicas, configured by the project's
own ``deploy/nginx.conf.template`` (what docs/deploy.md tells an operator to run)."""

from __future__ import annotations

import os
import shutil
import string
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = PROJECT_ROOT / "deploy" / "nginx.conf.template"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def render(prefix: Path, listen: str, upstreams: list[str]) -> str:
    """The template with its placeholders filled (nginx's own ``$host`` and the like left alone)."""
    servers = "\n        ".join(f"server {upstream} max_fails=1 fail_timeout=2s;" for upstream in upstreams)
    text = string.Template(TEMPLATE.read_text(encoding="utf-8")).safe_substitute(
        PREFIX=str(prefix), LISTEN=listen, UPSTREAMS=servers
    )
    if os.geteuid() == 0:  # nginx's workers would otherwise run as nobody, who cannot write to PREFIX
        text = "user root;\n" + text
    return text


@contextmanager
def balancer(folder: Path, port: int, upstreams: list[str]) -> Iterator[str]:
    """nginx on 127.0.0.1:``port`` in front of ``upstreams``; yields its base URL."""
    if not Path(NGINX).exists():
        raise FileNotFoundError("nginx is not installed: run `make setup` (Debian's nginx-light)")
    for temp in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (folder / "temp" / temp).mkdir(parents=True, exist_ok=True)
    config = folder / "nginx.conf"
    config.write_text(render(folder, f"127.0.0.1:{port}", upstreams), encoding="utf-8")
    argv = [NGINX, "-p", str(folder), "-c", str(config), "-e", str(folder / "error.log"), "-g", "daemon off;"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2)  # nginx answers 404: it is up
            except urllib.error.HTTPError:
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    said = (folder / "error.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"nginx did not start: {said}") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)
