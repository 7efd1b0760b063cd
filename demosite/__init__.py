"""The demo website: a generated site with a known answer, and a server for it.

    site = DemoSite(seed=2026)
    truth = site.ground_truth(max_depth=4)        # what a correct BFS crawl finds
    with DemoServer(site) as server:              # http://127.0.0.1:<port>/
        ...crawl server.url, then check server.requests against truth...
    site.planted_duplicates()                     # exact copies -> originals
    site.planted_near_duplicates()                # near copies -> originals

The package never imports the crawler's own packages: its ground truth comes
from its own link model, so it can judge them.
"""
from demosite.links import Link
from demosite.server import DemoServer, HttpServer, RequestLog, RequestRecord, serve
from demosite.site import DemoSite, Response
from demosite.truth import GroundTruth, LevelTruth

__all__ = [
    "DemoServer", "DemoSite", "GroundTruth", "HttpServer", "LevelTruth", "Link",
    "RequestLog", "RequestRecord", "Response", "serve",
]
