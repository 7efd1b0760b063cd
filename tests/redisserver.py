"""A real redis-server for the tests: loopback, an ephemeral port, its own data
directory, AOF on, started and stopped (or killed and restarted) by the test.

fakeredis cannot show what the distributed crawl relies on: the append-only
file surviving a kill -9, Lua scripts running atomically with Redis TIME.
"""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from childproc import free_port, stop

import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
START_SECONDS = 10


class RedisServer:
    def __init__(self, data_dir: Path, *, appendonly: bool = True, extra: tuple[str, ...] = ()):
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.appendonly = appendonly
        self.extra = extra
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def start(self) -> RedisServer:
        """Start on the port it had (a restart), or on a free one."""
        for _ in range(5):   # a free port can be taken between the probe and the bind
            port = self.port or free_port()
            self.proc = subprocess.Popen(
                [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir",
                 str(self.data_dir), "--appendonly", "yes" if self.appendonly else "no",
                 "--appendfsync", "always", "--save", "", "--daemonize", "no",
                 "--maxmemory-policy", "noeviction", *self.extra],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_up(port):
                self.port = port
                return self
            self.proc.kill()
            self.proc.wait()
        raise RuntimeError("redis-server did not start (is the Debian package redis-server installed?)")

    def _wait_up(self, port: int) -> bool:
        deadline = time.monotonic() + START_SECONDS
        probe = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.5)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False   # exited: most likely the port was taken
            try:
                if probe.ping():
                    return True
            except redis.exceptions.BusyLoadingError:
                pass   # replaying the AOF: up soon
            except redis.exceptions.ConnectionError:
                pass
            time.sleep(0.02)
        return False

    def kill(self) -> None:
        """kill -9: no shutdown save; only what the AOF holds survives."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        stop(self.proc)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()



def wait_created(redis_url: str, procs, timeout=60, crawl_id: str = "t"):
    """Until the first worker has stored crawl ``crawl_id`` in Redis (a
    worker started before would find no such crawl)."""
    client = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    while not client.exists(f"crawl:{{{crawl_id}}}:state"):
        assert all(p.poll() is None for p in procs), "the first worker ended too soon"
        assert time.monotonic() < deadline
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline


class RedisCluster:
    """A real Redis Cluster of ``masters`` nodes (no replicas), each a
    RedisServer in its own data directory with AOF, the slots spread by
    ``redis-cli --cluster create``. Each node's cluster bus port is chosen
    free too (not port + 10000, which can pass 65535), and kept, so a node
    killed and started again rejoins from its nodes.conf."""

    def __init__(self, data_dir: Path, masters: int = 3):
        self.data_dir = Path(data_dir)
        self.nodes = [RedisServer(self.data_dir / f"node{i}", extra=(
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-port", str(free_port()), "--cluster-node-timeout", "5000"))
            for i in range(masters)]

    @property
    def url(self) -> str:
        """One node's URL: a cluster client finds the others from it."""
        return self.nodes[0].url

    def client(self) -> redis.RedisCluster:
        return redis.RedisCluster.from_url(self.url)

    def start(self) -> RedisCluster:
        for node in self.nodes:
            node.start()
        subprocess.run([shutil.which("redis-cli") or "/usr/bin/redis-cli", "--cluster", "create",
                        *(f"127.0.0.1:{node.port}" for node in self.nodes),
                        "--cluster-replicas", "0", "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_ok()
        return self

    def wait_ok(self) -> None:
        """Until every node says the cluster is up (slots assigned, gossip done)."""
        deadline = time.monotonic() + START_SECONDS
        while not all(node.client().cluster("info").get("cluster_state") == "ok"
                      for node in self.nodes):
            assert time.monotonic() < deadline, "the Redis Cluster did not come up"
            time.sleep(0.05)   # polling an observable condition, bounded by the deadline

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
