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
