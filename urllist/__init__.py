"""URL_List: crawl state — the frontier (total queue + level flags)."""
from urllist.frontier import Frontier, MemoryFrontier
from urllist.queued import QueuedUrl

__all__ = ["Frontier", "MemoryFrontier", "QueuedUrl"]
