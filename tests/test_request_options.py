"""--header, cookies (the jar, --load-cookies, --no-cookies) and HTTP
authentication (Basic, Digest), shown by what two real servers on
loopback (127.0.0.1 and 127.0.0.2) received; and that none of their
secrets reaches a file under --out or `crawler config`."""
from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from controller.api import UsageError, crawl
from demosite.server import Response, serve
from getpage.auth import basic_authorization
from getpage.cookies import Cookies, load_cookie_file
from getpage.headers import is_secret_header, parse_header

PASSWORD = "pw-S3cr3t-9431"
FILE_COOKIE = "fromfile-7f3a91"
SERVER_COOKIE = "server-c00kie-5521"
BEARER = "Bearer tok-88e1c0de"
REALM = "lab"
NONCE = "n0nce-4d2"


def _html(*links: str) -> Response:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return Response(200, {"Content-Type": "text/html"},
                    f"<html><body><p>page</p>{anchors}</body></html>".encode())


def _digest_ok(header: str, method: str = "GET") -> bool:
    """The RFC 7616 check (MD5, qop=auth) of a Digest Authorization for user u."""
    fields = dict(re.findall(r'(\w+)="?([^",]*)"?', header[len("Digest "):]))
    ha1 = hashlib.md5(f"u:{REALM}:{PASSWORD}".encode()).hexdigest()
    ha2 = hashlib.md5(f"{method}:{fields.get('uri', '')}".encode()).hexdigest()
    expected = hashlib.md5(":".join([ha1, fields.get("nonce", ""), fields.get("nc", ""),
                                     fields.get("cnonce", ""), "auth", ha2]).encode()).hexdigest()
    return fields.get("username") == "u" and fields.get("response") == expected


def site(other: str = "", auth: str = "basic", set_cookie: bool = False):
    """A handler: / links to /a, /private (behind ``auth``), /go (a redirect
    to ``other``/landing) and ``other``/b; / sets a cookie if ``set_cookie``."""
    def handler(request):
        path = request.path
        if path == "/robots.txt":
            return Response(200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n")
        if path == "/":
            page = _html("/a", "/private", "/go", *([f"{other}/b"] if other else []))
            if set_cookie:
                page.headers["Set-Cookie"] = f"sid={SERVER_COOKIE}; Path=/"
            return page
        if path == "/go":
            return Response(302, {"Location": f"{other}/landing", "Content-Length": "0"}, b"")
        if path == "/private":
            given = request.headers.get("Authorization", "")
            if auth == "basic" and given == basic_authorization("u", PASSWORD):
                return _html()
            if auth == "digest" and given.startswith("Digest ") and _digest_ok(given):
                return _html()
            challenge = (f'Basic realm="{REALM}"' if auth == "basic" else
                         f'Digest realm="{REALM}", qop="auth", nonce="{NONCE}", opaque="o1"')
            return Response(401, {"WWW-Authenticate": challenge, "Content-Type": "text/plain"},
                            b"login first")
        return _html()
    return handler


@contextmanager
def two_hosts(auth: str = "basic", set_cookie: bool = True):
    """(url1, log1, url2, log2): site() on 127.0.0.1 linking to one on 127.0.0.2."""
    with ExitStack() as stack:
        url2, log2 = stack.enter_context(serve(site(auth=auth, set_cookie=set_cookie),
                                               host="127.0.0.2"))
        url1, log1 = stack.enter_context(serve(site(url2.rstrip("/"), auth, set_cookie)))
        yield url1, log1, url2, log2


def run(url: str, out: Path, **options):
    options = {"max_depth": 2, "delay": 0, "processes": 0, "workers": 2, "quiet": True,
               "scope": "any", **options}
    return crawl(url, out=out, **options)


def index_row(out: Path, url: str) -> dict:
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return next(row for row in csv.DictReader(f) if row["url"] == url)


def headers_of(log, name: str) -> dict[str, list[str]]:
    """path -> the values of header ``name`` each request for it carried ("" = none)."""
    seen: dict[str, list[str]] = {}
    for record in log:
        seen.setdefault(record.path, []).append(record.headers.get(name, ""))
    return seen


def cookie_file(path: Path, host: str) -> Path:
    path.write_text("# Netscape HTTP Cookie File\n"
                    f"{host}\tFALSE\t/\tFALSE\t0\tpref\t{FILE_COOKIE}\n", encoding="utf-8")
    return path


def test_header_goes_with_every_request_robots_included(tmp_path):
    with two_hosts() as (url1, log1, _, log2):
        run(url1, tmp_path / "out", header=["X-Course: ir-101", "User-Agent: labbot/2.0"])
        for log in (log1, log2):
            assert {r.headers.get("x-course") for r in log} == {"ir-101"}
            # --header wins over the crawler's own User-Agent, as in wget
            assert {r.headers.get("user-agent") for r in log} == {"labbot/2.0"}
        assert "/robots.txt" in {r.path for r in log1} and "/robots.txt" in {r.path for r in log2}


def test_secret_header_goes_to_the_seeds_origin_only(tmp_path):
    with two_hosts() as (url1, log1, _, log2):
        run(url1, tmp_path / "out", header=[f"Authorization: {BEARER}"])
        assert {r.headers.get("authorization") for r in log1 if r.path != "/private"} == {BEARER}
        assert len(log2) >= 2   # /b, /landing and robots.txt were fetched there ...
        assert not any("authorization" in r.headers for r in log2)   # ... without it


def test_server_cookie_goes_back_to_its_host_only(tmp_path):
    with serve(site(set_cookie=False), host="127.0.0.2") as (url2, log2):
        with serve(site(url2.rstrip("/"), set_cookie=True)) as (url1, log1):
            run(url1, tmp_path / "out")
    cookies = headers_of(log1, "cookie")
    assert cookies["/"] == [""]                    # set by the answer to this request
    assert cookies["/a"] == [f"sid={SERVER_COOKIE}"]   # ... and sent back with the next ones
    assert not any("cookie" in r.headers for r in log2)   # never to the other host


def test_cookie_file_goes_to_its_host_only(tmp_path):
    with two_hosts(set_cookie=False) as (url1, log1, _, log2):
        run(url1, tmp_path / "out", load_cookies=str(cookie_file(tmp_path / "c.txt", "127.0.0.1")))
        assert {r.headers.get("cookie") for r in log1} == {f"pref={FILE_COOKIE}"}
        assert len(log2) >= 2 and not any("cookie" in r.headers for r in log2)


def test_no_cookies_sends_none(tmp_path):
    with two_hosts() as (url1, log1, _, log2):
        run(url1, tmp_path / "out", no_cookies=True)
        assert len(log1) >= 4
        assert not any("cookie" in r.headers for r in [*log1, *log2])


@pytest.mark.parametrize("auth", ["basic", "digest"])
def test_login_reaches_a_protected_page_and_no_other_origin(tmp_path, auth):
    with two_hosts(auth=auth) as (url1, log1, _, log2):
        run(url1, tmp_path / "out", http_user="u", http_password=PASSWORD)
        private = [r.headers.get("authorization", "") for r in log1 if r.path == "/private"]
        # asked once without, answered at once with the credentials (wget's default)
        assert private[0] == "" and private[1].startswith(auth.capitalize())
        assert index_row(tmp_path / "out", url1 + "private")["status"] == "200"
        # the redirect /go went to the other origin: nothing was sent there
        assert "/landing" in {r.path for r in log2}
        assert not any("authorization" in r.headers for r in log2)


def test_auth_no_challenge_sends_basic_from_the_first_request(tmp_path):
    with two_hosts() as (url1, log1, _, log2):
        run(url1, tmp_path / "out", http_user="u", http_password=PASSWORD, auth_no_challenge=True)
        assert {r.headers.get("authorization") for r in log1} == {basic_authorization("u", PASSWORD)}
        assert not any("authorization" in r.headers for r in log2)


def crawler(*args, env=None, stdin=""):
    return subprocess.run([sys.executable, "-m", "controller", *args], input=stdin,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def every_text(out: Path) -> str:
    """Every file under ``out``, gzip members decompressed, as one text."""
    texts = []
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            texts.append(data.decode("utf-8", "replace"))
    return "\n".join(texts)


def test_no_secret_reaches_a_file_or_crawler_config_and_resume_asks_again(tmp_path):
    out = tmp_path / "out"
    cookies = cookie_file(tmp_path / "c.txt", "127.0.0.1")
    with two_hosts() as (url1, log1, _, _log2):
        args = ["crawl", url1, "--out", str(out), "--max-pages", "2", "--delay", "0",
                "--processes", "0", "--quiet", "--warc", "--http-user", "u",
                "--load-cookies", str(cookies), "--header", f"Authorization: {BEARER}",
                "--header", "X-Course: ir-101"]
        done = crawler(*args, env={"CRAWLER_HTTP_PASSWORD": PASSWORD})
        assert done.returncode == 0, done.stderr
        sent = " ".join(" ".join(r.headers.values()) for r in log1)
        for secret in (FILE_COOKIE, SERVER_COOKIE, BEARER):   # they were in use ...
            assert secret in sent
        files = every_text(out)
        config = crawler("config", str(out))
        for secret in (PASSWORD, FILE_COOKIE, SERVER_COOKIE, BEARER, "tok-88e1c0de"):
            assert secret not in files   # ... and are written nowhere
            assert secret not in config.stdout
        assert "Authorization: [redacted]" in files and "X-Course: ir-101" in files
        assert "--http-password" in config.stdout   # the config says what to give again
        # A resumed crawl asks for them again, in one line, and changes no
        # crawl file (the lock, state/lock, is taken before anything is read).
        def files_now():
            return sorted((p, p.stat().st_mtime_ns) for p in out.rglob("*")
                          if p.is_file() and p.name != "lock")
        before = files_now()
        again = crawler("crawl", "--out", str(out), "--resume")
        assert again.returncode == 2
        assert again.stderr.count("\n") == 1
        assert "--http-password, --header Authorization" in again.stderr
        assert "give them again" in again.stderr
        assert files_now() == before
        asked = len(log1)
        resumed = crawler("crawl", "--out", str(out), "--resume", "--max-pages", "10",
                          "--header", f"Authorization: {BEARER}",
                          env={"CRAWLER_HTTP_PASSWORD": PASSWORD})
        assert resumed.returncode == 0, resumed.stderr
        # the saved plain header is sent again with the one given again
        assert len(log1) > asked
        assert {r.headers.get("x-course") for r in log1[asked:]} == {"ir-101"}
        # (once the login answered a challenge, it replaces the header's Authorization)
        assert {r.headers.get("authorization") for r in log1[asked:]} <= {
            BEARER, basic_authorization("u", PASSWORD)}
        assert log1[asked].headers.get("authorization") == BEARER


@pytest.mark.parametrize("args, words", [
    (["--header", "X-No-Colon"], "has no colon"),
    (["--header", "Bad Name: x"], "is not a header name"),
    (["--header", "Host: other.example"], "sets Host itself"),
    (["--load-cookies", "MISSING"], "cannot read it"),
    (["--load-cookies", "NOT-NETSCAPE"], "not a Netscape cookies.txt file"),
    (["--http-password", "x"], "needs --http-user"),
    (["--load-cookies", "GOOD", "--no-cookies"], "give one of them"),
])
def test_bad_request_options_are_one_line_and_exit_2(tmp_path, args, words):
    (tmp_path / "bad.txt").write_text("sid=1\n")
    cookie_file(tmp_path / "good.txt", "127.0.0.1")
    names = {"MISSING": str(tmp_path / "none.txt"), "NOT-NETSCAPE": str(tmp_path / "bad.txt"),
             "GOOD": str(tmp_path / "good.txt")}
    out = tmp_path / "out"
    done = crawler("crawl", "http://127.0.0.1:9/", "--out", str(out),
                   *(names.get(arg, arg) for arg in args))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_ask_password_reads_the_terminal_and_resume_asks_it_again(tmp_path):
    out = str(tmp_path / "out")
    with two_hosts() as (url1, log1, _, _log2):
        done = crawler("crawl", url1, "--out", out, "--max-pages", "2", "--delay", "0",
                       "--processes", "0", "--quiet", "--http-user", "u", "--ask-password",
                       stdin=PASSWORD + "\n")
        assert done.returncode == 0, done.stderr
        assert PASSWORD not in done.stdout + done.stderr
        asked = len(log1)
        # the user comes from the saved settings, the password from the prompt
        resumed = crawler("crawl", "--out", out, "--resume", "--max-pages", "10",
                          "--ask-password", stdin=PASSWORD + "\n")
        assert resumed.returncode == 0, resumed.stderr
        private = [r.headers.get("authorization", "") for r in log1[asked:] if r.path == "/private"]
        assert private[-1] == basic_authorization("u", PASSWORD)


# -- the pieces ------------------------------------------------------------

@pytest.mark.parametrize("name, secret", [
    ("Authorization", True), ("cookie", True), ("Proxy-Authorization", True),
    ("X-Api-Key", True), ("X-Auth-Token", True), ("X-Session-Id", True),
    ("Accept-Language", False), ("X-Course", False), ("User-Agent", False), ("Referer", False),
])
def test_which_headers_are_secret(name, secret):
    assert is_secret_header(name) is secret


def test_header_lines_parse_as_wget_takes_them():
    assert parse_header("Accept-Language:  de, en ") == ("Accept-Language", "de, en")
    assert parse_header("X-Empty:") == ("X-Empty", "")
    with pytest.raises(ValueError, match="one line"):
        parse_header("X-A: b\r\nX-Injected: c")


def test_cookie_jar_answers_a_host_without_cookies_cheaply_and_exactly(tmp_path):
    jar = Cookies(load_cookie_file(cookie_file(tmp_path / "c.txt", "127.0.0.1")))
    assert jar.header("http://127.0.0.1:8000/x") == f"pref={FILE_COOKIE}"
    assert jar.header("http://127.0.0.2:8000/x") is None
    assert Cookies().header("http://127.0.0.1/") is None
    domain = tmp_path / "d.txt"
    domain.write_text("# Netscape HTTP Cookie File\n"
                      ".example.org\tTRUE\t/\tFALSE\t0\tk\tv\n", encoding="utf-8")
    jar = Cookies(load_cookie_file(domain))
    assert jar.header("http://www.example.org/") == "k=v"
    assert jar.header("http://example.org.evil.test/") is None
    assert jar.header("http://notexample.org/") is None


def test_stats_and_settings_name_what_was_withheld(tmp_path):
    with two_hosts() as (url1, _log1, _, _log2):
        result = run(url1, tmp_path / "out", max_depth=0, http_user="u", http_password=PASSWORD,
                     header=["X-Auth-Token: t0k3n-1"])
    saved = json.loads((tmp_path / "out" / "state" / "settings.json").read_text())
    for settings in (saved, result.stats["settings"]):
        assert "http_password" not in settings
        assert settings["withheld"] == ["--http-password", "--header X-Auth-Token"]
        assert settings["headers"] == [] and settings["http_user"] == "u"


def test_api_refuses_a_bad_header_before_writing(tmp_path):
    with pytest.raises(UsageError, match="has no colon"):
        crawl("http://127.0.0.1:9/", out=tmp_path / "out", header=["nocolon"])
    assert not (tmp_path / "out").exists()


def redis_contents(client) -> bytes:
    """Every key and value in Redis, as raw bytes."""
    read = {b"string": lambda k: [client.get(k)], b"hash": lambda k: client.hgetall(k).items(),
            b"list": lambda k: client.lrange(k, 0, -1), b"set": client.smembers,
            b"zset": lambda k: client.zrange(k, 0, -1)}
    parts = []
    for key in client.scan_iter(match="*"):
        for item in read[client.type(key)](key):
            parts += [key, *(item if isinstance(item, tuple) else (item,))]
    return b" ".join(part if isinstance(part, bytes) else str(part).encode() for part in parts)


def test_a_shared_crawl_keeps_no_secret_in_redis_and_a_worker_needs_it_again(
        tmp_path, redis_server):
    password = {"CRAWLER_HTTP_PASSWORD": PASSWORD}
    with two_hosts() as (url1, log1, _, _log2):
        first = crawler("crawl", url1, "--redis", redis_server.url, "--crawl-id", "s", "--out",
                        str(tmp_path / "w1"), "--max-depth", "1", "--delay", "0", "--processes",
                        "0", "--quiet", "--http-user", "u", "--header", f"Authorization: {BEARER}",
                        "--header", "X-Course: ir-101", env=password)
        assert first.returncode == 0, first.stderr
        assert basic_authorization("u", PASSWORD) in {r.headers.get("authorization") for r in log1}
        stored = redis_contents(redis_server.client())
        on_disk = b" ".join(p.read_bytes() for p in redis_server.data_dir.rglob("*") if p.is_file())
        assert b"ir-101" in stored and b"ir-101" in on_disk   # the settings are there ...
        for secret in (PASSWORD, BEARER, SERVER_COOKIE):   # ... without a secret
            assert secret.encode() not in stored and secret.encode() not in on_disk
        worker = ["worker", "--redis", redis_server.url, "--crawl-id", "s", "--out",
                  str(tmp_path / "w2"), "--quiet", "--processes", "0"]
        refused = crawler(*worker)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
        assert "this crawl used --http-password, --header Authorization" in refused.stderr
        assert not (tmp_path / "w2").exists()
        joined = crawler(*worker, "--header", f"Authorization: {BEARER}", env=password)
        assert joined.returncode == 0, joined.stderr


def test_recrawl_needs_the_password_again(tmp_path):
    out = tmp_path / "out"
    with two_hosts() as (url1, log1, _, _log2):
        run(url1, out, max_depth=1, http_user="u", http_password=PASSWORD)
        refused = crawler("recrawl", str(out), "--quiet")
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
        assert "this crawl used --http-password" in refused.stderr
        asked = len(log1)
        again = crawler("recrawl", str(out), "--quiet", env={"CRAWLER_HTTP_PASSWORD": PASSWORD})
        assert again.returncode == 0, again.stderr
        revisits = [r.headers.get("authorization", "") for r in log1[asked:] if r.path == "/private"]
        assert revisits and revisits[-1] == basic_authorization("u", PASSWORD)


def test_merge_keeps_what_was_withheld_and_needs_no_cookies_file(tmp_path):
    from controller.config import CrawlConfig
    from controller.readers.merge import _config, _saved_settings
    from controller.resume import settings_of
    cookies = cookie_file(tmp_path / "c.txt", "127.0.0.1")
    config = CrawlConfig(seeds=("http://127.0.0.1:9/",), out=tmp_path / "w1", http_user="u",
                         http_password=PASSWORD, load_cookies=str(cookies))
    saved = settings_of(config)
    cookies.unlink()   # a worker's machine had it; the one that merges need not
    merged = _config(saved, tmp_path / "merged")
    assert merged.http_password == "" and merged.load_cookies == ""
    assert _saved_settings(merged, saved) == {**saved, "out": str(tmp_path / "merged")}


def test_both_ways_of_sending_carry_headers_cookies_and_login(tmp_path):
    """A URL in wire form goes straight to the pool, any other (here a
    non-ASCII path) through requests' preparation: the same identity either way."""
    from getpage import FetchConfig, Fetcher
    with serve(site(set_cookie=True)) as (url, log):
        origin = url.rstrip("/")
        config = FetchConfig("testbot/1", delay=0, allowed_addresses={"loopback"},
                             headers=(("X-Course", "ir-101"),), http_user="u",
                             http_password=PASSWORD, credential_origins={origin})
        with Fetcher(config) as fetcher:
            for path in ("/", "/private", "/ä", "/private?x=ä"):
                assert fetcher.fetch(origin + path).status == 200
    sent = {r.path: r.headers for r in log}
    assert sent["/%C3%A4"].get("cookie") == f"sid={SERVER_COOKIE}"
    for path in ("/%C3%A4", "/private?x=%C3%A4", "/"):
        assert sent[path].get("x-course") == "ir-101"
    assert sent["/private?x=%C3%A4"].get("authorization") == basic_authorization("u", PASSWORD)


def test_robots_groups_match_the_user_agent_option_not_a_header(tmp_path):
    def handler(request):
        if request.path == "/robots.txt":
            return Response(200, {"Content-Type": "text/plain"},
                            b"User-agent: labbot\nDisallow: /\n\nUser-agent: mybot\nDisallow: /a\n")
        return _html("/a", "/b")
    with serve(handler) as (url, log):
        run(url, tmp_path / "out", user_agent="mybot/1.0", header=["User-Agent: labbot/2.0"])
    assert {r.path for r in log} == {"/robots.txt", "/", "/b"}   # mybot's group, not labbot's
    assert {r.headers.get("user-agent") for r in log} == {"labbot/2.0"}


def test_a_domain_cookie_reaches_the_sites_other_hosts_and_no_other_site():
    import email
    from types import SimpleNamespace

    def response(*set_cookies):
        message = email.message_from_string(
            "".join(f"Set-Cookie: {value}\n" for value in set_cookies) + "\n",
            _class=__import__("http.client").client.HTTPMessage)
        return SimpleNamespace(headers={"set-cookie": ", ".join(set_cookies)},
                               _original_response=SimpleNamespace(msg=message))

    jar = Cookies()
    jar.store("http://www.example.org/", response("site=1; Domain=example.org; Path=/",
                                                  "host=2; Path=/"))
    jar.store("http://www.example.org/", response("evil=3; Domain=other.test; Path=/"))
    for number in range(200):   # many other sites' cookies do not get in the way
        jar.store(f"http://h{number}.test/", response(f"c{number}=v; Path=/"))
    assert jar.header("http://www.example.org/a") in ("site=1; host=2", "host=2; site=1")
    assert jar.header("http://shop.example.org/") == "site=1"
    assert jar.header("http://other.test/") is None   # refused: not www.example.org's domain
    assert jar.header("http://h7.test/x") == "c7=v"
    assert len(jar) == 202
