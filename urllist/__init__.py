"""URL_List: crawl state — the frontier (total queue + level flags)."""
from urllist.frontier import Frontier
from urllist.hosts import HostFrontier, Readiness
from urllist.queued import QueuedUrl

__all__ = ["Frontier", "HostFrontier", "QueuedUrl", "Readiness"]
