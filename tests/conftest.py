"""Shared fixtures: the demo site, a running demo server, and ad-hoc servers.

    def test_crawl(demo_site, demo_server):
        truth = demo_site.ground_truth(max_depth=3)
        ...crawl demo_server.url...
        assert {r.path for r in demo_server.requests} == ...

    def test_reset(serve):
        def handler(request):            # a BaseHTTPRequestHandler
            if request.path == "/slow":
                time.sleep(2)            # the fault under test, not a race fix
            return Response(200, {"Content-Type": "text/html"}, b"<p>ok</p>")
        with serve(handler) as (base_url, log):
            ...fetch base_url + "slow"...
            assert [r.path for r in log] == ["/slow"]

A handler returns a demosite.Response (or a (status, headers, body) tuple);
the server adds Content-Length and keeps the connection alive. To misbehave
(reset the connection, send a truncated body, never answer), write to
request.wfile or request.connection yourself and return None: the server
then closes the connection.
"""
from __future__ import annotations

import pytest

from demosite import DemoServer, DemoSite
from demosite.server import serve as _serve

# The README's test command runs two processes, each taking a whole file at a
# time in collection order (pytest -n 2 --dist loadfile). The longest files
# (measured: tests' own durations under -n 2) go first, so the two processes
# end together rather than one running a long file alone at the end. Each
# process collects the tests itself and the two lists must be equal, so no
# parameter may change from one collection to the next (gzip data carries
# the time it was made: tests compress with mtime=0).
LONGEST_FIRST = (
    "test_order_resume.py", "test_resume.py", "test_orders.py", "test_distributed.py",
    "test_distributed_partitions.py", "test_shared_settings.py", "test_recrawl.py",
    "test_proxy_crawl.py", "test_content_crawl.py", "test_stops.py",
    "test_experiments_no_matplotlib.py", "test_cli.py", "test_pipes.py", "test_end_to_end.py",
)


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # stable: a file stays whole


@pytest.fixture(scope="session")
def demo_site() -> DemoSite:
    """The default demo site (seed 2026); immutable, so shared by the session."""
    return DemoSite()


@pytest.fixture
def demo_server(demo_site: DemoSite):
    """A running DemoServer on 127.0.0.1 with an empty request log."""
    with DemoServer(demo_site) as server:
        yield server
    assert not server.errors, f"the demo site raised: {server.errors!r}"


@pytest.fixture
def serve():
    """The serve(handler) context manager: yields (base URL, live request log)."""
    return _serve


@pytest.fixture
def redis_server(tmp_path):
    """A real redis-server on an ephemeral loopback port, AOF on, in its own
    data directory (tests/redisserver.py); stopped after the test."""
    from redisserver import RedisServer
    with RedisServer(tmp_path / "redis-data") as server:
        yield server


@pytest.fixture
def redis_cluster(tmp_path):
    """A real three-master Redis Cluster on loopback, AOF on, each node in its
    own data directory (tests/redisserver.py); stopped after the test."""
    from redisserver import RedisCluster
    with RedisCluster(tmp_path / "redis-cluster") as cluster:
        yield cluster


# What the crawler reads from the environment about the network: the
# machine's own values must not reach the tests (a developer behind a proxy
# would send every test crawl of 127.0.0.1 to it). Tests that want them set
# them explicitly, for a subprocess (tests/test_proxy_crawl.py).
NETWORK_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                     "ALL_PROXY", "no_proxy", "NO_PROXY", "REQUEST_METHOD",
                     "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE")


@pytest.fixture(autouse=True, scope="session")
def _no_network_variables_of_this_machine():
    with pytest.MonkeyPatch.context() as patch:
        for name in NETWORK_VARIABLES:
            patch.delenv(name, raising=False)
        yield


@pytest.fixture
def tinyproxy(tmp_path):
    """A real forward proxy (Debian's tinyproxy) on an ephemeral loopback port,
    logging every request it receives (tests/proxyserver.py)."""
    from proxyserver import TinyProxy
    with TinyProxy(tmp_path / "tinyproxy") as proxy:
        yield proxy


@pytest.fixture(scope="session")
def test_ca():
    """A certificate authority of the tests' own (trustme), and a server
    certificate it issued for 127.0.0.1 and localhost."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    return ca, ca.issue_cert("127.0.0.1", "localhost")


@pytest.fixture
def tls_site(test_ca, tmp_path):
    """serve(handler) over TLS with the test CA's certificate: yields (https
    base URL, live request log, path of the CA's PEM file)."""
    import ssl
    from contextlib import contextmanager

    from demosite.server import HttpServer

    ca, certificate = test_ca
    ca_file = tmp_path / "test-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))

    @contextmanager
    def serving(handler):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        certificate.configure_cert(context)
        with HttpServer(handler, tls=context) as server:
            yield server.url, server.request_log, ca_file
    return serving
