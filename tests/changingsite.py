"""A loopback site whose pages change between passes, for recrawl tests.

Each page has a body and, optionally, an ETag and a Last-Modified date; a
conditional GET that matches gets 304 (If-None-Match first, as RFC 9110
§13.2.2 orders it). Every request is logged with its headers. Run it in
this process (``ChangingSite``) or as a child process (``python
changingsite.py STATE.json``: it reads the pages from that file on every
request, so a test changes the site by rewriting the file).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def page_html(title: str, links=(), extra: str = "") -> bytes:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return (f"<!DOCTYPE html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"<p>{extra} Text of {title} for the crawler to keep.</p>{anchors}</body></html>").encode()


class ChangingSite:
    """pages: path -> {"body": bytes, "etag": str | None, "modified": epoch | None}."""

    def __init__(self, pages: dict | None = None, source: Path | None = None, delay: float = 0.0):
        self.pages = pages or {}
        self.source = source
        self.delay = delay
        self.log: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    def __enter__(self) -> ChangingSite:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def set(self, path: str, body: bytes, etag: str | None = None, modified: float | None = None):
        with self._lock:
            self.pages[path] = {"body": body, "etag": etag, "modified": modified}

    def redirect(self, path: str, location: str) -> None:
        with self._lock:
            self.pages[path] = {"body": b"", "location": location}

    def requests(self, path: str) -> list[dict]:
        with self._lock:
            return [headers for got, headers in self.log if got == path]

    def _page(self, path: str) -> dict | None:
        if self.source is not None:
            pages = json.loads(self.source.read_text(encoding="utf-8"))
            entry = pages.get(path)
            return None if entry is None else {**entry, "body": entry["body"].encode()}
        with self._lock:
            return self.pages.get(path)

    def _handler(self):
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                with site._lock:
                    site.log.append((self.path, headers))
                if site.delay:
                    time.sleep(site.delay)   # a slow server, so a test can kill mid-pass
                entry = site._page(self.path)
                if entry is None:
                    self._send(404, b"not found", {"Content-Type": "text/plain"})
                    return
                if entry.get("location"):
                    self._send(301, b"moved", {"Location": entry["location"], "Content-Type": "text/plain"})
                    return
                validators = {}
                if entry.get("etag"):
                    validators["ETag"] = entry["etag"]
                if entry.get("modified") is not None:
                    validators["Last-Modified"] = formatdate(entry["modified"], usegmt=True)
                if _not_modified(headers, entry):
                    self._send(304, b"", validators)
                    return
                self._send(200, entry["body"], {"Content-Type": "text/html; charset=utf-8",
                                                 **validators})

            def _send(self, status, body, headers):
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        return Handler


def _not_modified(headers: dict, entry: dict) -> bool:
    from email.utils import parsedate_to_datetime
    if "if-none-match" in headers:
        return bool(entry.get("etag")) and headers["if-none-match"] == entry["etag"]
    since = headers.get("if-modified-since")
    if since and entry.get("modified") is not None:
        try:
            return int(entry["modified"]) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError):
            return False
    return False


if __name__ == "__main__":   # python changingsite.py STATE.json PORTFILE [DELAY]
    site = ChangingSite(source=Path(sys.argv[1]), delay=float(sys.argv[3]) if len(sys.argv) > 3 else 0)
    with site:
        Path(sys.argv[2]).write_text(site.url, encoding="utf-8")
        threading.Event().wait()
