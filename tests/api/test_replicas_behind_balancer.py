"""Three replicas, each on a host of its own, behind nginx, while releases are published.

Clients keep asking through the balancer for the whole run. It requires no failed request,
every JSON body from the release its ``X-Dataset-Version`` names, and every replica serving
each new release within ``CONVERGE_SECONDS`` of its publish. Then one client asks ``ask.json``
faster than the balancer's per-client rate: it is refused with 429, another client is not. The
questions asked of the replicas reach the next build through the store, each asking counted once.
"""

from __future__ import annotations

import csv
import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import obstore
import pytest

from foundations.problem_details import PROBLEM_TYPE_BASE
from foundations.settings import PROJECT_ROOT
from release.question_store import MIRROR_FOLDER, QuestionStore
from tests.support.browser import CHROMIUM
from tests.support.deployment import Deployment, deployment
from tests.support.harness import Server, copy_home, home_environment, home_layout
from tests.support.nginx import NGINX

# The store is polled every 2 s; downloading, checking and loading the demo's release takes about 1 s (2 s
# from publish to the last replica, measured); the rest is headroom for a loaded machine.
CONVERGE_SECONDS = 10.0
CLIENTS = 4
SPREE = 60  # questions one client sends at once: past the balancer's burst of 20
PATHS = (
    "/api/public/products.json",
    "/api/public/recommendations.json",
    "/api/public/capabilities.json",
    "/api/public/answers.json?lang=el",
    "/api/public/changes.json",
)
UPLOAD_SECONDS = 1  # how often each replica uploads its questions (60 by default)
QUESTION = "Which flask fits a bike bottle cage?"  # on topic, but no entry answers it
QUESTION_NORMALISED = "which flask fits a bike bottle cage"

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed: run `make setup`")


class Clients:
    """``CLIENTS`` threads asking through the balancer until stopped, checking every answer."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.stop = threading.Event()
        self.answered = 0
        self.failures: list[str] = []
        self.versions: set[str] = set()
        self.threads = [threading.Thread(target=self.ask, args=(n,), daemon=True) for n in range(CLIENTS)]

    def ask(self, number: int) -> None:
        turn = number
        while not self.stop.is_set():
            path = PATHS[turn % len(PATHS)]
            turn += 1
            try:
                with urllib.request.urlopen(self.base_url + path, timeout=30) as response:
                    header, body = response.headers["X-Dataset-Version"], json.loads(response.read())
            except (OSError, ValueError, urllib.error.HTTPError) as error:
                self.failures.append(f"{path}: {error}")
                continue
            if body.get("dataset_version") != header:
                self.failures.append(f"{path}: body of {body.get('dataset_version')} under {header}")
            self.versions.add(header)
            self.answered += 1

    def __enter__(self) -> Clients:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)


@pytest.fixture(scope="module")
def deployed(demo_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder, warehouse = tmp_path_factory.mktemp("deployment"), home_layout(demo_home).warehouse_path
    upload = {"REUSE_DATA_QUESTION_UPLOAD_SECONDS": str(UPLOAD_SECONDS)}
    with deployment(folder, warehouse, replicas=3, environ=upload) as made:
        yield made


def test_three_replicas_behind_nginx_while_releases_are_published(deployed: Deployment):
    first = deployed.served()[0]
    assert deployed.served() == [first] * 3
    took = []
    with Clients(deployed.balancer_url) as clients:
        time.sleep(1)
        for _ in range(2):
            version = deployed.publish()
            took.append(deployed.wait_converged(version, CONVERGE_SECONDS))
            time.sleep(1)  # answers from the new release through the balancer
    assert clients.failures == [], clients.failures[:5]
    assert clients.answered > 100
    assert {first, version} <= clients.versions

    # nginx spread the clients over every replica, and keeps the operator's addresses private.
    for replica in deployed.replicas:
        metrics = replica.get("/metrics").body.decode()
        served = sum(
            float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if line.startswith("reuse_data_http_requests_total{") and 'route="/api/public/' in line
        )
        assert served > 10, f"replica {replica.host} answered {served} API requests"
    with pytest.raises(urllib.error.HTTPError) as hidden:
        urllib.request.urlopen(deployed.balancer_url + "/metrics", timeout=5)
    assert hidden.value.code == 404
    print(
        f"replicas {'in network namespaces' if deployed.isolated else 'on loopback'}: "
        f"{clients.answered} answers, 0 failed; every replica on each new release in "
        + ", ".join(f"{seconds:.2f} s" for seconds in took)
    )


def ask_from(address: str, balancer_url: str, question: str) -> tuple[int, dict[str, str], bytes]:
    """``ask.json?q=question`` through the balancer from the loopback address ``address`` (a client of its own)."""
    port = int(balancer_url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address, 0))
    try:
        connection.request("GET", f"/api/public/ask.json?q={urllib.parse.quote(question)}")
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_a_client_over_its_ask_rate_gets_429_while_another_is_answered(deployed: Deployment):
    hasty, patient = "127.0.0.2", "127.0.0.3"  # two clients, as nginx tells them apart: by address
    questions = [f"Which bottle keeps coffee hot for {n} hours?" for n in range(SPREE)]
    replies: list[tuple[int, dict[str, str], bytes]] = []
    threads = [
        threading.Thread(target=lambda q=q: replies.append(ask_from(hasty, deployed.balancer_url, q)))
        for q in questions
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    statuses = sorted(status for status, _, _ in replies)
    assert len(replies) == SPREE and set(statuses) <= {200, 429}, statuses
    limited = [(headers, json.loads(body)) for status, headers, body in replies if status == 429]
    assert limited, "a spree past the burst is limited"
    assert statuses.count(200) >= 1, "the burst itself is answered"
    for headers, problem in limited:
        assert headers["content-type"] == "application/problem+json" and headers["retry-after"] == "1"
        assert problem["type"] == f"{PROBLEM_TYPE_BASE}rate-limited" and problem["status"] == 429

    # Meanwhile another client, within its own rate, is answered every time.
    for n in range(5):
        status, _, body = ask_from(patient, deployed.balancer_url, f"Is a steel lunch box dishwasher safe ({n})?")
        assert status == 200, body[:300]


def ask_replica(replica: Server, question: str) -> dict:
    reply = replica.get(f"/api/public/ask.json?lang=en&q={urllib.parse.quote(question)}")
    assert reply.status == 200, reply.body[:300]
    return reply.json()


def wait_uploaded(deployed: Deployment, expected: dict[str, int], seconds: float = 15) -> None:
    """Until each replica's files in the store hold ``QUESTION`` as many times as ``expected`` says."""
    questions, needle = QuestionStore(deployed.store), json.dumps(QUESTION).encode()
    deadline = time.monotonic() + seconds
    while True:
        held = {replica: 0 for replica in expected}
        for stored in questions.stored():
            if stored.replica in held:
                held[stored.replica] += bytes(obstore.get(deployed.store.store, stored.key).bytes()).count(needle)
        if held == expected:
            return
        assert time.monotonic() < deadline, f"the store holds {held} askings of the question, not {expected}"
        time.sleep(0.2)


def build_questions(home: Path, deployed: Deployment) -> int:
    """The build's assets of the questions (``tests.api.questions_build``) over ``home``, publishing
    to the deployment's store; how many times the mart says ``QUESTION`` was asked."""
    env = {**home_environment(home, PROJECT_ROOT / "demo"), "REUSE_DATA_PUBLISH_TO": deployed.store.url}
    done = subprocess.run(
        [sys.executable, "-m", "tests.api.questions_build"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    with duckdb.connect(str(home_layout(home).warehouse_path), read_only=True) as connection:
        (asked,) = connection.execute(
            "SELECT times_asked FROM marts.asked_questions WHERE question_normalised = ?", [QUESTION_NORMALISED]
        ).fetchone()
    return asked


def test_the_questions_asked_of_two_replicas_reach_the_next_build_once(
    deployed: Deployment, demo_home: Path, tmp_path: Path
):
    first, second = deployed.replicas[:2]
    for replica in (first, second):  # the same question on two hosts: two askings
        assert ask_replica(replica, QUESTION)["results"] == []
    wait_uploaded(deployed, {"replica-1": 1, "replica-2": 1})
    home = copy_home(demo_home, tmp_path / "build-home")
    assert build_questions(home, deployed) == 2

    # Asked again: today's file of the first replica grows, goes up whole again and replaces its
    # copy in the build's mirror. A build host that also serves as that replica keeps the same file
    # in its own folder of questions (here, the copy the first build took): it is counted once.
    mirror = home_layout(home).questions_dir / MIRROR_FOLDER
    (first_copy,) = (mirror / "replica-1").glob("*.jsonl")
    (home_layout(home).questions_dir / first_copy.name).write_bytes(first_copy.read_bytes())
    assert ask_replica(first, QUESTION)["results"] == []
    wait_uploaded(deployed, {"replica-1": 2, "replica-2": 1})
    assert build_questions(home, deployed) == 3
    copies = [path for path in mirror.rglob("*") if path.is_file() and QUESTION.encode() in path.read_bytes()]
    assert sorted(path.parent.name for path in copies) == ["replica-1", "replica-2"]

    with (home_layout(home).reports_dir / "unanswered-questions.csv").open(encoding="utf-8") as exported:
        rows = list(csv.DictReader(exported))
    assert (QUESTION, "3") in [(row["question"], row["times asked"]) for row in rows]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: `make setup` installs Debian's chromium")
def test_explore_runs_a_query_in_the_browser_through_the_balancer(deployed: Deployment, browser, tmp_path: Path):
    """/explore from replicas serving releases out of the object store, behind nginx: the page, its
    scripts and the release's Parquet (by range) all come through the balancer, from any replica,
    and nothing is asked of another origin."""
    context = browser.new_context()
    elsewhere: list[str] = []

    def only_the_balancer(route) -> None:
        if route.request.url.startswith(deployed.balancer_url + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_balancer)
    page = context.new_page()
    try:
        page.goto(deployed.balancer_url + "/explore")
        page.wait_for_selector("#status[data-state=ready]", timeout=60_000)
        page.fill("#sql", "SELECT category_slug, count(*) AS products FROM products GROUP BY ALL ORDER BY ALL")
        page.click("#run")
        page.wait_for_selector("#status[data-state=done]", timeout=60_000)
        shown = [row.split("\t") for row in page.inner_text("#result-table tbody").splitlines()]
    finally:
        context.close()
    products = tmp_path / "products.parquet"
    with urllib.request.urlopen(deployed.balancer_url + "/api/public/downloads/products.parquet") as download:
        products.write_bytes(download.read())
    expected = duckdb.sql(f"SELECT category_slug, count(*) FROM '{products}' GROUP BY ALL ORDER BY ALL").fetchall()
    assert [(slug, int(count)) for slug, count in shown] == expected
    assert elsewhere == []
