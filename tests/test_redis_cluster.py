"""The Redis Cluster the sharded shared crawl is tested on: three masters
started by the test, keys of different hash tags spread over them, and a
master killed -9 and started again rejoining with its keys (AOF)."""
from __future__ import annotations


def test_tags_spread_over_the_masters_and_a_killed_master_comes_back_with_its_keys(redis_cluster):
    client = redis_cluster.client()
    for partition in range(30):
        client.set(f"crawl:{{t:{partition}}}:state", partition)
    held = [node.client().dbsize() for node in redis_cluster.nodes]
    assert sum(held) == 30 and all(count > 0 for count in held)

    victim = redis_cluster.nodes[1]
    victim.kill()
    victim.start()
    redis_cluster.wait_ok()
    assert victim.client().dbsize() == held[1]
    assert sorted(int(client.get(f"crawl:{{t:{p}}}:state")) for p in range(30)) == list(range(30))
