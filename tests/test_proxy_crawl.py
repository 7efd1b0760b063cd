"""Crawls through a real forward proxy (tinyproxy, tests/proxyserver.py) and
to an HTTPS server with the tests' own CA, as a user runs them: `crawler
crawl` in a subprocess whose environment the test sets whole, so no proxy
variable of this machine can leak in. The proxy's log and the target
server's log show where each request went. Last, what a proxy like tinyproxy
does to kept-alive connections (closes them after each response), made
certain by servers that cut each connection's second request."""
from __future__ import annotations

import csv
import gzip
import json
import os
import socket
import struct
import subprocess
import sys

import pytest

from conftest import NETWORK_VARIABLES

PAGES = {
    "/": b'<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>',
    "/a": b"<html><body><p>page a</p></body></html>",
    "/b": b"<html><body><p>page b</p></body></html>",
}
SECRET = "s3cr3t-Pa55"


def site(request):
    body = PAGES.get(request.path)
    if body is None:
        return 404, {"Content-Type": "text/plain"}, b"none"
    return 200, {"Content-Type": "text/html"}, body


def crawl(out, *args, env=None, timeout=90):
    """`crawler crawl` with exactly the network variables in ``env``."""
    environ = {name: value for name, value in os.environ.items() if name not in NETWORK_VARIABLES}
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "controller", "crawl", *args, "--out", str(out),
                           "--delay", "0", "--max-depth", "1", "--retries", "0"],
                          capture_output=True, text=True, timeout=timeout, env=environ)


def rows(out):
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return {row["url"]: row for row in csv.DictReader(f)}


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proxied(proxy) -> list[tuple[str, str]]:
    return [(method, target) for method, target in proxy.requests()]


# -- the environment, as curl reads it ------------------------------------------


@pytest.mark.parametrize("variable", ["http_proxy", "HTTP_PROXY", "ALL_PROXY"])
def test_proxy_variables_send_every_request_through_the_proxy(tmp_path, serve, tinyproxy, variable):
    with serve(site) as (url, log):
        done = crawl(tmp_path / "o", url, env={variable: tinyproxy.url})
    assert done.returncode == 0, done.stderr
    expected = [url + "robots.txt", url, url + "a", url + "b"]
    assert sorted(proxied(tinyproxy)) == sorted(("GET", target) for target in expected)
    assert sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]   # relayed to the site
    assert all(row["error"] == "" and row["status"] == "200" for row in rows(tmp_path / "o").values())
    schemes = "http and https" if variable == "ALL_PROXY" else "http"
    assert f"proxy: {schemes} through {tinyproxy.url} (from {variable})" in done.stderr


@pytest.mark.parametrize("no_proxy, direct", [
    ("127.0.0.1", True), ("127.0.0.0/8", True), ("*", True), ("example.org,127.0.0.1", True),
    # curl does not exempt loopback by itself, nor an address by a name
    ("localhost", False), ("", False), ("127.0.0.2", False),
])
def test_no_proxy_exempts_what_curl_exempts(tmp_path, serve, tinyproxy, no_proxy, direct):
    with serve(site) as (url, log):
        done = crawl(tmp_path / "o", url, env={"http_proxy": tinyproxy.url, "NO_PROXY": no_proxy})
    assert done.returncode == 0, done.stderr
    assert sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]
    assert len(proxied(tinyproxy)) == (0 if direct else 4)


def test_proxy_option_wins_over_the_environment(tmp_path, serve, tinyproxy):
    dead = f"http://127.0.0.1:{dead_port()}"
    with serve(site) as (url, log):
        done = crawl(tmp_path / "o", url, "--proxy", tinyproxy.url,
                     env={"http_proxy": dead, "ALL_PROXY": dead})
    assert done.returncode == 0, done.stderr
    assert len(proxied(tinyproxy)) == 4 and sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]
    assert f"proxy: http and https through {tinyproxy.url} (from --proxy)" in done.stderr


def test_no_proxy_option_ignores_the_environment(tmp_path, serve, tinyproxy):
    with serve(site) as (url, log):
        done = crawl(tmp_path / "o", url, "--no-proxy", env={"http_proxy": tinyproxy.url})
    assert done.returncode == 0, done.stderr
    assert proxied(tinyproxy) == [] and sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]
    assert "proxy:" not in done.stderr


def test_a_proxy_that_is_down_is_each_pages_connection_error(tmp_path, serve):
    with serve(site) as (url, log):
        done = crawl(tmp_path / "o", url, env={"http_proxy": f"http://127.0.0.1:{dead_port()}"})
    assert done.returncode == 1 and log.paths() == []
    assert "every seed failed" in done.stderr and "connection: proxy unreachable (refused)" in done.stderr
    assert [row["error"] for row in rows(tmp_path / "o").values()] == \
        ["connection: proxy unreachable (refused)"]


def test_an_unusable_proxy_variable_is_one_line_and_nothing_is_written(tmp_path):
    out = tmp_path / "o"
    done = crawl(out, "http://127.0.0.1:1/", env={"ALL_PROXY": f"socks5://me:{SECRET}@127.0.0.1:1080"})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "ALL_PROXY=socks5://me@127.0.0.1:1080: SOCKS proxies are not supported" in done.stderr
    assert SECRET not in done.stderr and not out.exists()


# -- https:// through the proxy: CONNECT ------------------------------------------


def test_https_goes_through_a_connect_tunnel_and_is_verified_end_to_end(tmp_path, tls_site, tinyproxy):
    with tls_site(site) as (url, log, ca_file):
        host = url.removeprefix("https://").rstrip("/")
        done = crawl(tmp_path / "o", url, "--ca-certificate", str(ca_file),
                     env={"https_proxy": tinyproxy.url})
        refused = crawl(tmp_path / "p", url, env={"https_proxy": tinyproxy.url})
    assert done.returncode == 0, done.stderr
    # one tunnel per connection (tinyproxy keeps none alive), never a URL in clear
    assert {request for request in proxied(tinyproxy)} == {("CONNECT", host)}
    assert {path for path in log.paths()} == {"/", "/a", "/b", "/robots.txt"}
    assert all(row["status"] == "200" for row in rows(tmp_path / "o").values())
    # through the tunnel the certificate is still checked against this machine's trust
    assert refused.returncode == 1
    assert "connection: certificate verify failed: unable to get local issuer certificate" in refused.stderr


# -- credentials: sent to the proxy, written nowhere -------------------------------


def every_byte_under(folder) -> bytes:
    data = b""
    for path in folder.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            data += gzip.decompress(raw) if path.suffix == ".gz" else raw
    return data


def test_proxy_password_is_used_and_never_written(tmp_path, serve):
    from proxyserver import TinyProxy
    out = tmp_path / "o"
    with TinyProxy(tmp_path / "authproxy", credentials=("alice", SECRET)) as proxy, \
            serve(site) as (url, log):
        with_password = proxy.url.replace("http://", f"http://alice:{SECRET}@")
        done = crawl(out, url, "--proxy", with_password, "--warc")
        without = crawl(tmp_path / "p", url, "--proxy", proxy.url)
    assert done.returncode == 0, done.stderr
    assert sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]
    assert without.returncode == 1 and "http: 407" in without.stderr   # the proxy did ask
    assert SECRET not in done.stdout + done.stderr
    assert SECRET.encode() not in every_byte_under(out)
    saved = json.loads((out / "state" / "settings.json").read_text())
    assert saved["proxy"] == proxy.url.replace("http://", "http://alice@")
    exported = subprocess.run([sys.executable, "-m", "controller", "config", str(out)],
                              capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0 and SECRET not in exported.stdout
    assert f'proxy = "{saved["proxy"]}"' in exported.stdout


def test_a_resumed_crawl_asks_for_the_proxy_password_again(tmp_path, serve):
    out = tmp_path / "o"
    with serve(site) as (url, log):
        first = crawl(out, url, "--proxy", f"http://alice:{SECRET}@127.0.0.1:{dead_port()}",
                      "--max-pages", "1")
    assert first.returncode == 1, first.stderr   # the proxy is down: the seed failed
    before = sorted((path, path.stat().st_mtime_ns) for path in out.rglob("*") if path.is_file())
    again = subprocess.run([sys.executable, "-m", "controller", "crawl", "--out", str(out), "--resume"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1, again.stderr
    assert "names the user 'alice' but no password" in again.stderr
    assert ":PASSWORD@127.0.0.1" in again.stderr and SECRET not in again.stderr
    assert sorted((path, path.stat().st_mtime_ns) for path in out.rglob("*") if path.is_file()) == before


# -- TLS: the tests' own CA --------------------------------------------------------


def test_an_unknown_ca_is_refused_with_the_reason_in_the_row_and_the_seed_line(tmp_path, tls_site):
    with tls_site(site) as (url, log, ca_file):
        done = crawl(tmp_path / "o", url, "--ignore-robots")
    assert done.returncode == 1
    error = "connection: certificate verify failed: unable to get local issuer certificate"
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("crawler: error: every seed failed (") and error in lines[-1]
    assert "--ca-certificate" in lines[-1]   # the way out is named
    assert [row["error"] for row in rows(tmp_path / "o").values()] == [error]
    assert log.paths() == []   # no request went over an unverified connection


@pytest.mark.parametrize("how", ["--ca-certificate", "--no-check-certificate", "REQUESTS_CA_BUNDLE",
                                 "SSL_CERT_FILE", "CURL_CA_BUNDLE"])
def test_a_trusted_or_unchecked_certificate_is_accepted(tmp_path, tls_site, how):
    with tls_site(site) as (url, log, ca_file):
        if how.startswith("--"):
            args, env = ((how, str(ca_file)) if how == "--ca-certificate" else (how,)), {}
        else:
            args, env = (), {how: str(ca_file)}
        done = crawl(tmp_path / "o", url, *args, env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]
    assert all(row["status"] == "200" and row["error"] == "" for row in rows(tmp_path / "o").values())


def test_a_self_signed_certificate_says_so(tmp_path, test_ca):
    import ssl

    from demosite.server import HttpServer
    ca, _ = test_ca
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.configure_trust(context)
    # The CA's own certificate, served as the server's: self-signed.
    key = tmp_path / "ca.key"
    key.write_bytes(ca.private_key_pem.bytes())
    context.load_cert_chain(str(write(tmp_path / "ca.pem", ca.cert_pem.bytes())), str(key))
    with HttpServer(site, tls=context) as server:
        done = crawl(tmp_path / "o", server.url, "--ignore-robots")
    assert "connection: certificate verify failed: self-signed certificate" in done.stderr


def write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("args, env, words", [
    (("--ca-certificate", "/nonexistent/ca.pem"), {}, "--ca-certificate: '/nonexistent/ca.pem' cannot be read"),
    (("--ca-certificate", "{tmp}/not-pem.txt"), {}, "holds no PEM certificate"),
    ((), {"SSL_CERT_FILE": "/nonexistent/ca.pem"}, "the CA bundle of the environment"),
    (("--proxy", "http://p:1", "--no-proxy"), {}, "not both"),
    (("--proxy", "socks5://p:1"), {}, "SOCKS proxies are not supported"),
])
def test_bad_network_settings_are_one_line_and_write_nothing(tmp_path, args, env, words):
    out = tmp_path / "o"
    (tmp_path / "not-pem.txt").write_text("just text\n")
    done = crawl(out, "http://127.0.0.1:1/", *(arg.format(tmp=tmp_path) for arg in args), env=env)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert words in done.stderr and not out.exists()


# -- the Fetcher through a proxy: both ways of sending, and the address rule ------


def fetcher(environ, **settings):
    """A Fetcher without retries or robots.txt, reaching loopback, that reads
    the network variables from ``environ`` only."""
    from getpage import FetchConfig, Fetcher
    config = FetchConfig(user_agent="bfsbot/1.0", delay=0, retries=0, obey_robots=False,
                         allowed_addresses={"public", "loopback"}, **settings)
    return Fetcher(config, environ=environ)


def proxied_fetcher(proxy_url, **settings):
    return fetcher({"http_proxy": proxy_url, "https_proxy": proxy_url}, **settings)


def test_urls_requests_prepares_go_through_the_proxy_too(serve, tinyproxy):
    pages = {"/caf%C3%A9": b"<p>cafe</p>", "/plain": b"<p>plain</p>"}
    handler = lambda request: (200, {"Content-Type": "text/html"}, pages.get(request.path, b"?"))
    with serve(handler) as (url, log), proxied_fetcher(tinyproxy.url) as fetcher:
        results = [fetcher.fetch(url + "café"), fetcher.fetch(url + "plain")]
    assert [result.text for result in results] == ["<p>cafe</p>", "<p>plain</p>"]
    assert proxied(tinyproxy) == [("GET", url + "caf%C3%A9"), ("GET", url + "plain")]


def test_through_a_proxy_an_address_the_rule_forbids_is_never_asked_for(tinyproxy):
    with proxied_fetcher(tinyproxy.url) as fetcher:
        results = [fetcher.fetch("http://10.1.2.3/"), fetcher.fetch("https://169.254.169.254/x y")]
    assert [result.error for result in results] == ["blocked: 10.1.2.3 is a private address",
                                                    "blocked: 169.254.169.254 is a link-local address"]
    assert proxied(tinyproxy) == []


# -- the shared crawl: each worker's own network ------------------------------------


def test_a_shared_crawl_keeps_proxies_with_each_worker_and_no_password_in_redis(tmp_path, serve,
                                                                               tinyproxy, redis_server):
    """The first worker crawls through its --proxy (with a password); Redis gets
    neither the password nor a proxy for the others: a worker that joins
    uses its own environment, or its own --proxy."""
    from controller.shared import shared_crawl, worker_config
    out = tmp_path / "w1"
    with serve(site) as (url, log):
        proxy = tinyproxy.url.replace("http://", f"http://bob:{SECRET}@")
        environ = {name: value for name, value in os.environ.items() if name not in NETWORK_VARIABLES}
        first = subprocess.run([sys.executable, "-m", "controller", "crawl", url, "--redis",
                                redis_server.url, "--crawl-id", "p", "--out", str(out),
                                "--proxy", proxy, "--delay", "0", "--max-depth", "1", "--quiet"],
                               capture_output=True, text=True, timeout=120, env=environ)
    assert first.returncode == 0, first.stderr
    assert len(proxied(tinyproxy)) == 4 and sorted(log.paths()) == ["/", "/a", "/b", "/robots.txt"]
    client = redis_server.client()
    stored = b"".join(client.dump(key) or b"" for key in client.keys("*"))
    assert SECRET.encode() not in stored and SECRET.encode() not in every_byte_under(out)
    settings = shared_crawl(redis_server.url, "p").settings()
    joined = worker_config(settings, tmp_path / "w2", workers=2, processes=1, progress=False,
                           proxy="", no_proxy=False, ca_certificate="", no_check_certificate=False)
    assert (joined.proxy, joined.no_proxy) == ("", False)   # its own environment decides
    own = worker_config(settings, tmp_path / "w3", workers=2, processes=1, progress=False,
                        proxy="http://127.0.0.1:3128", no_proxy=False, ca_certificate="",
                        no_check_certificate=False)
    assert own.proxy == "http://127.0.0.1:3128"


def test_a_proxy_refusing_the_tunnel_says_so_without_its_password(tmp_path, tls_site):
    from proxyserver import TinyProxy
    with TinyProxy(tmp_path / "authproxy", credentials=("alice", SECRET)) as proxy, \
            tls_site(site) as (url, log, ca_file):
        wrong = proxy.url.replace("http://", "http://alice:wrong-password@")
        with fetcher({"https_proxy": wrong, "SSL_CERT_FILE": str(ca_file)}) as wrong_one:
            refused = wrong_one.fetch(url)
        right = proxy.url.replace("http://", f"http://alice:{SECRET}@")
        with fetcher({"https_proxy": right, "SSL_CERT_FILE": str(ca_file)}) as right_one:
            accepted = right_one.fetch(url)
    # the proxy's own answer, as it gave it (tinyproxy says 401 to a wrong password)
    assert refused.error == "connection: proxy refused the CONNECT tunnel (401 Unauthorized)"
    assert SECRET not in refused.error and "wrong-password" not in refused.error
    assert accepted.ok and accepted.body == PAGES["/"] and log.paths() == ["/"]


# -- kept-alive connections the other side closed -----------------------------------
# A server or proxy may close a kept-alive connection just as the next request
# goes out on it (tinyproxy closes each one after its response). These servers
# make that certain: each connection is answered once, as kept alive, and the
# connection's next request gets a reset (or a cut answer) instead.


def reset(request):
    """Close with SO_LINGER 0: the kernel answers with RST, not FIN."""
    request.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    request.connection.close()


def once_per_connection(answer_again=reset):
    """A handler answering the first request of each connection with ``site``
    (HTTP/1.1, kept alive) and the next one with ``answer_again``. The
    request handler object lives as long as its connection."""
    def handler(request):
        if getattr(request, "answered", False):
            return answer_again(request)
        request.answered = True
        status, headers, body = site(request)
        return status, {**headers, "Connection": "keep-alive"}, body
    return handler


def by_connection(log) -> dict[int, list[str]]:
    """The paths each connection (client port) carried, in order."""
    paths: dict[int, list[str]] = {}
    for record in log:
        paths.setdefault(record.client_port, []).append(record.path)
    return paths


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_request_lost_to_a_closed_kept_alive_connection_is_sent_again_on_a_new_one(
        tmp_path, serve, tls_site, scheme):
    server = serve if scheme == "http" else tls_site
    with server(once_per_connection()) as (url, log, *ca_file):
        trust = ("--ca-certificate", str(ca_file[0])) if ca_file else ()
        done = crawl(tmp_path / "o", url, *trust)   # --retries 0
    assert done.returncode == 0, done.stderr
    assert all(row["error"] == "" and row["status"] == "200" for row in rows(tmp_path / "o").values())
    carried = by_connection(log)
    answered = sorted(paths[0] for paths in carried.values())
    lost = [paths[1] for paths in carried.values() if len(paths) > 1]
    assert answered == ["/", "/a", "/b", "/robots.txt"]   # each page answered once
    assert lost and all(len(paths) <= 2 for paths in carried.values())   # no third try on a dead one
    assert len(log) == 4 + len(lost)   # each lost request sent again exactly once
    for path in lost:   # ... after it was lost, as the first request of a new connection
        retried = [record for record in log if record.path == path][-1]
        assert carried[retried.client_port][0] == path


def test_a_reset_on_a_new_connection_stays_an_error(serve):
    with serve(lambda request: reset(request)) as (url, log), fetcher({}) as fresh:
        result = fresh.fetch(url + "a")
    assert result.error == "connection: reset by peer" and result.attempts == 1
    assert log.paths() == ["/a"]


def test_an_answer_cut_after_its_first_byte_is_not_asked_again(serve):
    def cut(request):
        request.wfile.write(b"HTTP/1.1 2")   # then the server closes the connection
        request.wfile.flush()
    with serve(once_per_connection(cut)) as (url, log), fetcher({}) as reused:
        first, second = reused.fetch(url + "a"), reused.fetch(url + "b")
    assert first.ok and second.error.startswith("connection: ")
    assert [(record.path, record.client_port) for record in log] == \
        [("/a", log[0].client_port), ("/b", log[0].client_port)]
