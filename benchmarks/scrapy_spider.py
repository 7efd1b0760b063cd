"""The Scrapy peer: a minimal spider that saves every response and follows every <a href>.

Runs in the benchmark's own virtual environment (benchmarks/.venv-scrapy), never
in the project's:

    benchmarks/.venv-scrapy/bin/scrapy runspider benchmarks/scrapy_spider.py \\
        -a start_url=http://127.0.0.1:PORT/index.html -a out=DIR

`start_url` may hold several URLs separated by spaces (the polite benchmark's
many seeds). Writes DIR/pages/<n>.body (the raw body of the n-th response),
DIR/index.tsv (`url<TAB>status<TAB>depth<TAB>file`), so the harness can check
the bytes the same way for every peer, and DIR/slots.txt, the download slots
(Scrapy's unit of politeness: one per host name or IP address) its responses
came through. Settings are Scrapy's defaults except the ones in
`custom_settings`: 16 requests in flight (on the one host too), no delay,
robots.txt not read, warnings only; `-s NAME=VALUE` on the command line
overrides them. Responses Scrapy drops (404) are not saved; non-text
responses (PDF, PNG) are saved but not parsed.
"""
import itertools
from pathlib import Path

import scrapy
from scrapy.http import TextResponse


class SaveAndFollow(scrapy.Spider):
    name = "benchmark"
    custom_settings = {
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
    }

    def __init__(self, start_url: str, out: str, **kwargs):
        super().__init__(**kwargs)
        self.start_urls_given = start_url.split()
        self.slots = set()
        self.out = Path(out)
        (self.out / "pages").mkdir(parents=True, exist_ok=True)
        self.index = open(self.out / "index.tsv", "w", encoding="utf-8")
        self.counter = itertools.count()

    async def start(self):
        # Through the duplicate filter, unlike start_urls, so that the links
        # back to the start page do not fetch it a second time (Scrapy >= 2.13).
        for url in self.start_urls_given:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        name = f"pages/{next(self.counter)}.body"
        (self.out / name).write_bytes(response.body)
        depth = response.meta.get("depth", 0)
        self.slots.add(response.meta.get("download_slot", ""))
        self.index.write(f"{response.url}\t{response.status}\t{depth}\t{name}\n")
        if isinstance(response, TextResponse):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, callback=self.parse)

    def closed(self, reason):
        self.index.close()
        (self.out / "slots.txt").write_text("".join(f"{slot}\n" for slot in sorted(self.slots)), encoding="utf-8")
