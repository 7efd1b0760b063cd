"""The Controller, and the crawler's Python API::

    from controller import crawl, read_crawl

``crawl`` and ``read_crawl`` are imported when first used (controller/api.py),
so ``crawler --help`` does not pay for them.
"""
__all__ = ["crawl", "recrawl", "read_crawl"]


def __getattr__(name: str):
    if name in ("crawl", "recrawl", "read_crawl", "CrawlResult", "CrawlData", "UsageError"):
        from controller import api
        return getattr(api, name)
    raise AttributeError(f"module 'controller' has no attribute {name!r}")
