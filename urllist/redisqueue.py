"""URL_List in Redis: one crawl shared by many worker processes.

Every piece of shared crawl state lives in Redis under one hash tag per
partition of the crawl (``crawl:{ID}:`` for partition 0, ``crawl:{ID:p}:``
for partition p, so a Redis Cluster keeps a partition on one slot) and
changes only inside Lua scripts, which Redis runs one at a time: there is
no read-modify-write race between workers, and every time is Redis's own
``TIME``, never a worker's clock.

Keys (``p`` = a partition's prefix):
  p cfg          settings the scripts need (delay, per_host, max_pages, trap
                 limits, the partitions and this one's number)
  p settings     the crawl's settings as JSON (what `crawler worker` runs with)
  p state        next_id (URLs this partition queued), processed, leased; with
                 several partitions and a budget: quota, got, returned; draw:
                 the state of this partition's exploring draws (--order aco)
  p budget       (partition 0, several partitions) the page budget no partition
                 holds: free; sent:P, back:P (moved to and from partition P, in all)
  p levels       q:L, d:L: URLs of level L queued here, and acknowledged
  p flags        the design paper's level flags (list of queue totals m,
                 the crawl's: every partition holds the same)
  p q:L:HOST     URLs of level L on HOST, FIFO: "id\\tlevel\\tparent\\thost\\turl"
  p ready:L      HOSTs with URLs of level L, scored by when they may start
                 (ms; a hint that is never later than the truth: checked on use)
  p h:HOST       the host's politeness: fl (in flight), last (ms), iv, nb
  p workers      worker id -> lease deadline (ms), ordered: expired ones
                 are found with one ZRANGEBYSCORE, never a scan
  p lease:W      id -> queue entry of every URL worker W holds
  p slots:W      HOST -> request slots W holds (given back if W dies)
  p lseen:ID     redirect targets marked seen by ID's lease: fingerprint ->
                 "answer\thost\tpath" (what a retry is told; the trap
                 counts to undo if the lease is reclaimed)
  p epoch        worker id -> its epoch, raised when it is reclaimed or joins:
                 a call carrying an older one is refused (FENCED)
  p gateop:W     W's last politeness call (seq, answer): a retry is told the same;
                 a sync's seq alone (a retry gives back no slot twice)
  p idle         workers whose last sync leased fewer URLs than they asked for
  p ahead        workers holding URLs of the level after the open one (fetched
                 ahead): told when the open level closes, so they acknowledge them
  p wake:W       W's wake-up list: ms until a host may start, or -1: a level closed
                 or the crawl ended (W waits with BLPOP)
  p rate:W       W's pages per 10 s bucket (its speed, the node weight)
  p alive        when the last tick ran (a long gap: Redis was away)
  p claims       fingerprint -> the worker fetching that URL ahead of its queuing
                 (speculation); p claims:W the fingerprints W claims
  p given:W      queue entries of URLs W claimed that an offer queued, leased to W
                 (W is told with its next sync)
  p rows:W       id -> "new links\tduplicate_of" of a page W committed and has not
                 confirmed written (the row itself is in W's write-ahead file)
  p seen:B       the URL-seen set: 64-bit fingerprints of normalized URLs as
                 integers, in SEEN_BUCKETS sets (B = the low 16 bits), so
                 that Redis keeps each in its compact intset encoding
  p content      content MD5 -> id of the first page with that text
  p places       worker id -> {"host", "out"}: where each worker that joined writes
  p robots       origin -> its robots.txt answer, loaded once for every worker
  p robots-claim:ORIGIN   the worker loading it (others wait while it lives)
  p trap:host, p trap:path   the trap limits' counters
  p trap:pattern  URL pattern -> the level it was first queued at (--max-pattern-depth;
                 kept when a lease is reclaimed: the level is the same when redone)
  p oq:HOST, oe, ov, oid, otime, odef, oout:ID, oseeds, opend
                 another --order's queues by score, instead of q:L:HOST and
                 ready:L (the ordered scripts, after ``lease``, say each)

The cost a page: one ``sync`` call. A worker's fetch thread, once its page
is fetched and digested, gives back the page's request slot (with the ms
since its request ended, from which Redis counts the host's interval, so
the slot waits for the acknowledgement at no cost to the host), acknowledges
the page (its content verdict and its links, those the worker has not
already seen Redis judge) and leases the URLs for the threads it frees, in
one script; its row is in the worker's own write-ahead file, not in Redis.
Bookkeeping that need not run per page (deadline renewal, reclaiming dead
workers, speed, forgetting written rows) is a ``tick`` once a second. A
worker that finds nothing to lease is idle until another worker's sync
leaves a host ready and tells it (no polling); a lease takes a host's slot
up to AHEAD_MS before it may start, with the wait in the reply, so hosts
coming ready one by one cost no call each. A reply carries the open
level and the counts; the level flags are read only when the level changes.

Several pages a call: a host with one request slot and no interval (where
the slot of a page just done would pass straight to the host's next URL)
leases a worker a chain of its URLs under the one slot, once every other
ready host has given one URL (so the worker's threads go to different hosts
first). The worker fetches the chain one page after another, passing the
slot on locally when a request ends (RedisGate.passes_locally): no other
worker can hold it meanwhile, since Redis counts it taken until the worker
gives it back. The chain's acknowledgements are held back until its last
page is done (at most HOLD_ACKS_SECONDS) and go, with the slot, in one sync
that leases the next chain. Pages of different hosts done in the same turn
of the worker's crawl loop go together too: an acknowledgement waits for
the loop's next ``pop``. A chain may run past the worker's free threads,
to CHAIN_URLS URLs: under one slot the host's pages go one after another
whoever holds it, so the length costs no speed, and a dead worker's chain
is fetched again as any reclaimed lease is. At a delay no chain is leased:
there the host's pages/s are bounded by politeness, not Redis, and holding acknowledgements back for a
chain's intervals would hold the level barrier back too.

Exact levels: the open level closes when every URL of it is acknowledged
(requeues and reclaimed leases included), by the same rule as
urllist.hosts.HostFrontier's flags. URLs are leased from the open level's
queues first; a host with none left there may give a URL of the next level
(fetch-ahead, as HostFrontier's window: such a URL's level is final once
queued), which the worker fetches and keeps, and acknowledges only once
the open level has closed (the Controller parks it); Redis tells it when
that happens. So no host waits for the slowest host's level to end, and
every URL's level and the flags are what they would be without it.
Speculation (controller/speculation.py): the worker also fetches the links
of the pages it holds ahead before they are queued, each first claimed
(``speculate``: not in the seen-set, no other worker's claim, admitted by
the trap limits at its deepest level, and its host with no URL queued
here and free to start: the claim and the host's slot in one step, one
call a partition for a pop's URLs). The offer that queues a claimed URL
leases it to its claimer (given:W, heard with the claimer's next sync,
which a wake word asks for), so it is fetched once and its level is the
queue's; a worker's claims go with its leases when it dies or leaves.
A URL leased by a worker whose deadline passes goes back to the head of its
host's queue, its redirect marks leave the seen-set and the trap counts, and
the worker is fenced: anything it sends later (an acknowledgement, a
request slot given back, a lease renewal) is refused, because what it held
is another worker's now (a worker that was only slow, not dead, learns so
and stops: WorkerFenced).

Several Redis servers for one crawl (partitions). With ``--redis A --redis
B`` the crawl is P = 2 partitions, p on server p; on a Redis Cluster (given
by one node's URL) P = 2 a master, their tags spread over the masters by
Redis's own slot hash. A host belongs to partition crc32(host) mod P
(partition_of; only Python computes it, and passes each script the keys of
one partition): its queues, ready sets, politeness record, trap counters
and the seen-set of its URLs are all there, so every rule on them still
runs inside one script of one partition, exactly as with one Redis (its
robots.txt record, read and written by plain commands, is in its origin's
partition, crc32(origin) mod P). What crosses partitions, and how:
- A page's links: offered to their hosts' partitions (``offer``, one call
  a partition for all the pages acknowledged together) BEFORE the page is
  acknowledged in its own (``sync``, with the links of its own partition),
  so no page is counted processed while a child is still to be queued. A
  worker that dies in between leaves its page leased: done again, its links
  are offered again, all seen by then, none queued twice.
- Its text's verdict: in the digest's partition, before any link is
  offered (a duplicate's links are queued nowhere): in the page's own sync
  when its digest and all its links are in its own partition, in the offer
  of its links when they all go to the digest's partition, else in a
  ``content`` call first. A page done again after a reclaim finds its own
  id there and is no duplicate of itself.
- Ids: a partition's own count times P plus p, unique with no shared
  counter; neither dense nor ordered by level (the controller needs
  neither: ids are keys of rows, the journal and the write-ahead, and
  level boundaries are the flags).
- The level barrier: each partition counts per level (q:L, d:L); level L
  closes when every partition has d:L == q:L, checked by a worker whose sync
  finds its partition done with the level, and by every tick
  (SharedCrawl.advance: why reading the partitions one after another is
  enough). Whoever sees it tells each partition the flags (``open``),
  and each tells the workers holding its URLs fetched ahead. Fetch-ahead
  needs nothing more: a next-level URL is final once queued in any
  partition (its page's links were offered before the page's ack), and
  its page is acknowledged only after the level closed everywhere.
- Workers: a worker joins, ticks and leaves in every partition, with an
  epoch each (fencing per partition), and each partition reclaims a dead
  worker's leases on its own. A redirect target is marked in its host's
  partition; there, when the page's lease is reclaimed elsewhere, the mark
  is not undone: the page done again (same id) is answered from the marks
  kept under its id, as before, so its redirect is followed by it again;
  they are dropped once its row is written.
- A page budget (--max-pages N): exact as with one partition (leased +
  processed never above N over all partitions; the merged output holds N
  pages when the crawl has that many), and no call a page. The budget is
  dealt out to partitions, not to workers: each partition may lease while
  its own leased + processed is below its quota (the lease's limit, read in
  the same script, as with one partition), and the quotas together never
  pass N. The rest of N waits in partition 0's pool. Once a tick (and when
  a level opens) a worker moves it (SharedCrawl.share_budget): each
  partition gives back what it holds beyond the open level's URLs it has
  still to lease, and is sent what it lacks, while the pool lasts. A move
  is two counts that only grow, one at each end (partition p's returned
  and the pool's back:p; the pool's sent:p and p's got), so a move half
  done is finished by the next worker's tick and never done twice: the
  budget in flight is only ever missing from the sum, never counted twice,
  hence exact. A worker holds no budget of its own: a dead one's leases
  come back to their partition's queue when its lease ends, and with them
  the quota they used, so the crawl still reaches N. Levels stay exact:
  under a budget no URL is fetched ahead (as with one partition), so a
  level is leased only once the one before has closed everywhere, and every
  level but the last one crawled is whole. The cost: 2P + 1 calls of a few
  commands each per worker per tick, none per page; a partition whose
  quota is spent waits up to a tick for more (at the crawl's start and when
  a level opens the worker that sees it shares at once).
With one partition none of this costs anything: it is the one sync call a
page described above.
"""
from __future__ import annotations

import dataclasses
import hashlib
import heapq
import itertools
import json
import os
import threading
import time
import zlib
from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from urllist.hosts import SPECULATIVE
from urllist.queued import QueuedUrl

INF_MS = 10 ** 15          # "not until a slot is given back"
LEASE_SECONDS = 60.0       # a worker silent this long has died: its URLs go to others
POLL_SECONDS = 0.05        # how soon a retry or redirect waiting for its host asks the gate again
IDLE_SECONDS = 1.0         # an idle worker not told otherwise asks again after this long
AHEAD_MS = 100             # a lease takes a host's slot this long before it may start, at most
# A chain (a host of one slot and no interval) may run past the worker's free
# threads up to this many URLs: its pages go one after another under the one
# slot whoever holds it, so a longer chain costs no speed, only what a dead
# worker's lease holds (refetched); and a sync costs Redis nearly as much with
# 5 pages as with 10 (benchmarks/RESULTS.md, "issue 25 closing, chains of 16").
CHAIN_URLS = 16
HOLD_ACKS_SECONDS = 0.25   # a page's acknowledgement waits this long for its chain's others, at most
# A request slot given back waits for the page's acknowledgement (to share its
# sync) at most this share of the delay, and never past AHEAD_MS before the
# host may start again: the interval counts from the request's end all the
# same, but a lease can take the slot (up to AHEAD_MS early) only once it is back.
GIVE_BACK_SHARE = 0.25
KNOWN_SEEN = 16_384        # fingerprints a worker remembers Redis has judged (as --seen-cache)
RECONNECT_SECONDS = 120.0  # how long a worker waits for Redis to come back
TICK_SECONDS = 1.0         # a worker's bookkeeping (deadline, reclaim, speed, rows written)
FORGET_BATCH = 500         # keys per SCAN step and per UNLINK when a crawl is forgotten


class RedisStateError(Exception):
    """Redis cannot hold this crawl (unreachable, evicting, no persistence,
    no such crawl): the one-line reason and what to do."""


class WorkerFenced(RedisStateError):
    """This worker was taken for dead (or another process joined under its
    id): what it held belongs to other workers now, so it must stop."""


# The seen-set's layout, chosen by benchmarks/redis_seen.py (benchmarks/RESULTS.md):
# 64-bit integers in 65,536 sets stay intsets under Redis's default limit
# (512 members a set) up to about 25 million URLs, with no CONFIG SET: 9.4
# B/URL at 10^7 URLs, 14.8 at 10^6, against 56 for one SET of 8-byte
# strings, at the same Redis CPU. A Bloom filter (2-4 B/URL) cost 6-10x the
# CPU, cannot forget a reclaimed lease's marks, and its false "seen"
# answers are pages silently never fetched.
SEEN_BUCKETS = 65_536


def fingerprint(url: str) -> str:
    """A normalized URL's seen-set member: "BUCKET:INTEGER" (64-bit)."""
    value = int.from_bytes(hashlib.blake2b(url.encode("utf-8"), digest_size=8).digest(), "big",
                           signed=True)
    return f"{value % SEEN_BUCKETS}:{value}"


WINDOW_MS = 120_000   # a worker's speed (node weight): its pages over the last 2 minutes

# -- the scripts -----------------------------------------------------------
# Shared helpers, prefixed to every script. KEYS[1] is the crawl's prefix.
_PRELUDE = r"""
local p = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cfg = redis.call('HMGET', p .. 'cfg', 'delay', 'per_host', 'max_pages', 'lease', 'host_cap',
                      'query_cap', 'pattern_cap', 'parts', 'part', 'order', 'order_c', 'order_n',
                      'order_q0')
local DELAY, PER_HOST, MAX_PAGES = tonumber(cfg[1]), tonumber(cfg[2]), tonumber(cfg[3])
local LEASE, HOST_CAP, QUERY_CAP = tonumber(cfg[4]), tonumber(cfg[5]), tonumber(cfg[6])
local PATTERN_CAP = tonumber(cfg[7]) or 0   -- levels below a pattern's first; 0 = no limit
local PARTS, PART = tonumber(cfg[8]) or 1, tonumber(cfg[9]) or 0   -- the crawl's partitions, this one's
-- another --order than bfs: queues by score (_ORDERED), no level barrier
-- (2: with --max-depth, whose closure needs the links: KEEP_LINKS)
local ORDERED, ORDER_C = cfg[10] == '1' or cfg[10] == '2', tonumber(cfg[11]) or 0
local KEEP_LINKS = cfg[10] == '2'
local BATCH = tonumber(cfg[12]) or 0   -- best-n-first's n: better scores applied every n pages
local Q0 = tonumber(cfg[13]) or 1   -- aco's: a lease takes the best with probability Q0, else draws
local INF = 1e15
local HOLD_MS = 10000

local function split(s)
  local out, start = {}, 1
  while true do
    local i = string.find(s, '\t', start, true)
    if not i then out[#out + 1] = string.sub(s, start); return out end
    out[#out + 1] = string.sub(s, start, i - 1)
    start = i + 1
  end
end

local function state_num(field)
  return tonumber(redis.call('HGET', p .. 'state', field) or '0')
end

-- The seen-set, fingerprints "BUCKET:INTEGER" (fingerprint() in Python).
local function seen_key(fp)
  local colon = string.find(fp, ':', 1, true)
  return p .. 'seen:' .. string.sub(fp, 1, colon - 1), string.sub(fp, colon + 1)
end

local function seen_add(fp)
  local key, member = seen_key(fp)
  return redis.call('SADD', key, member)
end

-- Read once a call: only close_levels changes it.
local LEVEL
local function open_level()
  if not LEVEL then LEVEL = redis.call('LLEN', p .. 'flags') - 1 end
  return LEVEL
end

-- A worker taken for dead whose calls come after all may change nothing:
-- what it held is another's now. Its epoch went up when it was reclaimed
-- (or when a process joined under its id); every call carries the epoch
-- its process joined with.
local function fenced(w, epoch)
  return (redis.call('HGET', p .. 'epoch', w) or '0') ~= epoch
end

local function count_trap(h, path, by)
  if path ~= '' and QUERY_CAP > 0 then redis.call('HINCRBY', p .. 'trap:path', path, by) end
  if HOST_CAP > 0 then redis.call('HINCRBY', p .. 'trap:host', h, by) end
end

-- urlfilter.TrapGuard's pattern rule: whether a URL of this pattern
-- ('' = none) queued at level would be too deep below the pattern's first.
-- A pattern's first level, read once a call (false: not seen yet).
local PATTERN_FIRST = {}
local function pattern_first(pattern)
  local first = PATTERN_FIRST[pattern]
  if first == nil then
    first = tonumber(redis.call('HGET', p .. 'trap:pattern', pattern)) or false
    PATTERN_FIRST[pattern] = first
  end
  return first
end

local function pattern_too_deep(pattern, level)
  if pattern == '' or PATTERN_CAP == 0 then return false end
  return level - (pattern_first(pattern) or level) > PATTERN_CAP
end

local function count_pattern(pattern, level)
  if pattern ~= '' and PATTERN_CAP > 0 and not pattern_first(pattern) then
    redis.call('HSETNX', p .. 'trap:pattern', pattern, level)
    PATTERN_FIRST[pattern] = level
  end
end

-- urlfilter.TrapGuard.admit: a new URL (host h, path if it has a query or
-- '', pattern or '') to be queued at level is counted, or refused for the
-- first limit it meets, named as TrapGuard names it.
local function trap_admit(h, path, pattern, level)
  if HOST_CAP > 0 and tonumber(redis.call('HGET', p .. 'trap:host', h) or '0') >= HOST_CAP then
    return 'host-pages'
  end
  if pattern_too_deep(pattern, level) then return 'pattern-depth' end
  if path ~= '' and QUERY_CAP > 0
      and tonumber(redis.call('HGET', p .. 'trap:path', path) or '0') >= QUERY_CAP then
    return 'query-variants'
  end
  count_trap(h, path, 1)
  count_pattern(pattern, level)
  return nil
end

-- textfilter.ContentSeen's exact verdict: the id of the first page with
-- this text MD5, or -1 when id is the first ('' = no verdict asked).
-- Read once a call (CONTENT, false: none), written once (offers_written).
local CONTENT, CONTENT_NEW = {}, {}
local function contents_read(md5s)
  if #md5s == 0 then return end
  local firsts = redis.call('HMGET', p .. 'content', unpack(md5s))
  for i, md5 in ipairs(md5s) do CONTENT[md5] = firsts[i] or false end
end

local function content_first(md5, id)
  if md5 == '' then return -1 end
  if CONTENT[md5] == nil then contents_read({md5}) end
  local first, own = CONTENT[md5], tostring(id)
  -- its own id: the page is done again (its lease was reclaimed after a
  -- verdict asked in a call of its own, with several partitions)
  if first and first ~= own then return tonumber(first) end
  if first ~= own then
    CONTENT[md5] = own
    CONTENT_NEW[#CONTENT_NEW + 1] = md5
    CONTENT_NEW[#CONTENT_NEW + 1] = own
  end
  return -1
end

-- getpage.politeness.slot_ready_at: when host h may start its next request.
local function ready_at(h)
  local v = redis.call('HMGET', p .. 'h:' .. h, 'fl', 'last', 'iv', 'nb', 'win')
  if (tonumber(v[1]) or 0) >= math.min(PER_HOST, tonumber(v[5]) or PER_HOST) then return INF end
  local r = tonumber(v[4]) or 0
  if v[2] then r = math.max(r, tonumber(v[2]) + (tonumber(v[3]) or DELAY)) end
  return r
end

-- The hint for h, after something made h ready sooner or later: in the
-- open level's ready set, or else in the next level's (fetched ahead).
local ohint
local function hint(h)
  if ORDERED then return ohint(h) end
  local level = open_level()
  if level < 0 then return end
  if redis.call('EXISTS', p .. 'q:' .. level .. ':' .. h) == 1 then
    redis.call('ZADD', p .. 'ready:' .. level, ready_at(h), h)
  elseif redis.call('EXISTS', p .. 'q:' .. (level + 1) .. ':' .. h) == 1 then
    redis.call('ZADD', p .. 'ready:' .. (level + 1), ready_at(h), h)
  end
end

-- at: when the request may start (a lease may take a slot a moment ahead).
local function take_slot(w, h, at)
  redis.call('HINCRBY', p .. 'h:' .. h, 'fl', 1)
  -- With one slot a host, its release sets the time (give_slot), later still.
  if PER_HOST > 1 then redis.call('HSET', p .. 'h:' .. h, 'last', math.max(now, at or now)) end
  redis.call('HINCRBY', p .. 'slots:' .. w, h, 1)
end

-- The interval counts from when the request ENDED (its slot given back),
-- not only from when it was started: a worker's thread can be held up
-- between telling Redis it starts and its request leaving the machine,
-- which no other worker can see; the end is never before the server
-- answered, so the server sees requests at least the interval apart. A
-- slot a sync gives back some time after its request ended counts from
-- ENDED[h]: Redis's now less the ms the worker counted since the end, never
-- earlier than the true end (the call's transit counts too).
local ENDED = {}
local function give_slot(w, h, hint_later)
  if tonumber(redis.call('HGET', p .. 'slots:' .. w, h) or '0') <= 0 then return 0 end
  redis.call('HINCRBY', p .. 'slots:' .. w, h, -1)
  redis.call('HINCRBY', p .. 'h:' .. h, 'fl', -1)
  local ended = ENDED[h] or now
  if tonumber(redis.call('HGET', p .. 'h:' .. h, 'last') or '0') < ended then
    redis.call('HSET', p .. 'h:' .. h, 'last', ended)
  end
  if not hint_later then hint(h) end
  return 1
end

-- Speculation (controller/speculation.py): a URL not queued yet that
-- worker c fetches ahead is claimed by c (the speculate script); the offer
-- that queues it leases it to c at once (given:c, told with c's next sync),
-- so it is fetched once, and its level is the one the offer gives it.
-- Claims lapse with c's leases (release_worker): the URL is then queued as
-- any other.
local CLAIMED
local function given_to_claimer(fp, nid, entry)
  if CLAIMED == nil then CLAIMED = redis.call('EXISTS', p .. 'claims') == 1 end
  if not CLAIMED then return false end
  local c = redis.call('HGET', p .. 'claims', fp)
  if not c then return false end
  redis.call('HDEL', p .. 'claims', fp)
  redis.call('SREM', p .. 'claims:' .. c, fp)
  redis.call('HSET', p .. 'lease:' .. c, nid, entry)
  redis.call('HINCRBY', p .. 'state', 'leased', 1)
  redis.call('RPUSH', p .. 'given:' .. c, entry)
  redis.call('SADD', p .. 'ahead', c)   -- of the next level: acknowledged once the open one closes
  redis.call('RPUSH', p .. 'wake:' .. c, -1)
  return true
end

local function unclaim(w, fp)
  if redis.call('HGET', p .. 'claims', fp) == w then redis.call('HDEL', p .. 'claims', fp) end
  redis.call('SREM', p .. 'claims:' .. w, fp)
end

local function unclaim_all(w)
  for _, fp in ipairs(redis.call('SMEMBERS', p .. 'claims:' .. w)) do unclaim(w, fp) end
  redis.call('DEL', p .. 'given:' .. w)   -- what it lists is in lease:w, requeued with it
end

local orequeue
local function requeue(entry)
  if ORDERED then return orequeue(entry) end
  local f = split(entry)
  local level, h = f[2], f[4]
  redis.call('LPUSH', p .. 'q:' .. level .. ':' .. h, entry)
  redis.call('ZADD', p .. 'ready:' .. level, 0, h)
end

-- Everything worker w holds goes back: its URLs to the head of their
-- queues, its request slots to their hosts, its redirect marks out of seen.
local function release_worker(w)
  local leases = redis.call('HGETALL', p .. 'lease:' .. w)
  for i = 1, #leases, 2 do
    requeue(leases[i + 1])
    local marks = p .. 'lseen:' .. leases[i]
    local m = redis.call('HGETALL', marks)
    for j = 1, #m, 2 do
      local key, member = seen_key(m[j])
      redis.call('SREM', key, member)
      local f = split(m[j + 1])   -- answer, host, path
      if f[1] == '1' then count_trap(f[2], f[3], -1) end
    end
    redis.call('DEL', marks)
  end
  redis.call('DEL', p .. 'lease:' .. w, p .. 'wake:' .. w)
  unclaim_all(w)
  redis.call('SREM', p .. 'idle', w)
  redis.call('SREM', p .. 'ahead', w)
  local count = #leases / 2
  if count > 0 then
    redis.call('HINCRBY', p .. 'state', 'leased', 0 - count)
    redis.call('HINCRBY', p .. 'state', 'reclaimed', count)
  end
  local slots = redis.call('HGETALL', p .. 'slots:' .. w)
  redis.call('DEL', p .. 'slots:' .. w)
  for i = 1, #slots, 2 do
    local held = tonumber(slots[i + 1])
    if held > 0 then redis.call('HINCRBY', p .. 'h:' .. slots[i], 'fl', 0 - held) end
    hint(slots[i])
  end
  return count
end

-- Workers renew their deadlines every TICK ms. A gap far longer than that
-- since the last tick ran (three ticks, and half a lease) means Redis
-- itself was away (restarting, replaying its AOF): the silence was Redis's,
-- not the workers', so every deadline moves on by the gap before any
-- worker is judged dead.
local function excuse_outage()
  local last = tonumber(redis.call('GET', p .. 'alive') or tostring(now))
  local gap = now - last
  if gap > math.max(LEASE / 2, 3 * TICK_MS) then
    local workers = redis.call('ZRANGE', p .. 'workers', 0, -1, 'WITHSCORES')
    for i = 1, #workers, 2 do
      redis.call('ZADD', p .. 'workers', tonumber(workers[i + 1]) + gap, workers[i])
    end
  end
  redis.call('SET', p .. 'alive', now)
end

local function reclaim_expired()
  excuse_outage()
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', p .. 'workers', '-inf', now, 'LIMIT', 0, 8)) do
    release_worker(w)
    redis.call('ZREM', p .. 'workers', w)
    redis.call('HINCRBY', p .. 'epoch', w, 1)
  end
end

-- An id unique over the crawl's partitions without a shared counter: the
-- partition's own count of URLs, times the partitions, plus its number
-- (with one partition, 0, 1, 2 ...).
-- The count is read once a call and written once (offers_written).
local NEXT_ID, NEXT_READ
local function new_id()
  if not NEXT_ID then
    NEXT_ID = state_num('next_id')
    NEXT_READ = NEXT_ID
  end
  NEXT_ID = NEXT_ID + 1
  return (NEXT_ID - 1) * PARTS + PART
end

-- What a call's offers queue, gathered so that it costs one command a
-- queue, a ready set, a count (offers_written): entries by queue key, in
-- order; hosts by level; URLs queued by level.
local QUEUED = {keys = {}, entries = {}, hosts = {}, levels = {}}
local function queue_new(level, h, entry)
  local key = p .. 'q:' .. level .. ':' .. h
  local list = QUEUED.entries[key]
  if not list then
    list = {}
    QUEUED.entries[key] = list
    QUEUED.keys[#QUEUED.keys + 1] = key
    local hosts = QUEUED.hosts[level]
    if not hosts then
      hosts = {}
      QUEUED.hosts[level] = hosts
    end
    if not hosts[h] then
      hosts[h] = true
      hosts[#hosts + 1] = 0
      hosts[#hosts + 1] = h
    end
  end
  list[#list + 1] = entry
end

-- Before anything reads the queues, the counts or the content verdicts.
local function offers_written()
  if NEXT_ID and NEXT_ID ~= NEXT_READ then
    redis.call('HSET', p .. 'state', 'next_id', NEXT_ID)
    NEXT_READ = NEXT_ID
  end
  for _, key in ipairs(QUEUED.keys) do redis.call('RPUSH', key, unpack(QUEUED.entries[key])) end
  for level, hosts in pairs(QUEUED.hosts) do
    if level == open_level() + 1 then   -- a host's open-level URLs go first (requeued lowers this)
      for i = 2, #hosts, 2 do
        local open = p .. 'q:' .. (level - 1) .. ':' .. hosts[i]
        if redis.call('EXISTS', open) == 1 then hosts[i - 1] = INF end
      end
    end
    redis.call('ZADD', p .. 'ready:' .. level, 'NX', unpack(hosts))
  end
  for level, k in pairs(QUEUED.levels) do redis.call('HINCRBY', p .. 'levels', 'q:' .. level, k) end
  QUEUED = {keys = {}, entries = {}, hosts = {}, levels = {}}
  if #CONTENT_NEW > 0 then
    redis.call('HSET', p .. 'content', unpack(CONTENT_NEW))
    CONTENT_NEW = {}
  end
end

-- The design paper's flags: the next one once the open level is processed.
-- Counted per level (levels: q:L URLs queued at level L here, d:L of them
-- acknowledged), so a level's count is its own whatever else is queued.
-- With several partitions no partition alone knows the level is done:
-- the workers close it over all of them (SharedCrawl.advance) and each
-- partition is told (the open script).
local function close_levels()
  if PARTS > 1 or ORDERED then return end
  while true do
    local level = open_level()
    local c = redis.call('HMGET', p .. 'levels', 'q:' .. level, 'd:' .. level, 'q:' .. (level + 1))
    local following = tonumber(c[3]) or 0
    local state = redis.call('HMGET', p .. 'state', 'next_id', 'processed')
    if tonumber(state[2]) == tonumber(state[1]) then   -- the crawl is done: no idle worker waits to hear it
      for _, w in ipairs(redis.call('SMEMBERS', p .. 'idle')) do
        redis.call('RPUSH', p .. 'wake:' .. w, -1)
      end
      redis.call('DEL', p .. 'idle')
    end
    if (tonumber(c[1]) or 0) ~= (tonumber(c[2]) or 0) or following == 0 then return end
    redis.call('RPUSH', p .. 'flags', tonumber(redis.call('LINDEX', p .. 'flags', -1)) + following)
    LEVEL = nil
    -- Workers holding pages fetched ahead may acknowledge them now: told at once.
    for _, w in ipairs(redis.call('SMEMBERS', p .. 'ahead')) do
      redis.call('RPUSH', p .. 'wake:' .. w, -1)   -- -1: a level closed (not a host's wait)
    end
    redis.call('DEL', p .. 'ahead')
  end
end

-- The pages this partition may have leased or processed: the crawl's
-- budget with one partition; with several, the share of it this partition
-- holds now (its quota: the budget's section of the module's docstring).
local function allowed()
  if PARTS > 1 then return state_num('quota') end
  return MAX_PAGES
end

local function limit_reached()
  return MAX_PAGES > 0 and state_num('leased') + state_num('processed') >= allowed()
end

-- The seed paper's node weight: pages per second over the last WINDOW ms,
-- from buckets of BUCKET ms (old ones dropped as new ones fill).
local BUCKET, WINDOW = 10000, WINDOW_MS
local function count_pages(w, k)
  if k == 0 then return end
  local key = p .. 'rate:' .. w
  local bucket = math.floor(now / BUCKET)
  redis.call('HINCRBY', key, bucket, k)
  for _, b in ipairs(redis.call('HKEYS', key)) do
    if tonumber(b) <= bucket - WINDOW / BUCKET then redis.call('HDEL', key, b) end
  end
end

local function weight(w)
  local buckets = redis.call('HGETALL', p .. 'rate:' .. w)
  if #buckets == 0 then return nil end
  local sum, first = 0, math.huge
  for i = 1, #buckets, 2 do
    sum = sum + tonumber(buckets[i + 1])
    first = math.min(first, tonumber(buckets[i]))
  end
  -- pages per second over the time it has been counted, up to the window
  local span = math.min(WINDOW, math.max(BUCKET, now - first * BUCKET))
  return sum * 1000 / span
end

-- When the soonest host may start of those a lease may take from: the
-- open level's ready set and (fetch-ahead, not under a page budget) the
-- next level's. nil: no host queued.
local function first_ready()
  if ORDERED then
    local first = redis.call('ZRANGE', p .. 'otime', 0, 0, 'WITHSCORES')
    return #first > 0 and tonumber(first[2]) or nil
  end
  local level, best = math.max(open_level(), 0), nil
  for lv = level, MAX_PAGES > 0 and level or level + 1 do
    local first = redis.call('ZRANGE', p .. 'ready:' .. lv, 0, 0, 'WITHSCORES')
    if #first > 0 and (not best or tonumber(first[2]) < best) then best = tonumber(first[2]) end
  end
  return best
end

-- The open level and the counts, not the flags: a worker reads the list
-- of flags itself, once each time the open level changes. first: first_ready()
-- if the call has it already (nil: read here).
local function summary(first)
  local wait, level = -1, open_level()
  if first == nil then first = first_ready() end
  if first then wait = math.max(0, first - now) end
  local state = redis.call('HMGET', p .. 'state', 'next_id', 'processed', 'leased')
  local leased, processed = tonumber(state[3]) or 0, tonumber(state[2]) or 0
  local limit = MAX_PAGES > 0 and leased + processed >= allowed()
  -- a partition whose quota is spent leases nothing until the budget's next share: no wait to tell
  if limit and PARTS > 1 then wait = -1 end
  local out = {tonumber(state[1]) or 0, processed, leased, limit and 1 or 0, wait, level}
  if PARTS > 1 then   -- whether this partition is done with the open level (SharedCrawl.advance)
    local c = redis.call('HMGET', p .. 'levels', 'q:' .. level, 'd:' .. level)
    out[7], out[8] = tonumber(c[1]) or 0, tonumber(c[2]) or 0
  end
  return out
end

-- No polling: a worker whose sync leased fewer URLs than it asked for is
-- idle until told. After anything that may free a host (a slot given back,
-- a lease reclaimed, a level opened) one idle worker is told when the next
-- host a lease may take may start (ms from now), on its own list, which it
-- waits on with BLPOP; the one told passes the word on with its own sync.
-- Returns first_ready() if it read it (false: no host queued), for summary;
-- nil if it did not read it.
local function wake_idle()
  if redis.call('SCARD', p .. 'idle') == 0 then return end
  if PARTS > 1 and limit_reached() then return end   -- woken, it would lease nothing
  local first = first_ready() or false
  if not first or first >= INF then return first end
  local idle = redis.call('SPOP', p .. 'idle')
  redis.call('RPUSH', p .. 'wake:' .. idle, math.max(0, first - now))
  return first
end

-- Whether a slot given back may go straight to the host's next URL: the
-- host's next request may start as soon as the last ends (no interval, no
-- hold-off), so giving it back and taking it again would change nothing.
local function passes_on(h)
  local v = redis.call('HMGET', p .. 'h:' .. h, 'iv', 'nb')
  return (tonumber(v[1]) or DELAY) <= 0 and (tonumber(v[2]) or 0) <= now
end

-- Up to n URLs whose hosts may start within AHEAD_MS, each with its
-- host's request slot taken for worker w and the ms until its request may
-- start (waits): first from the hosts whose slots w gives back in this call
-- (given: passed on to their next URL, or given back), then from the open
-- level's ready set, then (fetch-ahead, at most `ahead` URLs) from the next
-- level's. Taking a slot a moment ahead spares the calls that would ask
-- again as each host comes ready. Also the hosts given back and not taken
-- again, whose ready hints are still to be set.
-- A host with one request slot and no interval passes it on to its next
-- URL with no wait: once every ready host has given one URL, such hosts
-- give w more under their one slot (a chain, up to CHAIN_URLS in the call), each with
-- wait -1: fetched by w one after another, each behind the one before, so
-- that several pages share one call. The slot stays taken here until w
-- gives it back after the chain's last request: no other worker's request
-- comes between, and a worker that dies holds the host as a page's lease does.
--
-- Fetch-ahead: a URL of level L+1 is final once queued (only pages of level
-- L queue it), so it may be fetched while L is open; the worker keeps the
-- page and acknowledges it only once L has closed, so levels and flags stay
-- exact. A host gives its next level's URLs only once its open-level queue
-- is empty (a host's URLs go in level order, as in one machine's FIFO).
-- Not under a page budget: the budget must go to the open level first.
local olease
local function lease(w, n, given, ahead)
  if ORDERED then return olease(w, n, given) end
  local out, waits, later, chainable, fields = {}, {}, {}, {}, {}
  local level = open_level()
  local after = level + 1
  if MAX_PAGES > 0 then ahead = 0 end
  local may_ahead = ahead
  local function leased(entry, wait, lv)
    fields[#fields + 1] = string.match(entry, '^(%d+)')
    fields[#fields + 1] = entry
    out[#out + 1] = entry
    waits[#waits + 1] = wait
    n = n - 1
    if lv == after then ahead = ahead - 1 end
  end
  local function requeued(h, q, lv)
    local ready = p .. 'ready:' .. lv
    if redis.call('LLEN', q) == 0 then
      redis.call('ZREM', ready, h)
      -- its next level's URLs may go now (their hint was held back)
      if lv == level then redis.call('ZADD', p .. 'ready:' .. after, 'XX', ready_at(h), h) end
    else redis.call('ZADD', ready, ready_at(h), h) end
  end
  local function take(h, at, passed, lv)
    local q = p .. 'q:' .. lv .. ':' .. h
    local entry = redis.call('LPOP', q)
    if entry then
      if not passed then take_slot(w, h, at) end
      leased(entry, math.max(0, at - now), lv)
      redis.call('HINCRBY', p .. 'state', 'leased', 1)
      if PER_HOST == 1 and (passed or passes_on(h)) then chainable[#chainable + 1] = {h, lv} end
    end
    requeued(h, q, lv)
  end
  -- the level whose queue gives h's next URL, if one may be leased
  local function next_of(h)
    if redis.call('EXISTS', p .. 'q:' .. level .. ':' .. h) == 1 then return level end
    if ahead > 0 and redis.call('EXISTS', p .. 'q:' .. after .. ':' .. h) == 1 then return after end
    return nil
  end
  local soon = now + AHEAD_MS
  for _, h in ipairs(given) do
    local lv = next_of(h)
    if n > 0 and lv and not limit_reached() and passes_on(h) then
      take(h, now, true, lv)
    else
      give_slot(w, h, true)
      local at = ready_at(h)
      if n > 0 and lv and not limit_reached() and at <= soon then take(h, at, false, lv)
      else later[#later + 1] = h end
    end
  end
  local ready = p .. 'ready:' .. level
  local tries = 0
  while n > 0 and not limit_reached() and tries < 4 * n + 16 do
    tries = tries + 1
    local h = redis.call('ZRANGEBYSCORE', ready, '-inf', soon, 'LIMIT', 0, 1)[1]
    if not h then break end
    local at = ready_at(h)
    if at > soon then redis.call('ZADD', ready, at, h) else take(h, at, false, level) end
  end
  if n > 0 and ahead > 0 then
    local ready_after = p .. 'ready:' .. after
    for _, h in ipairs(redis.call('ZRANGEBYSCORE', ready_after, '-inf', soon, 'LIMIT', 0, 2 * n + 8)) do
      if n <= 0 or ahead <= 0 then break end
      if redis.call('EXISTS', p .. 'q:' .. level .. ':' .. h) == 1 then
        -- its open-level URLs first: requeued() lowers this when they are all out
        redis.call('ZADD', ready_after, INF, h)
      else
        local at = ready_at(h)
        if at > soon then redis.call('ZADD', ready_after, at, h) else take(h, at, false, after) end
      end
    end
  end
  local room = n > 0 and math.max(n, CHAIN_URLS - #out) or 0
  if MAX_PAGES > 0 then room = math.min(room, allowed() - state_num('leased') - state_num('processed')) end
  if room > 0 and #chainable > 0 then
    local chained = 0
    for i = 1, #chainable do   -- the URLs left over, shared among the chains
      local h, lv = chainable[i][1], chainable[i][2]
      local q = p .. 'q:' .. lv .. ':' .. h
      local k = math.ceil((room - chained) / (#chainable - i + 1))
      if lv == after then k = math.min(k, ahead) end
      local entries = k > 0 and redis.call('LPOP', q, k) or false
      for _, entry in ipairs(entries or {}) do
        leased(entry, -1, lv)
        chained = chained + 1
      end
      if entries then requeued(h, q, lv) end
    end
    if chained > 0 then redis.call('HINCRBY', p .. 'state', 'leased', chained) end
  end
  if #fields > 0 then redis.call('HSET', p .. 'lease:' .. w, unpack(fields)) end
  if ahead < may_ahead then redis.call('SADD', p .. 'ahead', w) end   -- told when the level closes
  return out, waits, later
end

-- Another --order than bfs (cfg order = 1, or 2 with --max-depth). A host's waiting URLs are a
-- ZSET oq:HOST of ids (zero-padded: equal scores go smallest id first, as
-- in urllist.ordered) scored by minus their priority; oe holds a waiting
-- URL's entry, ov its order's terms ("acc\tbest\taux": acc sums what each
-- link brought (importance's in-links times a, opic's cash), best is the
-- best link score (best-first, shark; importance's b*IL; aco's log
-- weight), aux the best inherited score (shark)), oid a known URL's id by
-- fingerprint (a link to it may raise its score or lower its level). otime: hosts with waiting
-- URLs by when they may start (a hint never later than the truth, as
-- ready:L). No level barrier: a URL's level is the shortest path offered
-- so far, and the final levels are recomputed from the edges (crawler merge).
local SEED_PRIORITY = 1e9
local function omember(id) return string.format('%015d', tonumber(id)) end

local function opriority(f, terms)
  if f[3] == '' and tonumber(f[2]) == 0 then return SEED_PRIORITY end
  local t = split(terms or '0\t0\t0')
  return tonumber(t[1]) + tonumber(t[2]) + ORDER_C / (1 + tonumber(f[2]))
end

-- terms: its ov (read here if not given); entry_kept: oe holds this entry already
local function oqueue(id, entry, f, terms, entry_kept)
  terms = terms or redis.call('HGET', p .. 'ov', id)
  redis.call('ZADD', p .. 'oq:' .. f[4], -opriority(f, terms), omember(id))
  if not entry_kept then redis.call('HSET', p .. 'oe', id, entry) end
end

ohint = function(h)
  if redis.call('EXISTS', p .. 'oq:' .. h) == 1 then redis.call('ZADD', p .. 'otime', ready_at(h), h)
  else redis.call('ZREM', p .. 'otime', h) end
end

orequeue = function(entry)
  local f = split(entry)
  oqueue(f[1], entry, f)
  redis.call('ZADD', p .. 'otime', 0, f[4])
end

-- aco's exploring draws: the partition's own generator (MINSTD: exact in
-- a double), its state in p state's draw. The pick is made here, among this
-- partition's ready hosts, so the generator is where the pick is; one a
-- worker would have to send its draws with every sync.
local DRAW_M = 2147483647
local function odraw(state)
  state.x = math.fmod(48271 * state.x, DRAW_M)
  return (state.x - 1) / (DRAW_M - 1)
end

-- The index drawn in proportion to exp(logs[i]) by the uniform u (as
-- urllist.orders.proportional_pick: random.choices' rule).
local function opick(logs, u)
  local top = -math.huge
  for _, x in ipairs(logs) do top = math.max(top, x) end
  local cum, total = {}, 0
  for i, x in ipairs(logs) do
    total = total + math.exp(x - top)
    cum[i] = total
  end
  local target = u * total
  for i = 1, #logs - 1 do
    if cum[i] > target then return i end
  end
  return #logs
end

-- Which of the ready candidates (best first) a lease takes: the best, or
-- (Q0 < 1, two hosts or more, as OrderedFrontier._draw) with probability
-- 1 - Q0 one drawn in proportion to its weight (priority = its log).
local function ochoose(ready, state)
  if Q0 >= 1 or #ready < 2 or odraw(state) < Q0 then return 1 end
  local logs = {}
  for i, c in ipairs(ready) do logs[i] = -c[1] end
  return opick(logs, odraw(state))
end

-- Up to n URLs, the best first among the hosts that may start within
-- AHEAD_MS (at most 4n + 16 of them looked at, the soonest ready), one a
-- host per call, each with its slot taken: the order decides which,
-- politeness when (as OrderedFrontier.pop). No chains, no fetch-ahead.
olease = function(w, n, given)
  local out, waits, fields, terms = {}, {}, {}, {}
  for _, h in ipairs(given) do give_slot(w, h) end
  local soon = now + AHEAD_MS
  local hosts = redis.call('ZRANGEBYSCORE', p .. 'otime', '-inf', soon, 'LIMIT', 0, 4 * n + 16)
  local ready = {}
  for _, h in ipairs(hosts) do
    local at = ready_at(h)
    local top = redis.call('ZRANGE', p .. 'oq:' .. h, 0, 0, 'WITHSCORES')
    if #top == 0 then redis.call('ZREM', p .. 'otime', h)
    elseif at > soon then redis.call('ZADD', p .. 'otime', at, h)
    else ready[#ready + 1] = {tonumber(top[2]), top[1], h, at} end
  end
  table.sort(ready, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a[2] < b[2]
  end)
  local state = {x = Q0 < 1 and #ready > 1 and state_num('draw')}
  while #ready > 0 do
    if n <= 0 or limit_reached() then break end
    local c = table.remove(ready, ochoose(ready, state))
    local id, h = tostring(tonumber(c[2])), c[3]
    redis.call('ZREM', p .. 'oq:' .. h, c[2])
    local entry = redis.call('HGET', p .. 'oe', id)
    redis.call('HDEL', p .. 'oe', id)
    take_slot(w, h, c[4])
    ohint(h)
    fields[#fields + 1] = id
    fields[#fields + 1] = entry
    out[#out + 1] = entry
    waits[#waits + 1] = math.max(0, c[4] - now)
    terms[#terms + 1] = redis.call('HGET', p .. 'ov', id) or '0\t0\t0'
    redis.call('HINCRBY', p .. 'state', 'leased', 1)
    n = n - 1
  end
  if state.x then redis.call('HSET', p .. 'state', 'draw', state.x) end
  if #fields > 0 then redis.call('HSET', p .. 'lease:' .. w, unpack(fields)) end
  return out, waits, {}, terms
end

-- A URL queued at level (its page's parent id, host, url, terms "add\tbest\taux").
local function oenter(fp, level, parent, h, url, terms)
  local nid = tostring(new_id())
  local entry = nid .. '\t' .. level .. '\t' .. parent .. '\t' .. h .. '\t' .. url
  redis.call('HSET', p .. 'ov', nid, terms)
  redis.call('HSET', p .. 'oid', fp, nid)
  oqueue(nid, entry, split(entry), terms)
  redis.call('ZADD', p .. 'otime', 'NX', ready_at(h), h)
  return nid
end

-- A known URL still waiting takes a link's terms (acc + add, the best of
-- best and aux) and the shorter path's level.
local function oknown(fp, level, add, best, aux)
  local known = redis.call('HGET', p .. 'oid', fp)
  local terms = known and redis.call('HGET', p .. 'ov', known)
  if not terms then return end   -- done, or beyond --max-depth
  local t = split(terms)
  local better = add ~= 0 or best > tonumber(t[2]) or aux > tonumber(t[3])
  if better then
    terms = (tonumber(t[1]) + add) .. '\t' .. math.max(tonumber(t[2]), best) .. '\t'
            .. math.max(tonumber(t[3]), aux)
    redis.call('HSET', p .. 'ov', known, terms)
  end
  local entry = redis.call('HGET', p .. 'oe', known)
  if not entry then return end   -- leased
  local f = split(entry)   -- waiting: scored again, its level lowered by a shorter path
  local lower = level < tonumber(f[2])
  if lower then
    f[2] = level
    entry = table.concat(f, '\t')
  end
  if not (better or lower) then return end
  if BATCH > 0 then   -- placed again with the next batch (acks_written)
    if lower then redis.call('HSET', p .. 'oe', known, entry) end
    redis.call('SADD', p .. 'opend', known)
  else oqueue(known, entry, f, terms, not lower) end
end

-- The links of page id of level (ARGV[at ...], 5 fields each, the URL's
-- field followed by the link's terms: "url\tadd\tbest\taux"): a new one
-- queued at level + 1, or (not expand: beyond --max-depth) kept aside in
-- odef (fingerprint -> parent, host, url, terms) until a shorter path
-- brings it within (a link here, or the closure: SharedCrawl.close_deferred,
-- over the links kept under their page in oout:ID); a known one: oknown.
local function ooffer_links(id, level, expand, at, links)
  local new, seen, host_full, query_full, beyond, cut = {}, 0, 0, 0, 0, {}
  for i = at, at + 5 * (links - 1), 5 do
    local fp, h, path, pattern = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
    local l = split(ARGV[i + 4])
    local url, add, best, aux = l[1], tonumber(l[2] or '0'), tonumber(l[3] or '0'), tonumber(l[4] or '0')
    local terms = add .. '\t' .. best .. '\t' .. aux
    if KEEP_LINKS then redis.call('RPUSH', p .. 'oout:' .. id, fp) end
    if seen_add(fp) == 0 then
      local deferred = expand and redis.call('HGET', p .. 'odef', fp)
      if deferred then
        redis.call('HDEL', p .. 'odef', fp)
        local d = split(deferred)
        new[#new + 1] = oenter(fp, level + 1, d[1], d[2], d[3], terms)
        new[#new + 1] = d[3]
      else
        seen = seen + 1
        oknown(fp, level + 1, add, best, aux)
      end
    else
      local refused = trap_admit(h, path, pattern, level + 1)
      if refused == 'host-pages' then host_full = host_full + 1
      elseif refused == 'pattern-depth' then cut[#cut + 1] = pattern
      elseif refused == 'query-variants' then query_full = query_full + 1
      elseif not expand then
        redis.call('HSET', p .. 'odef', fp, id .. '\t' .. h .. '\t' .. url .. '\t' .. terms)
        beyond = beyond + 1
      else
        new[#new + 1] = oenter(fp, level + 1, id, h, url, terms)
        new[#new + 1] = url
      end
    end
  end
  return {new, {seen, host_full, query_full, beyond, #cut}, cut}
end

-- What a call's acknowledgements write, gathered so that several pages
-- acknowledged together cost one command each (acks_written).
local ACKED = {ids = {}, marks = {}, rows = {}, levels = {}}

-- The links of page id of level (ARGV[at ...], 5 fields each) queued at
-- level + 1 if new (expand: within --max-depth), here: their hosts are
-- this partition's. {new (id, url ...), counts, cut patterns}.
local function offer_links(id, level, expand, at, links)
  if ORDERED then return ooffer_links(id, level, expand, at, links) end
  local new, seen, host_full, query_full, beyond, cut = {}, 0, 0, 0, 0, {}
  for i = at, at + 5 * (links - 1), 5 do
    local fp, h, path, pattern, url = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    if seen_add(fp) == 0 then
      seen = seen + 1
    elseif not expand then
      beyond = beyond + 1
    else
      local refused = trap_admit(h, path, pattern, level + 1)
      if refused == 'host-pages' then host_full = host_full + 1
      elseif refused == 'pattern-depth' then cut[#cut + 1] = pattern
      elseif refused == 'query-variants' then query_full = query_full + 1
      else
        local nid = new_id()
        local entry = nid .. '\t' .. (level + 1) .. '\t' .. id .. '\t' .. h .. '\t' .. url
        if not given_to_claimer(fp, nid, entry) then queue_new(level + 1, h, entry) end
        new[#new + 1] = nid
        new[#new + 1] = url
      end
    end
  end
  if #new > 0 then QUEUED.levels[level + 1] = (QUEUED.levels[level + 1] or 0) + #new / 2 end
  return {new, {seen, host_full, query_full, beyond, #cut}, cut}
end

-- Worker w's acknowledgement of page id: its content verdict (md5 asked
-- here, or dup: the original's id or -1 as another partition answered;
-- '' = none), its links of this partition (ARGV[at ...]) queued if new, and
-- what its row needs from Redis kept until the worker has written it (the
-- row is in its write-ahead; elsewhere: its new links other partitions queued).
local LEASED = {}   -- a call's leases acknowledged, read at once (false: none)
local function leases_read(w, ids)
  if #ids == 0 then return end
  local entries = redis.call('HMGET', p .. 'lease:' .. w, unpack(ids))
  for i, id in ipairs(ids) do LEASED[id] = entries[i] or false end
end

local function ack(w, id, md5, dup, elsewhere, expand, at, links)
  if LEASED[id] == nil then leases_read(w, {id}) end
  local entry = LEASED[id]
  if not entry then
    local done = redis.call('HGET', p .. 'rows:' .. w, id)
    if not done then return {-1} end
    -- Committed already: this is a retry whose first reply was lost.
    local f = split(done)
    return {tonumber(f[2]), {}, {0, 0, 0, 0, 0}, tonumber(f[1]), {}}
  end
  local level = tonumber(string.match(entry, '^[^\t]*\t([^\t]*)'))
  if ORDERED then redis.call('HDEL', p .. 'ov', id) end   -- its scores went with it (opic: its cash)
  ACKED.ids[#ACKED.ids + 1] = id
  ACKED.marks[#ACKED.marks + 1] = p .. 'lseen:' .. id
  ACKED.levels[level] = (ACKED.levels[level] or 0) + 1
  local original = dup ~= '' and tonumber(dup) or content_first(md5, id)
  local offered = {{}, {0, 0, 0, 0, 0}, {}}
  if original < 0 then offered = offer_links(id, level, expand, at, links) end
  local new = offered[1]
  ACKED.rows[#ACKED.rows + 1] = id
  ACKED.rows[#ACKED.rows + 1] = (#new / 2 + (tonumber(elsewhere) or 0)) .. '\t' .. original
  return {original, new, offered[2], #new / 2, offered[3]}
end

-- The acknowledged leases dropped, their rows kept, the counts moved.
local function acks_written(w)
  offers_written()
  local k = #ACKED.ids
  if k == 0 then return end
  redis.call('HDEL', p .. 'lease:' .. w, unpack(ACKED.ids))
  redis.call('DEL', unpack(ACKED.marks))
  redis.call('HSET', p .. 'rows:' .. w, unpack(ACKED.rows))
  redis.call('HINCRBY', p .. 'state', 'leased', -k)
  redis.call('HINCRBY', p .. 'state', 'processed', k)
  for level, done in pairs(ACKED.levels) do redis.call('HINCRBY', p .. 'levels', 'd:' .. level, done) end
  if BATCH > 0 and redis.call('HINCRBY', p .. 'state', 'batch', k) >= BATCH then
    -- best-n-first's next batch, counted in this partition's pages: every better score applied
    redis.call('HSET', p .. 'state', 'batch', 0)
    for _, id in ipairs(redis.call('SMEMBERS', p .. 'opend')) do
      local entry = redis.call('HGET', p .. 'oe', id)
      if entry then oqueue(id, entry, split(entry), nil, true) end
    end
    redis.call('DEL', p .. 'opend')
  end
end
""".replace("WINDOW_MS", str(WINDOW_MS)).replace("TICK_MS", str(round(TICK_SECONDS * 1000))) \
    .replace("AHEAD_MS", str(AHEAD_MS)).replace("CHAIN_URLS", str(CHAIN_URLS))

# A worker's one call per page. ARGV: worker, epoch, seq, n (URLs wanted),
# ahead (of them, URLs of the next level it may take: fetch-ahead), the
# count of request slots given back and, per slot, its host and the ms
# since its request ended (the interval counts from then), then per page
# acknowledged: id, content md5 ('' = none), the verdict another partition
# gave ('' = none), its new links other partitions queued ('' = none),
# expand (1/0), the count of its links (those of this partition) and
# (fingerprint, host, path-if-query, pattern-or-'', url) per
# link. Slots go back first, so the lease that follows may take them. seq
# numbers the worker's calls (RedisGate's): a retry after a lost reply gives
# back no slot twice and leases nothing (the worker's resync gives back what
# the lost reply held); acknowledgements are answered from the kept rows.
_SYNC = _PRELUDE + r"""
local w, epoch, seq = ARGV[1], ARGV[2], ARGV[3]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local n, ahead, releases = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local retry, given, held = false, {}, {}
if releases > 0 then
  local ops = p .. 'gateop:' .. w
  retry = redis.call('HGET', ops, 'seq') == seq
  if not retry then
    for i = 7, 5 + 2 * releases, 2 do   -- only slots w holds (not given back by a resync)
      local h = ARGV[i]
      held[h] = held[h] or tonumber(redis.call('HGET', p .. 'slots:' .. w, h) or '0')
      if held[h] > 0 then
        held[h] = held[h] - 1
        given[#given + 1] = h
        ENDED[h] = math.max(ENDED[h] or 0, now - math.max(0, tonumber(ARGV[i + 1])))
      end
    end
    redis.call('HSET', ops, 'seq', seq)
  end
end
local acks, ids, md5s, i = {}, {}, {}, 7 + 2 * releases
while i <= #ARGV do   -- the leases and content verdicts the acknowledgements need, read at once
  ids[#ids + 1] = ARGV[i]
  if ARGV[i + 1] ~= '' and ARGV[i + 2] == '' then md5s[#md5s + 1] = ARGV[i + 1] end
  i = i + 6 + 5 * tonumber(ARGV[i + 5])
end
leases_read(w, ids)
contents_read(md5s)
i = 7 + 2 * releases
while i <= #ARGV do
  local links = tonumber(ARGV[i + 5])
  acks[#acks + 1] = ack(w, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4] == '1', i + 6,
                        links)
  i = i + 6 + 5 * links
end
acks_written(w)
if #acks > 0 then close_levels() end
if retry then n = 0 end   -- the lost reply held its URLs: the worker's resync gives them back
local out, waits, later, terms = lease(w, n, given, ahead)
for _, h in ipairs(later) do hint(h) end
local first = wake_idle()   -- another worker: this one asks again when it will
if #out < n then redis.call('SADD', p .. 'idle', w) end
local given = redis.call('LRANGE', p .. 'given:' .. w, 0, -1)
if #given > 0 then redis.call('DEL', p .. 'given:' .. w) end
return {acks, out, summary(first), waits, terms or {}, given}
"""

# Once a second, a worker's bookkeeping (its heartbeat thread). ARGV:
# worker, epoch, its fetch threads, pages acknowledged since its last tick,
# then ids whose rows it has written (forget them), '--', then ids of pages
# of other partitions, done, whose redirect marks are here (forget those). Renews its deadline,
# reclaims dead workers' leases, counts its speed, and answers how many
# URLs it may hold: what it finishes in HOLD_MS at its own recent speed (its
# weight), never less than its threads until it has a speed, so a slow or
# failing node holds few URLs, few wait on it at a level's end and few are
# fetched again if it dies.
_TICK = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local threads, pages = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', p .. 'workers', now + LEASE, w)
local sep = 5
while ARGV[sep] ~= '--' do sep = sep + 1 end
for i = 5, sep - 1, 1000 do
  redis.call('HDEL', p .. 'rows:' .. w, unpack(ARGV, i, math.min(i + 999, sep - 1)))
end
for i = sep + 1, #ARGV do redis.call('DEL', p .. 'lseen:' .. ARGV[i]) end
reclaim_expired()
local first = wake_idle()
count_pages(w, pages)
local speed = weight(w)
local cap = threads
if speed then cap = math.max(2, math.ceil(speed * HOLD_MS / 1000)) end
return {cap, summary(first)}
"""

# ARGV: worker, epoch, id, its level, fingerprint, host, path-if-query,
# pattern-or-''; in the partition of the target's host. 1: new (marked, and
# owned by the lease), 0: seen before, 2: a trap limit is full, -1: no
# lease. A retry (its first reply lost) gets the first answer. The lease is
# checked where it is, in the page's own partition; in another the marks
# stay when the lease is reclaimed, and the page done again (same id) is
# told the same answers from them (so its redirect is followed as before).
_MARK = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local id, fp, h, path, pattern = ARGV[3], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local level = tonumber(ARGV[4])   -- a redirect target takes its source's level
if tonumber(id) % PARTS == PART and redis.call('HEXISTS', p .. 'lease:' .. w, id) == 0 then
  return -1
end
local marks = p .. 'lseen:' .. id
local before = redis.call('HGET', marks, fp)
if before then return tonumber(split(before)[1]) end
if seen_add(fp) == 0 then return 0 end
local answer = trap_admit(h, path, pattern, level) and 2 or 1
redis.call('HSET', marks, fp, answer .. '\t' .. h .. '\t' .. path)
return answer
"""

# ARGV: op, worker, epoch, seq, host, milliseconds (and for 'pace': the
# window, the record's version the worker decided from, the policy's record).
# The politeness gate's operations; seq numbers a worker's calls (one at a
# time), so a retry after a lost reply is told the first answer instead of
# taking or giving a slot twice.
_GATE = _PRELUDE + r"""
-- A host's pace as the policy decided it (getpage/pacing.py, run by the
-- worker that saw the answer), stored if the record is still the version it
-- decided from: its new version; -1 if another worker's came first (the
-- worker reads the record and decides again). Never under robots.txt's
-- Crawl-delay ('rb', set by 'raise'), whatever the deciding worker knew.
local function pace(key, h, ms, window, version, record)
  if tonumber(redis.call('HGET', key, 'pv') or '0') ~= tonumber(version) then return -1 end
  local floor = tonumber(redis.call('HGET', key, 'rb') or '0')
  redis.call('HSET', key, 'iv', math.max(ms, floor), 'win', window, 'pace', record,
             'pv', tonumber(version) + 1)
  hint(h)
  return tonumber(version) + 1
end

local op, w, epoch, seq, h, ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6] or '0')
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local last = redis.call('HMGET', p .. 'gateop:' .. w, 'seq', 'answer')
if last[1] == seq then return tonumber(last[2]) end
local key = p .. 'h:' .. h
local function answer()
if op == 'start' then
  local at = ready_at(h)
  if at > now then return at - now end
  take_slot(w, h)
  hint(h)
  return 0
elseif op == 'started' then
  if tonumber(redis.call('HGET', key, 'last') or '0') < now then redis.call('HSET', key, 'last', now) end
  hint(h)
elseif op == 'release' then
  local given = give_slot(w, h)
  wake_idle()
  return given
elseif op == 'hold_off' then
  if tonumber(redis.call('HGET', key, 'nb') or '0') < now + ms then redis.call('HSET', key, 'nb', now + ms) end
  hint(h)
elseif op == 'raise' then
  if tonumber(redis.call('HGET', key, 'iv') or tostring(DELAY)) < ms then redis.call('HSET', key, 'iv', ms) end
  if tonumber(redis.call('HGET', key, 'rb') or '0') < ms then redis.call('HSET', key, 'rb', ms) end
  hint(h)
elseif op == 'pace' then
  return pace(key, h, ms, ARGV[7], ARGV[8], ARGV[9])
elseif op == 'ready' then
  return math.max(ready_at(h) - now, 0)
end
return 0
end
local result = answer()
redis.call('HSET', p .. 'gateop:' .. w, 'seq', seq, 'answer', result)
return result
"""

# ARGV: worker. A (re)starting worker gives back what it held, at once,
# gets the rows it committed but may not have written, and a new epoch (any
# other process still running under this id is fenced from now on).
_JOIN = _PRELUDE + r"""
local w = ARGV[1]
local freed = release_worker(w)
redis.call('ZADD', p .. 'workers', now + LEASE, w)
reclaim_expired()
wake_idle()
redis.call('DEL', p .. 'gateop:' .. w)
local epoch = redis.call('HINCRBY', p .. 'epoch', w, 1)
return {freed, redis.call('HGETALL', p .. 'rows:' .. w), epoch}
"""

# ARGV: worker, epoch, then (id) per URL it knows it holds, '--', then
# (host, count) per slot it knows it holds. After a reply was lost (Redis went
# away mid-call), whatever Redis gave the worker that the worker never
# heard of goes back.
_RESYNC = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local known, i = {}, 3
while ARGV[i] ~= '--' do known[ARGV[i]] = true; i = i + 1 end
local freed = 0
local leases = redis.call('HGETALL', p .. 'lease:' .. w)
for j = 1, #leases, 2 do
  if not known[leases[j]] then
    redis.call('HDEL', p .. 'lease:' .. w, leases[j])
    requeue(leases[j + 1])
    redis.call('HINCRBY', p .. 'state', 'leased', -1)
    freed = freed + 1
  end
end
local mine = {}
for j = i + 1, #ARGV, 2 do mine[ARGV[j]] = tonumber(ARGV[j + 1]) end
local slots = redis.call('HGETALL', p .. 'slots:' .. w)
for j = 1, #slots, 2 do
  local h, held = slots[j], tonumber(slots[j + 1])
  local extra = held - (mine[h] or 0)
  if extra > 0 then
    redis.call('HINCRBY', p .. 'slots:' .. w, h, 0 - extra)
    redis.call('HINCRBY', p .. 'h:' .. h, 'fl', 0 - extra)
    hint(h)
  end
end
wake_idle()
return freed
"""

# ARGV: worker, epoch. A worker leaving: what it holds goes back.
_LEAVE = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local freed = release_worker(w)
redis.call('ZREM', p .. 'workers', w)
redis.call('DEL', p .. 'rows:' .. w, p .. 'gateop:' .. w)   -- it wrote (and synced) every row
wake_idle()
return freed
"""

# ARGV: worker, epoch, then per URL to fetch before it is queued
# (speculation): fingerprint, host, path-if-query, pattern-or-'', the
# deepest level it may have. Per URL: 0 = claimed for this worker, and its
# host's request slot taken (its host has no URL queued here and may start
# now); -1 = not to be fetched (in the seen-set: queued already; claimed by
# another worker; the trap limits would refuse it at its deepest level);
# else the ms until asking again (its host busy: its queued URLs come first).
_SPECULATE = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local level, later, out = open_level(), math.max(DELAY, 50), {}
local function answer(fp, h, path, pattern, bound)
  local key, member = seen_key(fp)
  local holder = redis.call('HGET', p .. 'claims', fp)
  if redis.call('SISMEMBER', key, member) == 1 or (holder and holder ~= w)
      or (HOST_CAP > 0 and tonumber(redis.call('HGET', p .. 'trap:host', h) or '0') >= HOST_CAP)
      or pattern_too_deep(pattern, bound)
      or (path ~= '' and QUERY_CAP > 0
          and tonumber(redis.call('HGET', p .. 'trap:path', path) or '0') >= QUERY_CAP) then
    return -1
  end
  local queued = redis.call('LLEN', p .. 'q:' .. level .. ':' .. h)
    + redis.call('LLEN', p .. 'q:' .. (level + 1) .. ':' .. h)
  if queued > 0 then return math.max(queued * DELAY, 50) end
  local at = ready_at(h)
  if at >= INF then return later end
  if at > now then return at - now end
  redis.call('HSET', p .. 'claims', fp, w)
  redis.call('SADD', p .. 'claims:' .. w, fp)
  take_slot(w, h)
  hint(h)
  return 0
end
for i = 3, #ARGV, 5 do
  out[#out + 1] = answer(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4]))
end
return out
"""

# ARGV: worker, epoch, then per page: id, level, expand (1/0), its content
# md5 when its verdict is asked here ('' = none), the count of its links of
# this partition and their 5 fields each (as the sync's). A page's links in
# the partitions of their hosts, offered before the page is acknowledged in
# its own, so no page counts processed before its children are queued. A
# page done again after its lease was reclaimed offers them again: all seen,
# nothing queued twice. Per page {new, counts, cut, the verdict (-1: no
# duplicate; a duplicate's links are not queued)}; {-1} for a page whose
# level is closed here already: it was done again by another worker, and
# this one, fenced in the page's own partition but not yet here, is late
# (its links queued now would grow the open level past its flag).
_OFFER = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local out, i = {}, 3
while i <= #ARGV do
  local level, links = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 4])
  if level < open_level() then out[#out + 1] = {-1}
  else
    local original = content_first(ARGV[i + 3], ARGV[i])
    local offered = {{}, {0, 0, 0, 0, 0}, {}}
    if original < 0 then offered = offer_links(ARGV[i], level, ARGV[i + 2] == '1', i + 5, links) end
    offered[4] = original
    out[#out + 1] = offered
  end
  i = i + 5 + 5 * links
end
offers_written()
return out
"""

# ARGV: worker, epoch, then (md5, id) per page whose text's digest is in
# this partition: the id of the first page with that text, or -1.
_CONTENT = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local out = {}
for i = 3, #ARGV, 2 do out[#out + 1] = content_first(ARGV[i], ARGV[i + 1]) end
offers_written()
return out
"""

# ARGV: the crawl's flags up to the level now open (SharedCrawl.advance);
# those this partition lacks are appended (told twice, no change).
_OPEN = _PRELUDE + r"""
local have = redis.call('LLEN', p .. 'flags')
for i = have + 1, #ARGV do redis.call('RPUSH', p .. 'flags', ARGV[i]) end
if #ARGV > have then
  -- Workers holding pages fetched ahead here may acknowledge them now: told at once.
  for _, w in ipairs(redis.call('SMEMBERS', p .. 'ahead')) do
    redis.call('RPUSH', p .. 'wake:' .. w, -1)
  end
  redis.call('DEL', p .. 'ahead')
  wake_idle()
end
return have
"""

# ARGV: the budget partition 0 has sent here in all (-1: nothing to add).
# A partition's share of a page budget (--max-pages over several
# partitions): what was sent and not yet received is added to its quota;
# what it holds beyond its open level's URLs still to lease goes back
# (counted in returned, which partition 0's pool takes in). Both counts only
# grow, so the step is safe to run twice, by any worker, and a worker that
# dies half-way loses no budget: the next one carries the counts on.
# {returned in all, URLs still to lease beyond the quota, received in all}.
_QUOTA = _PRELUDE + r"""
local sent = tonumber(ARGV[1])
local s = redis.call('HMGET', p .. 'state', 'quota', 'got', 'returned', 'leased', 'processed')
local quota, got, returned = tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0
local used = (tonumber(s[4]) or 0) + (tonumber(s[5]) or 0)
local grew = sent > got
if grew then quota, got = quota + sent - got, sent end
local level = open_level()
local c = redis.call('HMGET', p .. 'levels', 'q:' .. level, 'd:' .. level)
-- no fetch-ahead under a budget: every URL leased here is of the open level
local pending = math.max(0, (tonumber(c[1]) or 0) - (tonumber(c[2]) or 0) - (tonumber(s[4]) or 0))
if ORDERED then   -- no levels: every URL queued here and not leased yet
  local queued = tonumber(redis.call('HGET', p .. 'state', 'next_id') or '0')
  pending = math.max(0, queued - (tonumber(s[4]) or 0) - (tonumber(s[5]) or 0))
end
local spare = quota - used - pending
if spare > 0 then quota, returned = quota - spare, returned + spare end
redis.call('HSET', p .. 'state', 'quota', quota, 'got', got, 'returned', returned)
if grew then wake_idle() end
return {returned, math.max(0, pending - (quota - used)), got}
"""

# In partition 0, ARGV: per partition, what it has returned in all and the
# URLs it has to lease beyond its quota (_QUOTA's reply). The pool (free:
# the budget no partition holds) takes in what was returned and not yet
# taken in (back:P), then sends each partition what it lacks while the pool
# lasts (sent:P, in all). What each partition has been sent in all.
_POOL = _PRELUDE + r"""
local b = p .. 'budget'
local free = tonumber(redis.call('HGET', b, 'free') or '0')
for part = 0, #ARGV / 2 - 1 do
  local returned = tonumber(ARGV[2 * part + 1])
  local back = tonumber(redis.call('HGET', b, 'back:' .. part) or '0')
  if returned > back then
    free = free + returned - back
    redis.call('HSET', b, 'back:' .. part, returned)
  end
end
local out = {}
for part = 0, #ARGV / 2 - 1 do
  local give = math.min(tonumber(ARGV[2 * part + 2]), free)
  if give > 0 then
    free = free - give
    redis.call('HINCRBY', b, 'sent:' .. part, give)
  end
  out[#out + 1] = tonumber(redis.call('HGET', b, 'sent:' .. part) or '0')
end
redis.call('HSET', b, 'free', free)
return out
"""

# ARGV: (fingerprint, level) per URL kept aside beyond --max-depth that the
# closure found within it (SharedCrawl.close_deferred): queued, if still
# aside (entered twice: once). The URLs queued.
_ENTER = _PRELUDE + r"""
local n = 0
for i = 1, #ARGV, 2 do
  local deferred = redis.call('HGET', p .. 'odef', ARGV[i])
  if deferred then
    redis.call('HDEL', p .. 'odef', ARGV[i])
    local d = split(deferred)
    oenter(ARGV[i], tonumber(ARGV[i + 1]), d[1], d[2], d[3], d[4] .. '\t' .. d[5] .. '\t' .. d[6])
    n = n + 1
  end
end
offers_written()
if n > 0 then wake_idle() end
return n
"""


# ARGV: worker, origin. robots.txt's load for an origin belongs to one
# worker while that worker lives (its lease deadline not past): no guess of
# how long a slow load may take, and a dead loader's claim passes on.
_CLAIM = r"""
local p, w, origin = KEYS[1], ARGV[1], ARGV[2]
local key = p .. 'robots-claim:' .. origin
local holder = redis.call('GET', key)
if holder and holder ~= w then
  local t = redis.call('TIME')
  local deadline = redis.call('ZSCORE', p .. 'workers', holder)
  if deadline and tonumber(deadline) >= tonumber(t[1]) * 1000 then return 0 end
end
redis.call('SET', key, w)
return 1
"""

# ARGV: settings JSON, delay ms, per_host, max_pages, lease ms, host cap,
# query cap, pattern cap, partitions, this partition's number, order (1:
# another than bfs; 2: with --max-depth), order_c (importance's c), a
# seed's acc (opic: its cash), order_n (best-n-first's n), order_q0 (aco's
# q0; 1: no draws), the draws' first state (1 .. 2^31 - 2), then
# (fingerprint, host, path-if-query, pattern-or-'', url) per seed of its
# hosts. Seeds pass the seen-set and the trap limits as links do (a crawl of
# one machine queues them through TrapGuard too). The seeds queued, or -1:
# the crawl exists already.
_CREATE = _PRELUDE + r"""
if redis.call('EXISTS', p .. 'state') == 1 then return -1 end
redis.call('SET', p .. 'settings', ARGV[1])
redis.call('HSET', p .. 'cfg', 'delay', ARGV[2], 'per_host', ARGV[3], 'max_pages', ARGV[4],
           'lease', ARGV[5], 'host_cap', ARGV[6], 'query_cap', ARGV[7],
           'pattern_cap', ARGV[8], 'parts', ARGV[9], 'part', ARGV[10], 'order', ARGV[11],
           'order_c', ARGV[12], 'order_n', ARGV[14], 'order_q0', ARGV[15])
HOST_CAP, QUERY_CAP, PATTERN_CAP = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
PARTS, PART = tonumber(ARGV[9]), tonumber(ARGV[10])
ORDERED, KEEP_LINKS = ARGV[11] ~= '0', ARGV[11] == '2'
redis.call('HSET', p .. 'state', 'next_id', 0, 'processed', 0, 'leased', 0, 'reclaimed', 0,
           'draw', ARGV[16])
local n = 0
for i = 17, #ARGV, 5 do
  local h, path, pattern, url = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if seen_add(ARGV[i]) == 1 and not trap_admit(h, path, pattern, 0) then
    local entry = new_id() .. '\t0\t\t' .. h .. '\t' .. url
    if ORDERED then
      local id = split(entry)[1]
      redis.call('HSET', p .. 'ov', id, ARGV[13] .. '\t0\t0')
      redis.call('RPUSH', p .. 'oseeds', id)
      redis.call('HSET', p .. 'oid', ARGV[i], id)
      orequeue(entry)
    else
      redis.call('RPUSH', p .. 'q:0:' .. h, entry)
      redis.call('ZADD', p .. 'ready:0', 'NX', 0, h)
    end
    n = n + 1
  end
end
redis.call('HSET', p .. 'levels', 'q:0', n)
-- with several partitions the budget starts in partition 0's pool (_POOL)
if PARTS > 1 and PART == 0 then redis.call('HSET', p .. 'budget', 'free', ARGV[4]) end
-- with several partitions level 0 opens once every partition has its seeds (SharedCrawl.create)
if PARTS == 1 then redis.call('RPUSH', p .. 'flags', n) end
offers_written()
return n
"""


@dataclass(frozen=True)
class Summary:
    """The shared crawl as the last script saw it."""
    next_id: int
    processed: int
    leased: int
    limit_reached: bool
    wait: float | None        # seconds until the next host a lease may take may start; None: no host queued
    open_level: int
    # With several partitions, this one's URLs of its open level: queued, acknowledged
    level_queued: int = -1
    level_done: int = -1

    @classmethod
    def of(cls, reply) -> Summary:
        total, processed, leased, limit, wait, level = reply[:6]
        counts = [int(c) for c in reply[6:8]] or [-1, -1]
        return cls(int(total), int(processed), int(leased), bool(int(limit)),
                   None if int(wait) < 0 else int(wait) / 1000, int(level), *counts)

    @classmethod
    def combined(cls, summaries: list[Summary], max_pages: int) -> Summary:
        """The crawl as the partitions' last replies saw it (each at its own
        moment: `finished` is a hint, checked by SharedCrawl.advance). A
        partition's limit is its quota's: the crawl's is its pages processed
        reaching the budget (they only grow, so sums of older replies are
        never past the truth)."""
        waits = [s.wait for s in summaries if s.wait is not None]
        processed = sum(s.processed for s in summaries)
        return cls(sum(s.next_id for s in summaries), processed,
                   sum(s.leased for s in summaries), 0 < max_pages <= processed,
                   min(waits) if waits else None, max(s.open_level for s in summaries))

    @property
    def level_done_here(self) -> bool:
        """This partition has acknowledged every URL it queued for its open level."""
        return self.level_queued == self.level_done >= 0

    @property
    def finished(self) -> bool:
        """Every URL acknowledged, or the page budget spent and acknowledged."""
        return self.processed == self.next_id or (self.limit_reached and self.leased == 0)


@dataclass(frozen=True)
class Commit:
    """What the acknowledgement of one page did."""
    accepted: bool
    duplicate_of: int | None = None
    new: tuple[QueuedUrl, ...] = ()    # () when a retry found the page committed already
    new_count: int = 0
    skipped: dict | None = None        # reason -> links not queued
    cut: tuple[str, ...] = ()          # the pattern of each link --max-pattern-depth refused


def parse_entry(entry: bytes | str) -> tuple[QueuedUrl, str]:
    text = entry.decode("utf-8") if isinstance(entry, bytes) else entry
    item_id, level, parent, host, url = text.split("\t", 4)
    return QueuedUrl(int(item_id), url, int(level), int(parent) if parent else None), host


def shown_url(url: str) -> str:
    """``url`` as a message may show it: its password (in the address or in a
    password= parameter) becomes PASSWORD."""
    try:
        parts = urlsplit(url)
        secret = parts.password is not None
    except ValueError:
        return url.rpartition("@")[2]   # unparseable: nothing of a login shown
    pairs = parse_qsl(parts.query)
    if not secret and "password" not in dict(pairs):
        return url
    netloc = parts.netloc
    if secret:
        netloc = f"{parts.username or ''}:PASSWORD@{netloc.rpartition('@')[2]}"
    query = urlencode([(k, "PASSWORD" if k == "password" else v) for k, v in pairs], safe="/")
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")


def connect(url: str) -> redis.Redis:
    """A client for ``url``, checked: reachable, never evicting, persistent."""
    shown = shown_url(url)
    try:
        # No retries inside redis-py: a lost reply must reach SharedCrawl.call,
        # which retries and then puts right what the lost reply changed (resync).
        client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=30,
                                      retry=Retry(NoBackoff(), 0))
        config = {**client.config_get("maxmemory-policy"), **client.config_get("appendonly"),
                  **client.config_get("save")}
    except ValueError as exc:
        raise RedisStateError(f"--redis {shown}: {exc} (give redis://HOST:PORT/DB)") from None
    except redis.exceptions.RedisError as exc:
        raise RedisStateError(f"--redis {shown}: cannot reach Redis ({exc}); start it "
                              f"(redis-server --appendonly yes) or check the address") from None
    if _is_cluster(client):
        client = redis.RedisCluster.from_url(url, socket_connect_timeout=5, socket_timeout=30,
                                             retry=Retry(NoBackoff(), 0))
    policy = _text(config.get("maxmemory-policy", "noeviction"))
    if policy != "noeviction":
        raise RedisStateError(f"--redis {shown}: maxmemory-policy is {policy}, so Redis may evict "
                              f"crawl state; set it to noeviction (CONFIG SET maxmemory-policy "
                              f"noeviction)")
    if _text(config.get("appendonly", "no")) != "yes":
        # RDB snapshots alone would bring Redis back to an older state than the
        # workers have written down: pages committed twice, ids reused.
        raise RedisStateError(f"--redis {shown}: Redis has no append-only file, so a restart "
                              f"loses what was acknowledged since its last snapshot; turn on "
                              f"AOF (CONFIG SET appendonly yes)")
    return client


def _is_cluster(client: redis.Redis) -> bool:
    """Whether the server is a node of a Redis Cluster (then its client is
    redis-py's cluster client, which sends each key to its node)."""
    return int(client.info("cluster").get("cluster_enabled", 0)) == 1


def cluster_partitions(client, crawl_id: str) -> int:
    """Partitions of a crawl on a Redis Cluster: those it was made with, or
    for a new crawl two a master, so that the partitions' tags (fixed by the
    crawl id) land on more than one master but for a rare id. A master added
    or removed since changes neither: Redis moves the slots, not the tags."""
    if not isinstance(client, redis.RedisCluster):
        return 1
    made = client.hget(prefix_of(crawl_id, 0) + "cfg", "parts")
    return int(made) if made else 2 * len(client.get_primaries())


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def partition_of(key: str, parts: int) -> int:
    """The partition of a host (or of a content digest, a robots origin): a
    stable hash every worker computes alike, so all of a host's keys are in
    one partition and every rule on them runs in one script there."""
    return zlib.crc32(key.encode("utf-8")) % parts if parts > 1 else 0


def prefix_of(crawl_id: str, part: int) -> str:
    """Partition ``part``'s key prefix: its own hash tag, so on a Redis Cluster
    the partitions spread over the masters. Partition 0 keeps the tag of a
    crawl of one partition (its settings, places and flags are the crawl's)."""
    return f"crawl:{{{crawl_id}}}:" if part == 0 else f"crawl:{{{crawl_id}:{part}}}:"


@dataclass(frozen=True)
class Partition:
    client: redis.Redis      # the server (or cluster) that holds it
    prefix: str
    scripts: dict


_SCRIPTS = (("sync", _SYNC), ("tick", _TICK), ("mark", _MARK), ("gate", _GATE), ("join", _JOIN),
            ("leave", _LEAVE), ("create", _CREATE), ("resync", _RESYNC), ("claim", _CLAIM),
            ("offer", _OFFER), ("content", _CONTENT), ("open", _OPEN), ("quota", _QUOTA),
            ("pool", _POOL), ("enter", _ENTER), ("speculate", _SPECULATE))


class SharedCrawl:
    """One crawl's keys in Redis, and the scripts that change them: over one
    Redis server, over several (partition p on server p), or over a Redis
    Cluster (its partitions' tags spread over the masters). The partitions,
    each the whole layout of the module's docstring for its hosts, and how
    a page's links and its level cross them: SharedCrawl.advance and the
    module's docstring."""

    def __init__(self, clients, crawl_id: str, partitions: int | None = None) -> None:
        self.clients = list(clients) if isinstance(clients, (list, tuple)) else [clients]
        self.crawl_id = crawl_id
        count = partitions or len(self.clients)
        scripts = [{name: client.register_script(code) for name, code in _SCRIPTS}
                   for client in self.clients]
        self.parts = [Partition(self.clients[p % len(self.clients)], prefix_of(crawl_id, p),
                                scripts[p % len(self.clients)]) for p in range(count)]
        self.client, self.prefix = self.parts[0].client, self.parts[0].prefix
        self.lost_replies = 0   # calls retried after Redis went away: state to check again
        self._max_pages: int | None = None
        self._flags: list[int] = []   # the crawl's flags read so far (they are only appended to)
        self._ordered: bool | None = None
        self.keeps_links = False   # another order with --max-depth: close_deferred at the end

    @property
    def count(self) -> int:
        return len(self.parts)

    def part_of(self, key: str) -> int:
        return partition_of(key, len(self.parts))

    def part_of_id(self, item_id: int) -> int:
        """The partition that queued a URL (its host's): ids are its count times P plus p."""
        return item_id % len(self.parts)

    def run(self, name: str, *args, part: int = 0):
        """Run a script in partition ``part``; while Redis is away (restarting,
        say), wait and try again, for up to RECONNECT_SECONDS. Every script
        is safe to run twice (a retry after a lost reply) or is put right by
        ``resync``."""
        target = self.parts[part]
        return self.call(lambda: target.scripts[name](keys=[target.prefix], args=list(args)))

    def check_partitions(self) -> None:
        """RedisStateError unless the crawl was made over as many partitions
        as this process has, each on the server this process has it on (the
        same --redis list, in the same order)."""
        made = int(self.call(lambda: self.client.hget(self.prefix + "cfg", "parts")) or 1)
        if made != self.count:
            raise RedisStateError(f"crawl {self.crawl_id} is partitioned over {made} partition(s), "
                                  f"this worker over {self.count}: give the --redis servers the "
                                  f"crawl was made with, in the same order")
        for number, part in enumerate(self.parts[1:], start=1):
            found = self.call(lambda part=part: part.client.hget(part.prefix + "cfg", "part"))
            if found is None or int(found) != number:
                raise RedisStateError(f"partition {number} of crawl {self.crawl_id} is not on "
                                      f"{_address(part.client)}: give the --redis servers the "
                                      f"crawl was made with, in the same order")

    def call(self, command):
        """``command()``, tried again while Redis is away (see ``run``)."""
        deadline = time.monotonic() + RECONNECT_SECONDS
        pause = 0.05
        while True:
            try:
                return command()
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                    redis.exceptions.BusyLoadingError, redis.exceptions.ClusterDownError,
                    redis.exceptions.TryAgainError, redis.exceptions.SlotNotCoveredError) as exc:
                if time.monotonic() + pause > deadline:
                    raise RedisStateError(f"lost Redis for {RECONNECT_SECONDS:.0f} s ({exc}); "
                                          f"run the worker again once Redis is back") from None
                self.lost_replies += 1
                time.sleep(pause)   # waiting for a server to come back: nothing to wake us sooner
                pause = min(pause * 2, 1.0)
            except redis.exceptions.ResponseError as exc:
                if "OOM" in str(exc):
                    raise RedisStateError(f"Redis is full ({exc}); raise maxmemory, the crawl "
                                          f"state is kept") from None
                raise

    def create(self, settings: dict, seeds: Iterable[tuple[str, str, str, str]], *, delay: float,
               per_host: int, max_pages: int, host_cap: int, query_cap: int,
               lease_seconds: float = LEASE_SECONDS, pattern_cap: int = 0,
               order: tuple | None = None) -> bool:
        """Store a new crawl's settings and seeds ((url, host, path if it has
        a query or '', pattern or '')); False if a crawl with this id exists
        already. ``order``: another order than bfs, (2 with --max-depth, else
        1; its c, a seed's acc, its batch: Order.shared_constants; then, if
        it draws, its q0 and seed: Order.shared_draws)."""
        head = [json.dumps(settings), round(delay * 1000), per_host, max_pages,
                round(lease_seconds * 1000), host_cap, query_cap, pattern_cap, self.count]
        mode, c, acc, batch, q0, seed = (*(order or (0, 0, 0, 0)), 1.0, 0)[:6]
        tail = [mode, c, acc, batch, q0]
        seeds_of = [[] for _ in self.parts]
        for url, host, path, pattern in seeds:
            seeds_of[self.part_of(host)] += [fingerprint(url), host, path, pattern, url]
        if self.count > 1 and self.exists():
            return False
        total = 0
        # partition 0 last: workers take the crawl for made once it has its keys
        for part in reversed(range(self.count)):
            made = int(self.run("create", *head, part, *tail, draw_start(seed, part),
                                *seeds_of[part], part=part))
            if made < 0:
                return False
            total += made
        if self.count > 1:
            self._open([total])
        return True

    @property
    def max_pages(self) -> int:
        """The crawl's page budget (0: none), as it was made."""
        if self._max_pages is None:
            self._max_pages = int(self.call(
                lambda: self.client.hget(self.prefix + "cfg", "max_pages")) or 0)
        return self._max_pages

    @property
    def ordered(self) -> bool:
        """Made in another --order than bfs: queues by score, no level barrier."""
        if self._ordered is None:   # read once the crawl is made (a worker may be made before)
            order = self.call(lambda: self.client.hget(self.prefix + "cfg", "order"))
            if order is None:
                return False
            self._ordered, self.keeps_links = order != b"0", order == b"2"
        return self._ordered

    def share_budget(self) -> None:
        """With several partitions and a page budget: each partition's spare
        quota back to the pool in partition 0, and what each lacks for its
        open level's URLs sent from there (_QUOTA, _POOL). 2P+1 calls at
        most, once a tick and when a level opens; none a page."""
        if self.count == 1 or not self.max_pages:
            return
        asked = [self.run("quota", -1, part=part) for part in range(self.count)]
        sent = self.run("pool", *[int(v) for returned, lacks, _ in asked
                                  for v in (returned, lacks)])
        for part, ((_, _, got), total) in enumerate(zip(asked, sent)):
            if int(total) > int(got):
                self.run("quota", int(total), part=part)

    def budget_spent(self) -> bool:
        """Several partitions: the budget processed, read over them one after
        another (processed counts only grow, and never pass the budget)."""
        if not self.max_pages:
            return False
        return sum(int(self.call(lambda part=part: part.client.hget(part.prefix + "state", "processed"))
                       or 0) for part in self.parts) >= self.max_pages

    def _open(self, flags: list[int]) -> None:
        for part in range(self.count):
            self.run("open", *flags, part=part)

    def advance(self) -> tuple[tuple[int, ...], bool]:
        """With several partitions: close the open level if every partition
        has acknowledged every URL it queued for it, and tell each partition
        the level now open. (The crawl's flags, whether it is finished.)

        Reading the partitions one after another is enough: the open level
        L opened once L-1 was closed, so its count of URLs queued in each
        partition no longer grows (its URLs come from pages of L-1, whose
        links were offered before they were acknowledged), and its count
        acknowledged only grows, up to the same number: equal once, equal
        from then on. Once L is closed the same holds for the counts of
        L+1, so they are read after every partition was seen done with L,
        never in the same pass: until then a page of L acknowledged in a
        partition read later may offer links to one read earlier.
        Whoever sees it opens L+1 everywhere; told twice, a partition
        does nothing. A worker that died half-way through telling them is
        put right by the next one: the partitions behind are told the flags
        of the one ahead."""
        if self.ordered:
            return (), self.budget_spent() or (self._all_done() and not self.close_deferred())
        levels = self._levels()
        flags, level = levels["flags"], len(levels["flags"]) - 1
        if level < 0:
            return self._open_seeds()
        if self.budget_spent():
            return tuple(flags), True
        if levels["behind"]:
            self._open(flags)
        if not levels["closed"]:
            return tuple(flags), False
        if levels["following"] == 0:
            return tuple(flags), True
        flags.append(flags[-1] + levels["following"])
        self._open(flags)
        return tuple(flags), False

    def _all_done(self) -> bool:
        """Another order (no level barrier): finished when every partition,
        read twice one after another, has acknowledged all it queued and
        leases nothing, with no count moved between the passes. Then there
        was a moment when every partition was idle at once (each was, from
        its first read to its second, and the reads interleave), and from
        then nothing can queue a URL: only a leased page offers links."""
        passes = [[tuple(int(v or 0) for v in self.call(lambda part=part: part.client.hmget(
            part.prefix + "state", "next_id", "processed", "leased"))) for part in self.parts]
            for _ in range(2)]
        return passes[0] == passes[1] and all(queued == done and not leased
                                              for queued, done, leased in passes[0])

    def close_deferred(self) -> int:
        """Another order with --max-depth D, every partition idle: the URLs
        kept aside beyond D whose shortest path over the fetched pages' links
        is within D now, queued; how many. A link from a page whose level
        was lowered after its links were offered (through a shortcut found
        later) lowers its targets' too, as urllist.ordered's relaxation:
        here by a breadth-first walk, D levels deep, from the seeds over the
        links each partition keeps under their page (oout:ID), in one
        pipeline a partition a level. Run again by whoever finds the crawl
        idle; queued twice, a URL is queued once."""
        settings = self.settings() or {}
        depth = int(settings.get("max_depth") or 0)
        if not depth:
            return 0
        reached = {(part, int(i)) for part in range(self.count) for i in self._pipelined(
            part, [("lrange", "oseeds", 0, -1)])[0]}
        layer, entered = sorted(reached), 0
        for level in range(1, depth + 1):
            found: dict[int, list[str]] = {}
            for part in range(self.count):
                lists = self._pipelined(part, [("lrange", f"oout:{i}", 0, -1) for _, i in layer])
                found[part] = sorted({fp.decode() for fps in lists for fp in fps})
            layer, deferred = [], []
            for part, fps in found.items():
                ids = self._pipelined(part, [("hget", "oid", fp) for fp in fps])
                for fp, item_id in zip(fps, ids):
                    if item_id is None:
                        deferred += [fp, level]
                    elif (part, int(item_id)) not in reached:
                        reached.add((part, int(item_id)))
                        layer.append((part, int(item_id)))
                if deferred:
                    entered += int(self.run("enter", *deferred, part=part))
                deferred = []
        return entered

    def _pipelined(self, part: int, commands: list[tuple]) -> list:
        """Read-only commands on keys of partition ``part`` (named without its
        prefix), in one round trip."""
        target = self.parts[part]

        def send():
            pipe = target.client.pipeline(transaction=False)
            for name, key, *args in commands:
                getattr(pipe, name)(target.prefix + key, *args)
            return pipe.execute()
        return self.call(send) if commands else []

    def _open_seeds(self) -> tuple[tuple[int, ...], bool]:
        """Level 0 opened with every partition's seeds, if the crawl's maker
        died between making the partitions and opening it (partition 0,
        made last, exists: so do the others, seeds and all)."""
        if not self.exists():
            return (), False
        seeds = sum(int(self.call(lambda part=part: part.client.hget(part.prefix + "levels", "q:0"))
                        or 0) for part in self.parts)
        self._open([seeds])
        return (seeds,), False

    def _levels(self) -> dict:
        """The open level as the partitions hold it, read one after another
        (advance says why that is enough): the flags of the one ahead,
        whether some are behind, whether every one has done its open level,
        and (if so) their URLs of the level after it."""
        lengths = [self.call(lambda part=part: part.client.llen(part.prefix + "flags"))
                   for part in self.parts]
        ahead = self.parts[max(range(self.count), key=lengths.__getitem__)]
        if max(lengths) < len(self._flags):   # the crawl was forgotten and made again
            self._flags = []
        if max(lengths) > len(self._flags):   # only the flags not read yet, not the whole list
            self._flags += [int(m) for m in self.call(
                lambda: ahead.client.lrange(ahead.prefix + "flags", len(self._flags), -1))]
        flags = list(self._flags)
        level, closed, following = len(flags) - 1, True, 0
        for part in self.parts:
            queued, done = self.call(lambda part=part: part.client.hmget(
                part.prefix + "levels", f"q:{level}", f"d:{level}"))
            closed = closed and int(queued or 0) == int(done or 0)
        if closed:
            following = sum(int(self.call(lambda part=part: part.client.hget(
                part.prefix + "levels", f"q:{level + 1}")) or 0) for part in self.parts)
        return {"flags": flags, "behind": min(lengths) < len(flags), "closed": closed,
                "following": following}

    def settings(self) -> dict | None:
        raw = self.client.get(self.prefix + "settings")
        return None if raw is None else json.loads(raw)

    def exists(self) -> bool:
        return bool(self.client.exists(self.prefix + "state"))

    def status(self) -> dict:
        """What `crawler status` shows, summed over the partitions; read only,
        a moment's snapshot."""
        state, hosts, queued, workers = Counter(), {}, Counter(), {}
        flags = self._levels()["flags"] if self.count > 1 else \
            [int(m) for m in self.client.lrange(self.prefix + "flags", 0, -1)]
        level = len(flags) - 1
        server_now, lease_ms = _server_ms(self.client), self.lease_ms()
        for part in self.parts:
            p, client = part.prefix, part.client
            state.update({k.decode(): int(v) for k, v in client.hgetall(p + "state").items()})
            for lvl in (level, level + 1):
                ready = [h.decode() for h in client.zrange(p + f"ready:{lvl}", 0, -1)]
                hosts.setdefault(lvl, set()).update(ready)
                queued[lvl] += sum(client.llen(p + f"q:{lvl}:{h}") for h in ready)
            for name, _ in client.zrange(p + "workers", 0, -1, withscores=True):
                name = name.decode()
                seen = workers.setdefault(name, Counter())
                seen["leased"] += client.hlen(p + f"lease:{name}")
                seen["rows_unconfirmed"] += client.hlen(p + f"rows:{name}")
        return {"crawl_id": self.crawl_id, "partitions": self.count, "open_level": level,
                "flags": flags, "queue_total": state.get("next_id", 0), "processed": state.get("processed", 0),
                "leased": state.get("leased", 0), "reclaimed": state.get("reclaimed", 0),
                "queued_open_level": queued[level], "queued_next_level": queued[level + 1],
                "hosts_with_work": len(hosts[level] | hosts[level + 1]),
                "workers": [self._worker_status(name, counts, server_now, lease_ms)
                            for name, counts in workers.items()],
                "finished": self._finished(state)}

    def _worker_status(self, name: str, counts: Counter, server_now: int, lease_ms: int) -> dict:
        """A worker's line of `crawler status`: its deadline and speed are kept
        in partition 0 (its ticks renew every partition alike)."""
        p, client = self.prefix, self.client
        deadline = client.zscore(p + "workers", name) or server_now + lease_ms
        pages = sum(int(v) for v in client.hvals(p + f"rate:{name}"))
        return {"worker": name, "leased": counts["leased"],
                "rows_unconfirmed": counts["rows_unconfirmed"],
                "pages_per_minute": pages * 60 / (WINDOW_MS / 1000),
                "silent_for_seconds": max(0.0, (server_now - (deadline - lease_ms)) / 1000)}

    def _finished(self, state: dict) -> bool:
        """As Summary.finished: every URL acknowledged, or the budget spent.
        With several partitions: the open level closed everywhere, nothing
        queued after it (the sums of a moment's reads could be of moments
        apart), or the budget processed (budget_spent)."""
        budget = self.max_pages
        if self.count > 1:
            levels = self._levels()
            return (levels["closed"] and levels["following"] == 0 and bool(levels["flags"])) \
                or self.budget_spent()
        processed, leased = state.get("processed", 0), state.get("leased", 0)
        return processed == state.get("next_id", 0) or (
            budget > 0 and processed + leased >= budget and leased == 0)

    def lease_ms(self) -> int:
        return int(self.client.hget(self.prefix + "cfg", "lease") or 0)

    def address(self) -> str:
        """The servers' URLs as a line may show them (after "--redis ", the
        next one after another "--redis "): a password becomes PASSWORD."""
        return " --redis ".join(_address(client) for client in self.clients)

    def record_place(self, worker: str, host: str, out: str) -> None:
        """Where ``worker`` writes: its machine and absolute output directory
        (kept after it leaves, for ``crawler merge``)."""
        place = json.dumps({"host": host, "out": out})
        self.call(lambda: self.client.hset(self.prefix + "places", worker, place))

    def places(self) -> dict[str, dict]:
        """worker id -> {"host", "out"} of every worker that ever joined."""
        return {_text(worker): json.loads(place)
                for worker, place in self.client.hgetall(self.prefix + "places").items()}

    def live_workers(self) -> list[str]:
        """The workers whose lease deadline has not passed (Redis's clock)."""
        return [_text(w) for w in self.client.zrangebyscore(self.prefix + "workers",
                                                             _server_ms(self.client), "+inf")]

    def finished(self) -> bool:
        state = {_text(k): int(v) for k, v in self.client.hgetall(self.prefix + "state").items()}
        return self._finished(state)

    def node_of(self, part: int) -> redis.Redis:
        """A client of the one server holding partition ``part`` (on a cluster,
        the master of its tag's slot), for the commands a cluster client
        cannot send to one node (SCAN)."""
        target = self.parts[part]
        if isinstance(target.client, redis.RedisCluster):
            return target.client.get_node_from_key(target.prefix).redis_connection
        return target.client

    def forget(self, batch: int = FORGET_BATCH) -> int:
        """Remove every key of this crawl; the number removed. The keys that
        make it a crawl go first, in one UNLINK: from then on no worker can
        join, and every fenced script of a worker still running is refused.
        The rest are found by SCAN (never KEYS, which blocks Redis for the
        whole key space) and unlinked in batches."""
        removed = 0
        for part in range(self.count):   # partition 0 first: its keys make the crawl
            node, prefix = self.node_of(part), self.parts[part].prefix
            first = [prefix + name for name in ("settings", "state", "epoch", "cfg")]
            removed += self.call(lambda: node.unlink(*first))
            for keys in self._scanned(part, batch):
                removed += self.call(lambda: node.unlink(*keys))
        return removed

    def leftover(self) -> int:
        """Keys under this crawl's prefixes (a worker still running may write
        one after ``forget``)."""
        return sum(len(keys) for part in range(self.count)
                   for keys in self._scanned(part, FORGET_BATCH))

    def _scanned(self, part: int, batch: int):
        """Partition ``part``'s keys, one SCAN step's worth at a time (a cursor
        stays valid while keys are removed, and across a reconnect)."""
        node, cursor = self.node_of(part), None
        match = _pattern(self.parts[part].prefix)
        while cursor != 0:
            cursor, keys = self.call(lambda: node.scan(cursor or 0, match=match, count=batch))
            if keys:
                yield keys


def _pattern(prefix: str) -> str:
    """SCAN's MATCH pattern for the keys under ``prefix``: the prefix with glob
    characters escaped (a crawl id may contain '*' or '[')."""
    escaped = "".join("\\" + c if c in "*?[]\\" else c for c in prefix)
    return escaped + "*"


def _address(client) -> str:
    """A server's URL as a line may show it: a password becomes PASSWORD."""
    if isinstance(client, redis.RedisCluster):
        node = client.get_default_node()
        kwargs = {**client.nodes_manager.connection_kwargs, "host": node.host, "port": node.port}
        ssl = bool(kwargs.get("ssl"))
    else:
        kwargs = client.connection_pool.connection_kwargs
        ssl = issubclass(client.connection_pool.connection_class, redis.SSLConnection)
    login = (f"{kwargs.get('username') or ''}:PASSWORD@" if kwargs.get("password")
             else "")
    if "path" in kwargs:
        return f"unix://{login}{kwargs['path']}?db={kwargs.get('db', 0)}"
    scheme = "rediss" if ssl else "redis"
    return f"{scheme}://{login}{kwargs.get('host')}:{kwargs.get('port')}/{kwargs.get('db', 0)}"


def shared_over(urls, crawl_id: str) -> SharedCrawl:
    """A crawl over the servers of ``urls``, partition p on server p; or,
    given one node of a Redis Cluster, over the cluster."""
    clients = [connect(url) for url in urls]
    clusters = [shown_url(url) for url, client in zip(urls, clients)
                if isinstance(client, redis.RedisCluster)]
    if clusters and len(clients) > 1:
        raise RedisStateError(f"--redis {clusters[0]} is a node of a Redis Cluster: give it "
                              f"alone (the cluster's other nodes are found from it)")
    parts = cluster_partitions(clients[0], crawl_id) if clusters else None
    return SharedCrawl(clients, crawl_id, parts)


def _server_ms(client: redis.Redis) -> int:
    seconds, micros = client.time()
    return seconds * 1000 + micros // 1000


class Member:
    """One worker process's seat in a shared crawl: its id and the epoch it
    joined with, sent with every call, so that once the worker has been
    taken for dead nothing it sends changes the crawl."""

    def __init__(self, shared: SharedCrawl, worker: str) -> None:
        self.shared = shared
        self.worker = worker
        self.epochs = [-1] * shared.count   # per partition; not joined: every call is refused
        self.last_reply = time.monotonic()   # when Redis last answered us
        self._lease_seconds: float | None = None

    def run(self, name: str, *args, part: int = 0):
        """A script of this worker's in partition ``part``: (worker, epoch, *args)."""
        return self._fenced_as(lambda: self.shared.run(name, self.worker, self.epochs[part], *args,
                                                       part=part))

    def gate(self, op: str, seq: int, host: str, ms: int, *more):
        part = self.shared.part_of(host)
        return self._fenced_as(lambda: self.shared.run("gate", op, self.worker, self.epochs[part],
                                                       seq, host, ms, *more, part=part))

    @property
    def lease_seconds(self) -> float:
        if self._lease_seconds is None:
            self._lease_seconds = self.shared.lease_ms() / 1000
        return self._lease_seconds

    def silent_for(self) -> float:
        """Seconds since Redis last answered this worker (a stopped process's
        clock runs on: CLOCK_MONOTONIC)."""
        return time.monotonic() - self.last_reply

    def _fenced_as(self, call):
        try:
            answer = call()
            self.last_reply = time.monotonic()
            return answer
        except redis.exceptions.ResponseError as exc:
            if not str(exc).startswith("FENCED"):
                raise
            raise WorkerFenced(
                f"worker {self.worker} was taken for dead (silent for longer than the lease, "
                f"{self.lease_seconds:g} s, or another process joined as "
                f"{self.worker}): the URLs it held went to other workers; its rows are kept, "
                f"run it again (same --out) to rejoin") from None


def _moved(before, after) -> bool:
    """Whether a pace's interval (to the ms, as Redis keeps it) or window changed."""
    return (round(before.interval * 1000) != round(after.interval * 1000)
            or before.window != after.window)


class RedisGate:
    """The politeness gate (getpage.PolitenessGate's interface) on Redis:
    every worker's requests to a host share one in-flight count and one
    next-allowed time. ``clock`` is this process's monotonic clock; Redis
    answers in durations, so no two machines' clocks are ever compared."""

    def __init__(self, shared: SharedCrawl, worker: str, cancelled: type[Exception],
                 policy=None) -> None:
        self._shared = shared
        self.policy = policy   # getpage.pacing's: what decides a host's interval
        self.member = Member(shared, worker)
        self._cancelled = threading.Event()
        self._error = cancelled      # what a cancelled wait raises (getpage's Cancelled)
        self._lock = threading.RLock()   # ops and resync: the held counts match Redis's
        self.held: Counter[str] = Counter()   # host -> slots this worker holds
        self._page_slots: Counter[str] = Counter()   # of those, slots taken with a leased URL
        # (host, when its request ended) of the page slots that go back with the next sync
        self.giving_back: list[tuple[str, float]] = []
        # Whether a page slot, its request ended, passes to the next URL of a
        # chain this worker leased under it (RedisFrontier's): then it stays taken.
        self.passes_locally = lambda host: False
        self._seq = 0   # numbers this worker's calls, made one at a time (the lock)
        self._per_host_cached: int | None = None
        # host -> (its pace as this worker last knew it, the record's version)
        self._paces: dict[str, tuple] = {}
        self._paced: defaultdict[str, Counter] = defaultdict(Counter)
        self._held_off: Counter[str] = Counter()

    def clock(self) -> float:
        return time.monotonic()

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def _op(self, op: str, host: str, seconds: float = 0.0, *more) -> int:
        with self._lock:
            answer = int(self.member.gate(op, self.next_seq(), host, round(seconds * 1000), *more))
            if op == "start" and answer == 0:
                self.held[host] += 1
            elif op == "release" and answer == 1:
                self.held[host] -= 1
            return answer

    def locked(self):
        return self._lock

    def leased(self, host: str) -> None:
        """A slot taken by the sync script, with a URL."""
        with self._lock:
            self.held[host] += 1
            self._page_slots[host] += 1

    def take_giving_back(self, part: int | None = None) -> list:
        """The page slots to give back in the sync call being made now (to
        partition ``part``: those of its hosts; None: all): per slot its
        host and the ms since its request ended (sync's arguments)."""
        with self._lock:
            if part is None:
                slots, self.giving_back = self.giving_back, []
            else:
                slots = [s for s in self.giving_back if self._shared.part_of(s[0]) == part]
                self.giving_back = [s for s in self.giving_back if self._shared.part_of(s[0]) != part]
            now = time.monotonic()
            return [value for host, ended in slots
                    for value in (host, max(0, round((now - ended) * 1000)))]

    def try_start(self, host: str, now: float | None = None) -> bool:
        return self.start_or_wait(host) == 0.0

    def start_or_wait(self, host: str) -> float:
        """Takes a request slot on host now (0.0), or says how many seconds
        until it may (POLL_SECONDS when the slot is held elsewhere, until
        given back, or the worker is stopping)."""
        if self._cancelled.is_set():
            return POLL_SECONDS
        wait = self._op("start", host) / 1000
        return POLL_SECONDS if wait > LEASE_SECONDS else wait   # longer: held elsewhere (INF)

    def speculated(self, host: str) -> None:
        """A slot the speculate script took, for a URL fetched before it is
        queued: it goes back with the next sync, as a leased page's."""
        with self._lock:
            self.held[host] += 1
            self._page_slots[host] += 1

    def acquire(self, host: str) -> None:
        while True:
            if self._cancelled.is_set():
                self._raise_cancelled()
            wait = self._op("start", host)
            if wait == 0:
                return
            self.wait(min(wait / 1000, 1.0))

    def ready_at(self, host: str) -> float:
        return self.clock() + self._op("ready", host) / 1000

    def started(self, host: str) -> float:
        """Nothing to hold: this gate hands no slot out before its time
        (getpage.PolitenessGate.started)."""
        # With one request in flight per host the interval counts from the
        # end of the request (give_slot), which is never earlier than its
        # send: telling Redis about the send would cost a round trip a page
        # and change nothing. With more, the send time spaces the starts.
        if self._per_host() > 1:
            self._op("started", host)
        elif self.member.silent_for() > self.member.lease_seconds / 2:
            # This process was away (stopped, swapped out) long enough to have
            # been taken for dead: a request on a slot reserved before that
            # could go out next to another worker's, so ask first (WorkerFenced).
            self._op("ready", host)
        return 0.0

    def paces(self) -> dict[str, dict]:
        """Per host, as this worker last knew its record, and the requests it
        saw answered under each governor (getpage.PolitenessGate.paces)."""
        with self._lock:
            return {host: {"interval": round(pace.interval, 4), "window": pace.window,
                           "latency": round(pace.latency, 4), "errors": pace.errors,
                           "crawl_delay": pace.robots, "paced": dict(self._paced[host]),
                           "held_off": self._held_off[host]}
                    for host, (pace, _) in self._paces.items()}

    def answered(self, host: str, seen=None, at: float | None = None) -> None:
        """The interval counts from the slot's release, later still (``at`` adds nothing), so only
        the policy may have something to tell Redis: the host's new interval
        and window, in one call and only when they change (most answers
        change neither: a steady host's stay put). The worker that saw the
        answer decides, from the record as it last knew it; if another worker
        changed the record since, it reads it and decides again."""
        if seen is None or self.policy is None:
            return
        with self._lock:
            pace, version = self._paces.get(host) or (self.policy.start(), 0)
            # full as this worker sees it (its own slots): other workers' are unknown here
            seen = dataclasses.replace(seen, full=self.held[host] >= pace.window)
            decided = self.policy.observe(pace, seen)
            governor = self.policy.governor(decided)
            self._paced[host][governor] += 1
            while _moved(pace, decided):
                version = self._op("pace", host, decided.interval, decided.window, version,
                                   json.dumps(dataclasses.asdict(decided)))
                if version >= 0:
                    break
                pace, version = self._stored_pace(host)
                decided = self.policy.observe(pace, seen)
            self._paces[host] = (decided, version)

    def _stored_pace(self, host: str):
        """The host's record as Redis holds it, and its version."""
        part = self._shared.parts[self._shared.part_of(host)]
        record, version = self._shared.call(
            lambda: part.client.hmget(part.prefix + "h:" + host, "pace", "pv"))
        pace = self.policy.start()
        if record:
            pace = dataclasses.replace(pace, **json.loads(record))
        return pace, int(version or 0)

    def _per_host(self) -> int:
        if self._per_host_cached is None:
            self._per_host_cached = int(self._shared.call(
                lambda: self._shared.client.hget(self._shared.prefix + "cfg", "per_host")) or 1)
        return self._per_host_cached

    def release(self, host: str) -> None:
        with self._lock:
            if self._page_slots[host] > 0:
                if self.passes_locally(host):
                    return
                # A leased page's slot goes back in the worker's next sync call
                # (the one acknowledging the page, as a rule): one call, not
                # two. Redis counts the interval from the request's end less
                # the call's transit, so from later than the end, never earlier.
                self._page_slots[host] -= 1
                self.held[host] -= 1
                self.giving_back.append((host, time.monotonic()))
                return
        self._op("release", host)

    def hold_off(self, host: str, seconds: float) -> None:
        self._op("hold_off", host, seconds)
        self._held_off[host] += 1

    def raise_interval(self, host: str, seconds: float) -> None:
        self._op("raise", host, seconds)
        if self.policy is not None:
            with self._lock:
                pace, version = self._paces.get(host) or (self.policy.start(), 0)
                self._paces[host] = (self.policy.crawl_delay(pace, seconds), version)

    def wait(self, seconds: float) -> None:
        self._cancelled.wait(seconds)
        if self._cancelled.is_set():
            self._raise_cancelled()

    def cancel(self) -> None:
        self._cancelled.set()

    def _raise_cancelled(self):
        raise self._error()


class RobotsStore:
    """robots.txt answers shared by every worker: fetched once per origin
    for the whole crawl (getpage.Fetcher's robots_store)."""

    def __init__(self, shared: SharedCrawl, worker: str) -> None:
        self._shared = shared
        self._call = shared.call
        self._worker = worker

    def _part(self, origin: str) -> Partition:
        return self._shared.parts[self._shared.part_of(origin)]

    def get(self, origin: str) -> dict | None:
        part = self._part(origin)
        raw = self._call(lambda: part.client.hget(part.prefix + "robots", origin))
        return None if raw is None else json.loads(raw)

    def claim(self, origin: str) -> bool:
        """True: this worker loads it (others wait while it lives)."""
        return bool(self._shared.run("claim", self._worker, origin,
                                     part=self._shared.part_of(origin)))

    def put(self, origin: str, record: dict) -> None:
        part = self._part(origin)
        self._call(lambda: part.client.hset(part.prefix + "robots", origin, json.dumps(record)))
        self._call(lambda: part.client.delete(part.prefix + "robots-claim:" + origin))


class WriteAhead:
    """A worker's committed rows before they are in its index.csv: each row
    is on disk here (fsync) before its page is acknowledged, so Redis keeps
    only the page's id and counts, not the row. A worker started again
    writes the rows Redis says were committed and drops the others (their
    URLs went back to the queue). Rows whose index.csv line is synced are
    dropped from the file once a tick."""

    def __init__(self, path: Path | None) -> None:
        self.path = path      # None: kept in memory only (tests of the Redis side)
        self._rows: dict[int, str] = {}   # id -> row JSON, not yet known written
        self._file = None
        self._unsynced = False   # rows written since the last fsync

    def read(self) -> dict[int, str]:
        """The rows a previous process left (a torn last line is not a row)."""
        if self.path is None or not self.path.exists():
            return {}
        rows = {}
        for line in self.path.read_text(encoding="utf-8").splitlines():
            item_id, sep, row = line.partition("\t")
            if sep and item_id.isdigit() and row.endswith("}"):
                rows[int(item_id)] = row
        return rows

    def add(self, item_id: int, row: str) -> None:
        """Written; durable after the next ``durable()``."""
        self._rows[item_id] = row
        if self.path is None:
            return
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(f"{item_id}\t{row}\n")
        self._unsynced = True

    def durable(self) -> None:
        """Every row added so far on disk for good: one fsync for all the
        pages a sync acknowledges (a group commit), not one a row."""
        if self._unsynced:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._unsynced = False

    def keep(self, rows: dict[int, str]) -> None:
        """Only these rows from now on (the file rewritten, then renamed over)."""
        self._rows = dict(rows)
        if self.path is None:
            return
        if self._file is not None:
            self._file.close()
            self._file = None
            self._unsynced = False   # the rewrite below syncs what is kept
        fresh = self.path.with_suffix(".new")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(fresh, "w", encoding="utf-8") as out:
            out.writelines(f"{item_id}\t{row}\n" for item_id, row in self._rows.items())
            out.flush()
            os.fsync(out.fileno())
        os.replace(fresh, self.path)

    def forget(self, ids) -> None:
        written = set(ids)
        self.keep({k: v for k, v in self._rows.items() if k not in written})

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class KnownSeen:
    """Fingerprints this worker knows are in Redis's seen-set, because an
    acknowledgement of its own put or found them there: a link among them
    is "seen" without asking. Only those: a redirect target's mark is not
    one (a reclaimed lease takes it back out). The most recent ``size``
    (0: none), as the single node's --seen-cache."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._recent: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, fp: str) -> bool:
        if fp not in self._recent:
            return False
        self._recent.move_to_end(fp)
        return True

    def update(self, fps) -> None:
        recent = self._recent
        for fp in fps:
            recent[fp] = None
        while len(recent) > self.size:
            recent.popitem(last=False)


class RedisFrontier:
    """URL_List's Frontier protocol over a SharedCrawl, for one worker.

    One ``sync`` script call a page, or one for a chain of pages of one host
    (the module's docstring): the request slots of the pages just
    fetched go back, the page's acknowledgement (children, content verdict,
    row: ``commit``, the Controller's shared-state path) and the lease of the
    next URLs for the threads it frees ride in the same call, so ``pop``
    usually finds them here already; ``push`` and ``done`` do nothing here.
    Bookkeeping that need not run per page (the worker's deadline, dead
    workers reclaimed, its speed, the rows Redis may forget) is a ``tick``
    once a second, from the heartbeat thread. A URL whose fetch goes on
    later (a retry, a redirect to another host) stays leased and waits here
    for its host.

    With several partitions the worker leases from them in turn (each
    tells it when to ask again, on a wake list of its own there, with a
    waker thread each: BLPOP cannot wait on two servers), ticks in each,
    and acknowledges a page in three steps: the content verdicts in their
    digests' partitions, the links offered in their hosts' partitions
    (``offer``), then the sync in the page's own partition, with its own
    links. The level closes over all partitions (SharedCrawl.advance).
    """

    def __init__(self, shared: SharedCrawl, gate: RedisGate, threads: int = 8,
                 sync_rows=lambda: None, seen_cache: int = KNOWN_SEEN, wake=lambda: None,
                 ahead_path: Path | None = None, max_ahead: int = 0, delay: float = 0.0) -> None:
        self.threads = threads
        self._hold_slots = min(HOLD_ACKS_SECONDS, GIVE_BACK_SHARE * delay,
                               max(0.0, delay - AHEAD_MS / 1000))
        self.max_ahead = max_ahead   # URLs of the level after the open one held at most
        self._ahead = WriteAhead(ahead_path)
        self._wake = wake          # makes the crawl loop look at pop() again, from another thread
        self.seen = KnownSeen(seen_cache)
        self._sync_rows = sync_rows   # makes the rows written so far durable (fsync)
        self._shared = shared
        self._parts = shared.count
        self._member = gate.member
        self._gate = gate
        self._summaries: list[Summary | None] = [None] * self._parts   # each partition's last reply
        self._summary: Summary | None = None   # of them all
        self._finished = False     # several partitions: SharedCrawl.advance found the crawl done
        self._advanced_at = 0.0
        self._flags: tuple[int, ...] = ()   # read again when the open level changes
        self._cap = threads        # URLs this worker may hold (its weight, from the tick)
        self._leased: list[tuple[float, QueuedUrl]] = []   # (may start at, item) leased by a sync
        # host -> URLs leased under the slot of the one fetched now, in order
        self._chains: dict[str, deque[QueuedUrl]] = {}
        self._in_chain: set[int] = set()   # ids leased in a chain, not acknowledged yet
        # acknowledgements held back while a chain runs: (item, md5, expand, links sent,
        # links known seen, then)
        self._held_acks: list[tuple] = []
        self._held_since = 0.0     # when the first of them was held
        # URLs waiting for their host, a heap: (local time, arrival, host, item)
        self._waiting: list[tuple[float, int, str, QueuedUrl]] = []
        self._arrivals = itertools.count()
        self._written: list[int] = []   # committed ids whose rows are written: forget them
        self._marked: dict[int, set[int]] = {}   # page id -> other partitions with its redirect marks
        self._pages = 0            # acknowledged since the last tick (its speed)
        self._asked_at = [0.0] * self._parts
        self._ask_again = [0.0] * self._parts   # a sync that leased less than asked: when to ask again
        self._turn = 0             # the partition asked first by the next pop
        self._held_ids: dict[int, int] = {}   # leased to us and not committed: id -> level
        self._held_ahead: dict[int, int] = {}   # of them, id -> level, leased ahead of the open one
        self._ahead_of = 0         # the open level when _held_ahead was last pruned
        self._told = False         # Redis said a level closed: sync even with nothing wanted
        self._lost_seen = shared.lost_replies
        self._init_speculation()
        # Another --order: each held URL's terms from Redis ("acc\tbest\taux"),
        # which its page's links are scored from (Order.shared_terms)
        self._terms: dict[int, tuple[float, ...]] = {}
        self._beat = threading.Event()
        self._heart = threading.Thread(target=self._heartbeat, daemon=True)
        self._wakers = [threading.Thread(target=self._wait_for_word, args=(part,), daemon=True)
                        for part in range(self._parts)]
        gate.passes_locally = self._pass_on

    # -- joining and leaving ------------------------------------------------
    def join(self) -> tuple[int, dict[int, tuple[int, int | None, str]]]:
        """(URLs this worker held before, given back now; its committed rows
        that may not be written: id -> (new links, duplicate_of, row JSON))."""
        self._shared.check_partitions()
        freed, rows = 0, []
        for part in range(self._parts):
            given, kept, epoch = self._shared.run("join", self._member.worker, part=part)
            self._member.epochs[part] = epoch
            freed += int(given)
            rows += kept
        ahead, found = self._ahead.read(), {}
        for key, value in zip(rows[::2], rows[1::2]):
            new, original = value.decode("utf-8").split("\t")
            if int(key) in ahead:
                found[int(key)] = (int(new), None if int(original) < 0 else int(original),
                                   ahead[int(key)])
        self._ahead.keep({k: row for k, (_, _, row) in found.items()})
        self.tick()
        self._heart.start()
        for waker in self._wakers:
            waker.start()
        return freed, found

    def leave(self) -> None:
        self._beat.set()
        if self._heart.is_alive():
            self._heart.join()   # its last renewal must not come after the leave
        self._sync_rows()   # Redis drops the rows it kept for us
        fenced = None
        for part in range(self._parts):
            try:
                self._member.run("leave", part=part)
            except WorkerFenced as exc:   # reclaimed there: the others still give back theirs now
                fenced = fenced or exc
        self._ahead.keep({})
        self._ahead.close()
        if fenced is not None:
            raise fenced

    def _heartbeat(self) -> None:
        while not self._beat.wait(TICK_SECONDS):
            try:
                self.tick()
            except (redis.exceptions.RedisError, RedisStateError):
                pass   # the loop's own calls report it (fenced: stop beating)

    def _wait_for_word(self, part: int) -> None:
        """While idle, a sync of another worker may tell this one when a host
        of partition ``part`` is ready: BLPOP on its own wake list there, on
        a connection of its own."""
        target = self._shared.parts[part]
        client = target.client if isinstance(target.client, redis.RedisCluster) else \
            redis.Redis(connection_pool=target.client.connection_pool)
        key = target.prefix + "wake:" + self._member.worker
        while not self._beat.is_set():
            try:
                word = client.blpop([key], timeout=IDLE_SECONDS)
            except redis.exceptions.RedisError:
                self._beat.wait(IDLE_SECONDS)   # Redis away: the loop's own calls wait for it
                continue
            if word is not None:
                with self._gate.locked():
                    ms = int(word[1])
                    if ms < 0:   # a level closed (pages fetched ahead may be acknowledged), or all
                        self._told = True   # did, or URLs it claimed were given to it: sync here
                        self._ask_again[part] = 0.0
                    else:        # when a host of this partition may start for us
                        self._ask_again[part] = min(self._ask_again[part],
                                                    time.monotonic() + ms / 1000)
                self._wake()

    def tick(self) -> None:
        """The once-a-second bookkeeping, in every partition: deadline,
        reclaim, speed (counted in partition 0), rows written, and, with
        several partitions, whether the open level is closed."""
        with self._gate.locked():
            written = self._confirmable()
            pages, self._pages = self._pages, 0
            marks = [[] for _ in range(self._parts)]
            for item_id in written:
                for part in self._marked.pop(item_id, ()):
                    marks[part].append(item_id)
            for part in range(self._parts):
                rows = [i for i in written if self._shared.part_of_id(i) == part]
                cap, summary = self._member.run("tick", self.threads, pages if part == 0 else 0,
                                                *rows, "--", *marks[part], part=part)
                if part == 0:
                    self._cap = int(cap)
                self._heard(summary, part)
            if self._parts > 1:
                self._shared.share_budget()
                self._advance()

    def _confirmable(self) -> list[int]:
        """Ids whose rows Redis may forget: written, and on disk for good
        (one fsync a tick, not one a row)."""
        if not self._written:
            return []
        self._sync_rows()
        written, self._written = self._written, []
        self._ahead.forget(written)
        return written

    def _heard(self, reply, part: int) -> None:
        summary = Summary.of(reply)
        self._summaries[part] = summary
        self._summary = summary if self._parts == 1 else \
            Summary.combined([s for s in self._summaries if s is not None], self._shared.max_pages)
        if self._summary.open_level > len(self._flags) - 1 and not self.ordered:
            target = self._shared.parts[max(
                range(self._parts), key=lambda p: getattr(self._summaries[p], "open_level", -2))]
            flags = self._shared.call(lambda: target.client.lrange(target.prefix + "flags", 0, -1))
            self._flags = tuple(int(m) for m in flags)
        self._asked_at[part] = time.monotonic()

    def _advance(self) -> None:
        """Several partitions: close the open level if every partition is done
        with it (SharedCrawl.advance); a level opened, ask every partition again."""
        self._advanced_at = time.monotonic()
        flags, finished = self._shared.advance()
        self._finished = self._finished or finished
        if self.ordered and not finished:   # URLs beyond --max-depth may have been queued
            self._ask_again = [0.0] * self._parts
        if len(flags) > len(self._flags):
            self._flags = flags
            self._shared.share_budget()   # the new level's URLs need their shares at once
            self._ask_again = [0.0] * self._parts

    # -- the one call a page ------------------------------------------------
    def _sync(self, n: int, acks: list, part: int = 0) -> list:
        """Slots given back, pages acknowledged (each an argument list), up to
        n URLs leased (kept for pop), in partition ``part``; the
        acknowledgements' replies."""
        with self._gate.locked():
            if self._shared.lost_replies != self._lost_seen:
                self._resync()
            # the pages acknowledged now are held no longer; those fetched
            # ahead hold up no level's end, so the cap (the weight) leaves them out
            ahead = self._ahead_held()
            n = max(0, min(n, self._cap - len(self._held_ids) + self._idle_held() + len(acks)))
            slots = self._gate.take_giving_back(part)
            self._told = False
            args = [self._gate.next_seq(), n, max(0, self.max_ahead - ahead), len(slots) // 2, *slots]
            for page in acks:
                args += page
            replies, entries, summary, waits, terms, given = self._member.run("sync", *args, part=part)
            for entry, held in zip(entries, terms):
                self._terms[int(entry.split(b"\t", 1)[0])] = \
                    tuple(float(t) for t in held.decode().split("\t"))
            self._heard(summary, part)
            self._take_given(given)
            heard = time.monotonic()   # a wait counts from the reply: never earlier than Redis's
            # A chain is leased only when no other host was ready: ask again when one may be.
            chained = any(int(wait) < 0 for wait in waits)
            self._ask_again[part] = 0.0 if len(entries) >= n and not chained \
                else self._next_chance(part)
            heads = {}
            for entry, wait in zip(entries, waits):
                item, host = parse_entry(entry)
                self._held_ids[item.id] = item.level
                if item.level > self.current_level:
                    self._held_ahead[item.id] = item.level
                if int(wait) < 0:   # behind the one before, under its slot
                    self._chains.setdefault(host, deque()).append(item)
                    self._in_chain.update((heads[host], item.id))
                    continue
                heads[host] = item.id
                self._gate.leased(host)
                self._leased.append((heard + int(wait) / 1000, item))
            # (another order has no level: its end is checked when the replies show it, _done)
            if acks and self._parts > 1 and not self.ordered and self._summaries[part].level_done_here:
                self._advance()   # maybe the last page of the level, here: done everywhere?
            return replies

    def _pass_on(self, host: str) -> bool:
        """From a fetch thread, its request to host ended: the next URL of
        host's chain may start now (the host has no interval), on the slot
        this worker still holds; False when the chain is done."""
        with self._gate.locked():
            chain = self._chains.get(host)
            if not chain:
                return False
            self._leased.append((0.0, chain.popleft()))
            if not chain:
                del self._chains[host]
        self._wake()
        return True

    def _idle_held(self) -> int:
        """Held URLs that occupy no fetch thread and hold up no level's end
        for long: those fetched ahead, and those waiting here for their
        host (a page after its robots.txt waits out the delay), at most
        max_ahead of them. The cap leaves them out, so a worker starting on
        many hosts does not lease one thread's worth a delay."""
        waiting = sum(1 for *_, item in self._waiting if item.id >= 0)
        return min(self._ahead_held() + waiting, max(self.max_ahead, self.threads))

    def _ahead_held(self) -> int:
        """URLs held of a level after the open one (fetched ahead, or parked)."""
        level = self.current_level
        if level != self._ahead_of:   # those of the level opened since are ahead no more
            self._held_ahead = {i: lv for i, lv in self._held_ahead.items() if lv > level}
            self._ahead_of = level
        return len(self._held_ahead)

    def _resync(self) -> None:
        """After a lost reply: give back what Redis holds for us that we never
        heard of, in every partition."""
        self._lost_seen = self._shared.lost_replies
        # Slots waiting to go back are still ours in Redis: they go back with
        # a sync, which counts the host's interval from their request's end.
        held = self._gate.held + Counter(host for host, _ in self._gate.giving_back)
        for part in range(self._parts):
            ids = sorted(i for i in self._held_ids if self._shared.part_of_id(i) == part)
            slots = [value for host, count in held.items()
                     if self._shared.part_of(host) == part for value in (host, count)]
            self._member.run("resync", *ids, "--", *slots, part=part)

    # -- the Frontier protocol ------------------------------------------------
    def pop(self, n: int, now: float) -> list[QueuedUrl]:
        """Up to n URLs to fetch now: those leased (or waiting here for their
        host), then speculative ones on hosts with nothing queued."""
        if self._given:
            self._settle_given()
        out = self._pop_leased(n, now)
        if len(out) < n and self._speculating:
            out += self._due_speculative(n - len(out), max(now, self._gate.clock()))
        return out

    def _pop_leased(self, n: int, now: float) -> list[QueuedUrl]:
        if self._held_acks and (not self._in_chain or now >= self._held_since + HOLD_ACKS_SECONDS):
            self.flush()   # the turn's pages; a chain's held ones too if its next is late
            now = max(now, self._gate.clock())   # what it leased to start now counts from its reply
        out = self._due(n, now)
        for part in self._turns():
            # URLs held already (a chain's still to come among them) are not asked
            # for again; those fetched ahead hold up no level's end: the cap leaves them out
            wanted = min(n - len(out) - len(self._leased),
                         self._cap - len(self._held_ids) + self._idle_held())
            if self._told or self._give_back_due(now, part) or (
                    wanted > 0 and now >= self._ask_again[part]):
                self._sync(wanted, [], part)
                now = max(now, self._gate.clock())   # what it leased to start now counts from its reply
        with self._gate.locked():   # a fetch thread's _pass_on adds to it
            self._leased.sort(key=lambda pair: pair[0])
            due = [item for when, item in self._leased[:n - len(out)] if when <= now]
            del self._leased[:len(due)]
        return out + due

    def _turns(self) -> list[int]:
        """The partitions in the order this pop asks them: each first in turn."""
        first, self._turn = self._turn, (self._turn + 1) % self._parts
        return [(first + k) % self._parts for k in range(self._parts)]

    def _give_back_due(self, now: float, part: int) -> bool:
        """Whether the slots given back to partition ``part`` may wait no longer
        for an acknowledgement to ride with (a host's wait is no reason to sync at once)."""
        ended = [when for host, when in self._gate.giving_back
                 if self._shared.part_of(host) == part]
        return bool(ended) and now >= ended[0] + self._hold_slots

    def _next_chance(self, part: int) -> float:
        """When a URL of partition ``part`` may be there for us after a sync
        found fewer than asked: when the next host a lease may take may
        start; or, while other workers hold the ready hosts or the level has
        not closed, when another worker's sync says so (_wait_for_word), at
        the latest IDLE_SECONDS."""
        later = self._asked_at[part] + IDLE_SECONDS
        wait = self._summaries[part].wait
        return later if wait is None else min(later, self._asked_at[part] + wait)

    def _due(self, n: int, now: float) -> list[QueuedUrl]:
        """Waiting URLs whose time has come and whose host gives a slot; the
        others asked again when Redis says their host may start (a page
        after its robots.txt waits out the delay: one call, not one a poll)."""
        out, later = [], []
        while self._waiting and self._waiting[0][0] <= now and len(out) < n:
            _, _, host, item = heapq.heappop(self._waiting)
            wait = self._gate.start_or_wait(host)
            if wait == 0.0:
                out.append(item)
            else:
                later.append((item, host, self._gate.clock() + wait))
        for item, host, when in later:
            self.requeue(item, host, when)
        return out

    def next_ready(self, now: float) -> float | None:
        ready = self._next_url(now)
        if self._given:
            ready = now
        if self._speculating:
            ready = self._speculating[0][0] if ready is None else min(ready, self._speculating[0][0])
        if not self._held_acks:
            return ready
        flush_at = self._held_since + HOLD_ACKS_SECONDS
        return flush_at if ready is None else min(ready, flush_at)

    def _next_url(self, now: float) -> float | None:
        if self._told:
            return now
        if self._gate.giving_back:
            due = self._gate.giving_back[0][1] + self._hold_slots
            url = self._next_leased(now)
            return due if url is None else min(due, url)
        return self._next_leased(now)

    def _next_leased(self, now: float) -> float | None:
        summary = self._summary
        if self._leased:
            return min(when for when, _ in self._leased)
        if summary is None or self._done():
            return self._waiting[0][0] if self._waiting else None
        ask = max(now, min(self._ask_again))
        return min(ask, self._waiting[0][0]) if self._waiting else ask

    def _done(self) -> bool:
        """The crawl is finished as far as this worker can tell: with several
        partitions, their replies' sums are of different moments, so a
        finish they show is checked over all partitions (at most every
        POLL_SECONDS while it is not one)."""
        if not self._summary.finished:
            return False
        if (self._parts == 1 and not (self.ordered and self._shared.keeps_links)) or self._finished:
            return True
        if time.monotonic() >= self._advanced_at + POLL_SECONDS:
            with self._gate.locked():
                self._advance()
        return self._finished

    def fetched(self, item: QueuedUrl) -> None:
        """Its slot goes back to Redis with the next sync call (the gate's release)."""

    def requeue(self, item: QueuedUrl, host: str, not_before: float | None = None) -> None:
        heapq.heappush(self._waiting, (not_before or 0.0, next(self._arrivals), host, item))

    def done(self, item: QueuedUrl) -> None:
        """Committed already, by commit()."""

    def exhausted(self) -> bool:
        """Every URL acknowledged (speculative ones waiting count for nothing)."""
        return (self._summary is not None and not self._waiting and not self._leased
                and not self._held_acks and not self._given and self._done())

    def push(self, items, taken=frozenset()) -> None:
        raise TypeError("a shared crawl queues URLs only through commit()")

    def restore(self, items, done_ids) -> None:
        raise TypeError("a shared crawl's state is in Redis: nothing to restore")

    @property
    def next_id(self) -> int:
        return self._summary.next_id if self._summary else 0

    def __len__(self) -> int:
        return self.next_id

    @property
    def level_flags(self) -> tuple[int, ...]:
        return () if self.ordered else self._flags

    @property
    def current_level(self) -> int:
        if self.ordered:
            return 1 << 30   # no barrier: no page is held back for its level
        return max(len(self._flags) - 1, 0)

    @property
    def finished_levels(self) -> int:
        if not self._summary or self.ordered:
            return 0
        return sum(1 for m in self._flags if m <= self._summary.processed)

    @property
    def limit_reached(self) -> bool:
        if self._parts > 1 and self._finished:   # found by advance, after the replies last heard
            return self._shared.budget_spent()
        return bool(self._summary and self._summary.limit_reached)

    # -- speculation (controller/speculation.py) -----------------------------
    def _init_speculation(self) -> None:
        # what the crawl's speculation holds of the URLs given to this worker
        # (ids it takes over), and the speculated URLs Redis refused
        self.adopt = lambda items: frozenset()
        self.refused = lambda urls: None
        self._spec_ids = itertools.count(1)
        self._withdrawn: set[int] = set()   # speculative ids not to fetch after all
        # waiting to be claimed: (local time, arrival, item, (host, path, pattern, bound))
        self._speculating: list[tuple[float, int, QueuedUrl, tuple]] = []
        self._given: list[tuple[QueuedUrl, str]] = []   # claimed URLs an offer queued: ours
        self._host_busy: dict[str, float] = {}   # host -> when Redis said to ask again (local time)

    def speculate(self, url: str, host: str, path: str, pattern: str, bound: int) -> QueuedUrl:
        """Fetch url, not queued yet, once its host has nothing queued and
        may start: then claimed in Redis with its host's slot (``pop``), so
        no other worker fetches it and the offer that queues it leases it
        to this worker. ``bound``: the deepest level it may have (the trap
        limits are asked at it). A negative id, level SPECULATIVE."""
        item = QueuedUrl(-next(self._spec_ids), url, SPECULATIVE, None)
        heapq.heappush(self._speculating, (0.0, next(self._arrivals), item, (host, path, pattern, bound)))
        return item

    def known_seen(self, url: str) -> bool:
        """Whether Redis judged url in this worker's sight (queued or seen already)."""
        return fingerprint(url) in self.seen

    def unspeculate(self, item: QueuedUrl) -> None:
        """Not claimed yet (a claimed one is fetched at once): not to be."""
        self._withdrawn.add(item.id)

    def _settle_given(self) -> None:
        """URLs given to this worker (it claimed them): taken over by the
        crawl's speculation, or fetched as any other (its speculation
        dropped them)."""
        given, self._given = self._given, []
        taken = self.adopt([item for item, _ in given])
        for item, host in given:
            if item.id not in taken:
                self.requeue(item, host)

    def _due_speculative(self, n: int, now: float) -> list[QueuedUrl]:
        """Up to n speculative URLs claimed now with their hosts' slots, one
        call a partition; the others asked again when Redis says."""
        due: dict[int, list] = {}
        asked, later = 0, []
        while self._speculating and self._speculating[0][0] <= now and asked < n:
            entry = heapq.heappop(self._speculating)
            if entry[2].id in self._withdrawn:
                self._withdrawn.discard(entry[2].id)
                continue
            busy = self._host_busy.get(entry[3][0], 0.0)
            if busy > now:   # its host's answer holds for every URL of it: not asked
                later.append((busy, *entry[1:]))
                continue
            due.setdefault(self._shared.part_of(entry[3][0]), []).append(entry)
            asked += 1
        for entry in later:
            heapq.heappush(self._speculating, entry)
        out, refused = [], []
        for part, entries in due.items():
            args = [value for _, _, item, (host, path, pattern, bound) in entries
                    for value in (fingerprint(item.url), host, path, pattern, bound)]
            answers = self._member.run("speculate", *args, part=part)
            now = self._gate.clock()
            for (_, _, item, claim), answer in zip(entries, answers):
                if int(answer) == 0:
                    self._gate.speculated(claim[0])
                    out.append(item)
                elif int(answer) < 0:
                    refused.append(item.url)
                else:
                    self._host_busy[claim[0]] = now + int(answer) / 1000
                    heapq.heappush(self._speculating,
                                   (now + int(answer) / 1000, next(self._arrivals), item, claim))
        if refused:
            self.refused(refused)
        return out

    def _take_given(self, given) -> None:
        """URLs this worker claimed, queued by an offer and leased to it (of
        the level after the open one: acknowledged once it closes)."""
        for entry in given:
            item, host = parse_entry(entry)
            self._held_ids[item.id] = item.level
            if item.level > self.current_level:
                self._held_ahead[item.id] = item.level
            self._given.append((item, host))

    # -- the shared-state path ---------------------------------------------
    def commit(self, item: QueuedUrl, content_md5: str, links: list[tuple[str, str, str, str]],
               expand: bool, row: dict, then=None) -> Commit | None:
        """Acknowledge item: its content verdict, its links ((url, host,
        path if it has a query, pattern or '')) queued if new, its row kept
        until written; the URLs for the fetch threads this frees leased in
        the same call. Without ``then``: at once, and its Commit returned.
        With it: held back until the crawl loop's next ``pop`` (so pages that
        finish in the same turn of the loop go together), and while a page
        of a chain this worker leased is still to come (at most
        HOLD_ACKS_SECONDS after the first held); then(Commit) is called on
        the loop's thread when Redis has answered (in pop, or in flush)."""
        sent, known = [], 0
        for url, host, path, pattern, *terms in links:
            fp = fingerprint(url)
            if fp in self.seen and not self.ordered:   # a known link may still raise a score
                known += 1
            else:
                sent += [fp, host, path, pattern, "\t".join((url, *map(repr, terms)))]
        with self._gate.locked():   # the tick rewrites the write-ahead under the same lock
            self._ahead.add(item.id, json.dumps(row))
            self._in_chain.discard(item.id)
            self._held_acks.append((item, content_md5 or "", int(expand), sent, known, then))
            if then is not None:   # acknowledged by the next pop, with the others held by then
                self._held_since = self._held_since or time.monotonic()
                return None
            answered = self._acknowledge()
        self._tell(answered)
        return answered[-1][1] if then is None else None

    def flush(self) -> None:
        """Acknowledge the pages held back, now (the crawl is ending)."""
        with self._gate.locked():
            answered = self._acknowledge() if self._held_acks else []
        self._tell(answered)

    def _acknowledge(self) -> list:
        """One sync for every held page (with several partitions, one in
        each of their partitions, after the verdicts and offers):
        [(then, Commit)] in their order."""
        held, self._held_acks, self._held_since = self._held_acks, [], 0.0
        self._ahead.durable()   # a row on disk before Redis hears its page is done
        if self._parts == 1:
            acks = [[item.id, md5, "", "", expand, len(sent) // 5, *sent]
                    for item, md5, expand, sent, *_ in held]
            answers = self._sync(self._wanted(len(held)), acks)
            replies = dict(zip((page[0].id for page in held), answers))
        else:
            replies = self._acknowledge_partitioned(held)
        answered = []
        for item, _, _, sent, known, then in held:
            self._held_ids.pop(item.id, None)
            self._terms.pop(item.id, None)
            self._held_ahead.pop(item.id, None)
            answered.append((then, self._judged(item, sent, known, replies[item.id])))
        return answered

    def _wanted(self, acknowledged: int) -> int:
        """URLs to lease with a sync acknowledging this many pages: the
        threads they free, and those no held page occupies (a page held
        ahead of its level is fetched: it holds no thread)."""
        return self.threads - len(self._held_ids) + self._idle_held() + acknowledged

    def _acknowledge_partitioned(self, held: list) -> dict[int, list]:
        """The held pages acknowledged over several partitions, in the order
        that keeps a level exact: each text's verdict from its digest's
        partition (a duplicate's links are not queued), then the links
        offered to their hosts' partitions, then each page's sync in its own
        partition with the links of that one. The verdict of a page whose
        digest and links are all in its own partition is asked in its sync;
        of one whose links elsewhere are all in its digest's partition, in
        the offer there (as with one partition: no call of its own). id ->
        the page's reply."""
        own, foreign = {}, {}
        for item, _, _, sent, _, _ in held:
            by_part: dict[int, list] = {}
            for i in range(0, len(sent), 5):
                by_part.setdefault(self._shared.part_of(sent[i + 1]), []).extend(sent[i:i + 5])
            own[item.id] = by_part.pop(self._shared.part_of_id(item.id), [])
            foreign[item.id] = by_part
        where = {item.id: self._verdict_in(item.id, md5, foreign[item.id])
                 for item, md5, *_ in held}
        verdicts = self._verdicts([page for page in held if where[page[0].id] == "content"])
        offered = self._offer([page for page in held if verdicts.get(page[0].id, -1) < 0], foreign,
                              where)
        for item_id, answers in offered.items():
            for answer in answers:
                if where[item_id] == "offer" and len(answer) > 1:
                    verdicts[item_id] = int(answer[3])
        replies, homes = {}, {}
        for page in held:
            homes.setdefault(self._shared.part_of_id(page[0].id), []).append(page)
        for part, pages in homes.items():
            acks = [[item.id, md5 if where[item.id] == "sync" else "", verdicts.get(item.id, ""),
                     _queued(offered.get(item.id, ())), expand, len(own[item.id]) // 5,
                     *own[item.id]] for item, md5, expand, *_ in pages]
            answers = self._sync(self._wanted(len(pages)), acks, part)
            for (item, *_), reply in zip(pages, answers):
                self._held_ids.pop(item.id, None)
                replies[item.id] = _with_offers(reply, offered.get(item.id, ()))
        return replies

    def _verdict_in(self, item_id: int, md5: str, foreign: dict) -> str:
        """Which call asks a page's content verdict: its "sync" (its digest and
        links all in its own partition), the "offer" of its links elsewhere
        (all in its digest's partition), or a "content" call before both."""
        digest = self._shared.part_of(md5) if md5 else None
        if not md5 or (not foreign and digest == self._shared.part_of_id(item_id)):
            return "sync"
        return "offer" if set(foreign) == {digest} else "content"

    def _offer(self, pages: list, foreign: dict, where: dict) -> dict[int, list]:
        """The pages' links of other partitions than their own offered there,
        one call a partition (a verdict asked there first): id -> the replies."""
        offers: dict[int, list] = {}
        for item, md5, expand, *_ in pages:
            for part, links in foreign[item.id].items():
                asked = md5 if where[item.id] == "offer" else ""
                offers.setdefault(part, []).append(
                    (item.id, [item.id, item.level, expand, asked, len(links) // 5, *links]))
        offered: dict[int, list] = {}
        for part, batch in offers.items():
            args = [value for _, page in batch for value in page]
            for (item_id, _), reply in zip(batch, self._member.run("offer", *args, part=part)):
                offered.setdefault(item_id, []).append(reply)
        return offered

    def _verdicts(self, held: list) -> dict[int, int]:
        """id -> the first page with its text (-1: it is the first), asked in
        each digest's partition, one call for the pages of each."""
        asks: dict[int, list] = {}
        for item, md5, *_ in held:
            asks.setdefault(self._shared.part_of(md5), []).extend((md5, item.id))
        verdicts = {}
        for part, args in asks.items():
            for item_id, first in zip(args[1::2], self._member.run("content", *args, part=part)):
                verdicts[int(item_id)] = int(first)
        return verdicts

    @staticmethod
    def _tell(answered) -> None:
        for then, commit in answered:
            if then is not None:
                then(commit)

    def _judged(self, item: QueuedUrl, sent: list, known: int, reply) -> Commit:
        """Redis's answer to one page's acknowledgement."""
        if int(reply[0]) == -1 and len(reply) == 1:
            return Commit(False)
        self._pages += 1
        original, new, counts, new_count, cut = reply
        items = tuple(QueuedUrl(int(i), url.decode("utf-8"), item.level + 1, item.id)
                      for i, url in zip(new[::2], new[1::2]))
        seen, host_full, query_full, beyond, too_deep = (int(c) for c in counts)
        if int(original) < 0 and seen + host_full + query_full + beyond + too_deep + len(items) \
                == len(sent) // 5:
            # Redis judged each link (not a duplicate's, not a retry's): all are in its seen-set now
            self.seen.update(sent[::5])
            seen += known
        return Commit(True, None if int(original) < 0 else int(original), items, int(new_count),
                      {"seen": seen, "host-pages": host_full, "query-variants": query_full,
                       "depth": beyond, "pattern-depth": too_deep},
                      tuple(pattern.decode("utf-8") for pattern in cut))

    def mark_seen(self, item_id: int, url: str, host: str, path: str, pattern: str) -> int:
        """A redirect target of leased page item_id marked seen, in the target's partition."""
        part = self._shared.part_of(host)
        level = self._held_ids.get(item_id)
        if level is None and part != self._shared.part_of_id(item_id):
            return -1   # not ours (its own partition would say so)
        if part != self._shared.part_of_id(item_id):
            self._marked.setdefault(item_id, set()).add(part)
        return int(self._member.run("mark", item_id, level or 0, fingerprint(url), host, path,
                                    pattern, part=part))

    @property
    def ordered(self) -> bool:
        return self._shared.ordered

    def terms_of(self, item_id: int) -> tuple[float, ...]:
        """Another order: a held URL's terms as Redis had them when it was
        leased (acc, best, aux: Order.shared_terms)."""
        return self._terms.get(item_id, (0.0, 0.0, 0.0))

    def written(self, item_id: int) -> None:
        """The row of item_id is in this worker's index.csv: Redis may forget it."""
        self._written.append(item_id)


def draw_start(seed: int, part: int) -> int:
    """The first state of partition part's exploring draws (the _PRELUDE's
    odraw, MINSTD: 1 .. 2^31 - 2), each partition's its own."""
    return (seed * 7919 + part) % 2147483646 + 1


def _queued(offered) -> int:
    """New links the partitions a page's links were offered to queued."""
    return sum(len(answer[0]) // 2 for answer in offered if len(answer) > 1)


def _with_offers(reply, offered) -> list:
    """A page's reply from its own partition with what the partitions its
    links were offered to queued (a partition that refused: a late worker's)."""
    if not offered or (int(reply[0]) == -1 and len(reply) == 1):
        return reply
    original, new, counts, new_count, cut = reply
    new, counts, cut = list(new), [int(c) for c in counts], list(cut)
    for answer in offered:
        if len(answer) == 1:
            continue
        more, more_counts, more_cut, _ = answer
        new += more
        counts = [a + int(b) for a, b in zip(counts, more_counts)]
        cut += more_cut
    return [original, new, counts, int(new_count) + (len(new) - len(reply[1])) // 2, cut]
