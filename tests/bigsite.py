"""A generated site of N pages for resume and scale tests, with its own BFS answer.

Page i lives at /p/<i>.html and links to its four children 4i+1..4i+4 (so every
page is reachable), to two pseudo-random pages (cross links that make shortest
distances matter), back to its parent, and home. Deterministic, no state.
"""
from __future__ import annotations

from collections import deque

from demosite import Response

WORDS = "crawler level queue frontier page link robots delay text filter seen hash".split()


def links(i: int, n: int) -> list[int]:
    found = [c for c in range(4 * i + 1, 4 * i + 5) if c < n]
    found += [(i * 37 + 11) % n, (i * 101 + 3) % n, (i - 1) // 4 if i else 0, 0]
    return found


def page(i: int, n: int) -> bytes:
    words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(300))
    anchors = "\n".join(f'<li><a href="/p/{j}.html">page {j}</a></li>' for j in links(i, n))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Page {i}</title></head>"
            f"<body><h1>Page {i}</h1><p>{words}</p><ul>{anchors}</ul></body></html>").encode()


def handler(n: int):
    def answer(request):
        path = request.path
        if path == "/":
            return Response(301, {"Location": "/p/0.html"}, b"")
        if path.startswith("/p/") and path.endswith(".html") and path[3:-5].isdigit():
            i = int(path[3:-5])
            if i < n:
                return Response(200, {"Content-Type": "text/html; charset=utf-8"}, page(i, n))
        return Response(404, {"Content-Type": "text/plain"}, b"not found")
    return answer


def levels(n: int) -> dict[str, int]:
    """path -> shortest link distance from /p/0.html."""
    found = {0: 0}
    queue = deque([0])
    while queue:
        i = queue.popleft()
        for j in links(i, n):
            if j not in found:
                found[j] = found[i] + 1
                queue.append(j)
    return {f"/p/{i}.html": level for i, level in found.items()}
