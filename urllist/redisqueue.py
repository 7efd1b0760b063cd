"""URL_List in Redis: one crawl shared by many worker processes.

Every piece of shared crawl state lives in Redis under one hash tag per
crawl (``crawl:{ID}:``, so a Redis Cluster keeps it on one slot) and
changes only inside Lua scripts, which Redis runs one at a time: there is
no read-modify-write race between workers, and every time is Redis's own
``TIME``, never a worker's clock.

Keys (``p`` = the prefix):
  p cfg          settings the scripts need (delay, per_host, max_pages, trap limits)
  p settings     the crawl's settings as JSON (what `crawler worker` runs with)
  p state        next_id (the total queue's length), processed, leased
  p flags        the design paper's level flags (list of queue totals m)
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
  p gateop:W     W's last politeness call (seq, answer): a retry is told the same
  p rows:W       id -> the index row W committed and has not confirmed written
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

Exact levels: URLs are leased only from the open level's queues; the open
level closes when every URL of it is acknowledged (requeues and reclaimed
leases included), by the same rule as urllist.hosts.HostFrontier's flags.
A URL leased by a worker whose deadline passes goes back to the head of its
host's queue, its redirect marks leave the seen-set and the trap counts, and
the worker is fenced: anything it sends later (an acknowledgement, a
request slot given back, a lease renewal) is refused, because what it held
is another worker's now (a worker that was only slow, not dead, learns so
and stops: WorkerFenced).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from urllist.queued import QueuedUrl

INF_MS = 10 ** 15          # "not until a slot is given back"
LEASE_SECONDS = 60.0       # a worker silent this long has died: its URLs go to others
POLL_SECONDS = 0.05        # how soon to ask again while other workers hold the open level
RECONNECT_SECONDS = 120.0  # how long a worker waits for Redis to come back
CONFIRM_SECONDS = 1.0      # rows confirmed written (one fsync) at most this often
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
_SLOT_FUNCTION = r"""-- --partition host: a host's slot is a hash of its key modulo SLOTS (SHA-1,
-- Redis's own; any uniform hash does what the design notes' MD5 does).
local function ready_key(level, h)
  if SLOTS == 0 then return p .. 'ready:' .. level end
  return p .. 'ready:' .. level .. ':' .. (tonumber(string.sub(redis.sha1hex(h), 1, 8), 16) % SLOTS)
end
"""

# Shared helpers, prefixed to every script. KEYS[1] is the crawl's prefix.
_PRELUDE = r"""
local p = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cfg = redis.call('HMGET', p .. 'cfg', 'delay', 'per_host', 'max_pages', 'lease', 'host_cap',
                      'query_cap', 'slots', 'pattern_cap')
local DELAY, PER_HOST, MAX_PAGES = tonumber(cfg[1]), tonumber(cfg[2]), tonumber(cfg[3])
local LEASE, HOST_CAP, QUERY_CAP = tonumber(cfg[4]), tonumber(cfg[5]), tonumber(cfg[6])
local SLOTS = tonumber(cfg[7]) or 0   -- 0: one shared queue; n: hosts partitioned into n slots
local PATTERN_CAP = tonumber(cfg[8]) or 0   -- levels below a pattern's first; 0 = no limit
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

local function open_level()
  return redis.call('LLEN', p .. 'flags') - 1
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
local function pattern_too_deep(pattern, level)
  if pattern == '' or PATTERN_CAP == 0 then return false end
  local first = tonumber(redis.call('HGET', p .. 'trap:pattern', pattern) or level)
  return level - first > PATTERN_CAP
end

local function count_pattern(pattern, level)
  if pattern ~= '' and PATTERN_CAP > 0 then redis.call('HSETNX', p .. 'trap:pattern', pattern, level) end
end
SLOT_FUNCTION
-- The ready sets worker w leases from: the one shared set, or those of the
-- slots it owns (--partition host).
local function my_ready(w, level)
  if SLOTS == 0 then return {p .. 'ready:' .. level} end
  local keys = {}
  for _, slot in ipairs(redis.call('SMEMBERS', p .. 'owns:' .. w)) do
    keys[#keys + 1] = p .. 'ready:' .. level .. ':' .. slot
  end
  return keys
end

-- Each live worker owns its share of the slots: it gives back what is over
-- its share and takes unowned slots (a dead worker's) up to it.
local function rebalance(w)
  if SLOTS == 0 then return end
  local share = math.ceil(SLOTS / math.max(redis.call('ZCARD', p .. 'workers'), 1))
  local mine = redis.call('SMEMBERS', p .. 'owns:' .. w)
  for i = share + 1, #mine do
    redis.call('HDEL', p .. 'owner', mine[i])
    redis.call('SREM', p .. 'owns:' .. w, mine[i])
  end
  local have = math.min(#mine, share)
  for slot = 0, SLOTS - 1 do
    if have >= share then return end
    if redis.call('HSETNX', p .. 'owner', slot, w) == 1 then
      redis.call('SADD', p .. 'owns:' .. w, slot)
      have = have + 1
    end
  end
end

local function ready_at(h)
  local v = redis.call('HMGET', p .. 'h:' .. h, 'fl', 'last', 'iv', 'nb')
  if (tonumber(v[1]) or 0) >= PER_HOST then return INF end
  local r = tonumber(v[4]) or 0
  if v[2] then r = math.max(r, tonumber(v[2]) + (tonumber(v[3]) or DELAY)) end
  return r
end

-- The open level's hint for h, after something made h ready sooner or later.
local function hint(h)
  local level = open_level()
  if level >= 0 and redis.call('EXISTS', p .. 'q:' .. level .. ':' .. h) == 1 then
    redis.call('ZADD', ready_key(level, h), ready_at(h), h)
  end
end

local function take_slot(w, h)
  redis.call('HINCRBY', p .. 'h:' .. h, 'fl', 1)
  redis.call('HSET', p .. 'h:' .. h, 'last', now)
  redis.call('HINCRBY', p .. 'slots:' .. w, h, 1)
end

-- The interval counts from when the request ENDED (its slot given back),
-- not only from when it was started: a worker's thread can be held up
-- between telling Redis it starts and its request leaving the machine,
-- which no other worker can see; the end is never before the server
-- answered, so the server sees requests at least the interval apart.
local function give_slot(w, h)
  if tonumber(redis.call('HGET', p .. 'slots:' .. w, h) or '0') <= 0 then return 0 end
  redis.call('HINCRBY', p .. 'slots:' .. w, h, -1)
  redis.call('HINCRBY', p .. 'h:' .. h, 'fl', -1)
  if tonumber(redis.call('HGET', p .. 'h:' .. h, 'last') or '0') < now then
    redis.call('HSET', p .. 'h:' .. h, 'last', now)
  end
  hint(h)
  return 1
end

local function requeue(entry)
  local f = split(entry)
  local level, h = f[2], f[4]
  redis.call('LPUSH', p .. 'q:' .. level .. ':' .. h, entry)
  redis.call('ZADD', ready_key(level, h), 0, h)
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
  redis.call('DEL', p .. 'lease:' .. w)
  for _, slot in ipairs(redis.call('SMEMBERS', p .. 'owns:' .. w)) do
    redis.call('HDEL', p .. 'owner', slot)
  end
  redis.call('DEL', p .. 'owns:' .. w)
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

-- Workers renew their deadlines every LEASE / 4. A gap far longer than that
-- since the last script ran means Redis itself was away (restarting,
-- replaying its AOF): the silence was Redis's, not the workers', so every
-- deadline moves on by the gap before any worker is judged dead.
local function excuse_outage()
  local last = tonumber(redis.call('GET', p .. 'alive') or tostring(now))
  local gap = now - last
  if gap > LEASE / 2 then
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

-- The design paper's flags: the next one once the open level is processed.
local function close_levels()
  while true do
    local m = tonumber(redis.call('LINDEX', p .. 'flags', -1))
    local total = state_num('next_id')
    if state_num('processed') ~= m or total <= m then return end
    redis.call('RPUSH', p .. 'flags', total)
  end
end

local function limit_reached()
  return MAX_PAGES > 0 and state_num('leased') + state_num('processed') >= MAX_PAGES
end

-- The seed paper's node weight: pages per second over the last WINDOW ms,
-- from buckets of BUCKET ms (old ones dropped as new ones fill).
local BUCKET, WINDOW = 10000, WINDOW_MS
local function count_page(w)
  local key = p .. 'rate:' .. w
  local bucket = math.floor(now / BUCKET)
  redis.call('HINCRBY', key, bucket, 1)
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

local function summary(w)
  local wait = -1
  for _, key in ipairs(my_ready(w, math.max(open_level(), 0))) do
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if #first > 0 then
      local this = math.max(0, tonumber(first[2]) - now)
      if wait < 0 or this < wait then wait = this end
    end
  end
  return {state_num('next_id'), state_num('processed'), state_num('leased'),
          limit_reached() and 1 or 0, wait, redis.call('LRANGE', p .. 'flags', 0, -1)}
end
""".replace("WINDOW_MS", str(WINDOW_MS)).replace("SLOT_FUNCTION", _SLOT_FUNCTION)

# ARGV: worker, epoch, n, its fetch threads, then ids whose rows the worker
# has written (forget them). A worker holds at most what it finishes in
# HOLD_MS at its own recent speed (its weight), and never less than its
# threads until it has a speed: a slow or failing node holds few URLs, so
# few wait on it at a level's end and few are fetched again if it dies.
_LEASE = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local n, threads = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', p .. 'workers', now + LEASE, w)
for i = 5, #ARGV do redis.call('HDEL', p .. 'rows:' .. w, ARGV[i]) end
reclaim_expired()
rebalance(w)
local speed = weight(w)
local cap = threads
if speed then cap = math.max(2, math.ceil(speed * HOLD_MS / 1000)) end
n = math.min(n, cap - redis.call('HLEN', p .. 'lease:' .. w))
local out = {}
local level = open_level()
local sets = my_ready(w, level)
local tries, k = 0, 1
while n > 0 and #sets > 0 and not limit_reached() and tries < 4 * n + 16 + #sets do
  tries = tries + 1
  local ready = sets[k]
  local hosts = redis.call('ZRANGEBYSCORE', ready, '-inf', now, 'LIMIT', 0, 1)
  local h = hosts[1]
  if not h then
    table.remove(sets, k)   -- nothing ready in this slot now
    if k > #sets then k = 1 end
  else
    k = k % #sets + 1       -- round robin over the slots
    local at = ready_at(h)
    if at > now then
      redis.call('ZADD', ready, at, h)
    else
      local q = p .. 'q:' .. level .. ':' .. h
      local entry = redis.call('LPOP', q)
      if entry then
        take_slot(w, h)
        redis.call('HSET', p .. 'lease:' .. w, string.match(entry, '^(%d+)'), entry)
        redis.call('HINCRBY', p .. 'state', 'leased', 1)
        out[#out + 1] = entry
        n = n - 1
      end
      if redis.call('LLEN', q) == 0 then redis.call('ZREM', ready, h)
      else redis.call('ZADD', ready, ready_at(h), h) end
    end
  end
end
return {out, summary(w)}
"""

# ARGV: worker, epoch, id, content md5 ('' = none), expand (1/0), row, then
# (fingerprint, host, path-if-query, pattern-or-'', url) per link.
_ACK = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local id, md5, expand, row = ARGV[3], ARGV[4], ARGV[5] == '1', ARGV[6]
local entry = redis.call('HGET', p .. 'lease:' .. w, id)
if not entry then
  local done = redis.call('HGET', p .. 'rows:' .. w, id)
  if not done then return {-1} end
  -- Committed already: this is a retry whose first reply was lost.
  local f = split(done)
  return {tonumber(f[2]), {}, {0, 0, 0, 0, 0}, summary(w), tonumber(f[1]), {}}
end
local level = tonumber(split(entry)[2])
redis.call('HDEL', p .. 'lease:' .. w, id)
redis.call('DEL', p .. 'lseen:' .. id)
redis.call('ZADD', p .. 'workers', now + LEASE, w)
local original = -1
if md5 ~= '' then
  local first = redis.call('HGET', p .. 'content', md5)
  if first then original = tonumber(first) else redis.call('HSET', p .. 'content', md5, id) end
end
local new, seen, host_full, query_full, beyond, cut = {}, 0, 0, 0, 0, {}
if original < 0 then
  for i = 7, #ARGV, 5 do
    local fp, h, path, pattern, url = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    if seen_add(fp) == 0 then
      seen = seen + 1
    elseif not expand then
      beyond = beyond + 1
    elseif HOST_CAP > 0 and tonumber(redis.call('HGET', p .. 'trap:host', h) or '0') >= HOST_CAP then
      host_full = host_full + 1
    elseif pattern_too_deep(pattern, level + 1) then
      cut[#cut + 1] = pattern
    elseif path ~= '' and QUERY_CAP > 0
        and tonumber(redis.call('HGET', p .. 'trap:path', path) or '0') >= QUERY_CAP then
      query_full = query_full + 1
    else
      count_trap(h, path, 1)
      count_pattern(pattern, level + 1)
      local nid = redis.call('HINCRBY', p .. 'state', 'next_id', 1) - 1
      local q = p .. 'q:' .. (level + 1) .. ':' .. h
      redis.call('RPUSH', q, nid .. '\t' .. (level + 1) .. '\t' .. id .. '\t' .. h .. '\t' .. url)
      redis.call('ZADD', ready_key(level + 1, h), 'NX', 0, h)
      new[#new + 1] = nid
      new[#new + 1] = url
    end
  end
end
redis.call('HSET', p .. 'rows:' .. w, id, (#new / 2) .. '\t' .. original .. '\t' .. row)
redis.call('HINCRBY', p .. 'state', 'leased', -1)
redis.call('HINCRBY', p .. 'state', 'processed', 1)
count_page(w)
close_levels()
return {original, new, {seen, host_full, query_full, beyond, #cut}, summary(w), #new / 2, cut}
"""

# ARGV: worker, epoch, id, fingerprint, host, path-if-query, pattern-or-''. 1: new (marked,
# and owned by the lease), 0: seen before, 2: a trap limit is full, -1: no
# lease. A retry (its first reply lost) gets the first answer.
_MARK = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local id, fp, h, path, pattern = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local entry = redis.call('HGET', p .. 'lease:' .. w, id)
if not entry then return -1 end
local level = tonumber(split(entry)[2])   -- a redirect target takes its source's level
local marks = p .. 'lseen:' .. id
local before = redis.call('HGET', marks, fp)
if before then return tonumber(split(before)[1]) end
if seen_add(fp) == 0 then return 0 end
local answer = 1
if HOST_CAP > 0 and tonumber(redis.call('HGET', p .. 'trap:host', h) or '0') >= HOST_CAP then
  answer = 2
elseif pattern_too_deep(pattern, level) then
  answer = 2
elseif path ~= '' and QUERY_CAP > 0
    and tonumber(redis.call('HGET', p .. 'trap:path', path) or '0') >= QUERY_CAP then
  answer = 2
else
  count_trap(h, path, 1)
  count_pattern(pattern, level)
end
redis.call('HSET', marks, fp, answer .. '\t' .. h .. '\t' .. path)
return answer
"""

# ARGV: op, worker, epoch, seq, host, milliseconds. The politeness gate's
# operations; seq numbers a worker's calls (one at a time), so a retry after
# a lost reply is told the first answer instead of taking or giving a slot twice.
_GATE = _PRELUDE + r"""
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
  return give_slot(w, h)
elseif op == 'hold_off' then
  if tonumber(redis.call('HGET', key, 'nb') or '0') < now + ms then redis.call('HSET', key, 'nb', now + ms) end
  hint(h)
elseif op == 'raise' then
  if tonumber(redis.call('HGET', key, 'iv') or tostring(DELAY)) < ms then redis.call('HSET', key, 'iv', ms) end
  hint(h)
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
return freed
"""

# ARGV: worker, epoch. A worker leaving: what it holds goes back.
_LEAVE = _PRELUDE + r"""
local w, epoch = ARGV[1], ARGV[2]
if fenced(w, epoch) then return redis.error_reply('FENCED') end
local freed = release_worker(w)
redis.call('ZREM', p .. 'workers', w)
redis.call('DEL', p .. 'rows:' .. w, p .. 'gateop:' .. w)   -- it wrote (and synced) every row
return freed
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
# query cap, slots (0: no partition), pattern cap, then (fingerprint, host,
# pattern-or-'', url) per seed.
_CREATE = r"""
local p = KEYS[1]
if redis.call('EXISTS', p .. 'state') == 1 then return 0 end
redis.call('SET', p .. 'settings', ARGV[1])
redis.call('HSET', p .. 'cfg', 'delay', ARGV[2], 'per_host', ARGV[3], 'max_pages', ARGV[4],
           'lease', ARGV[5], 'host_cap', ARGV[6], 'query_cap', ARGV[7], 'slots', ARGV[8],
           'pattern_cap', ARGV[9])
local SLOTS = tonumber(ARGV[8])
""" + _SLOT_FUNCTION + r"""
local n = 0
for i = 10, #ARGV, 4 do
  local colon = string.find(ARGV[i], ':', 1, true)
  local h, pattern, url = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if redis.call('SADD', p .. 'seen:' .. string.sub(ARGV[i], 1, colon - 1),
                string.sub(ARGV[i], colon + 1)) == 1 then
    redis.call('RPUSH', p .. 'q:0:' .. h, n .. '\t0\t\t' .. h .. '\t' .. url)
    redis.call('ZADD', ready_key(0, h), 'NX', 0, h)
    -- seeds count against the trap limits, as urlfilter.TrapGuard counts them
    local query = string.find(url, '?', 1, true)
    if query and tonumber(ARGV[7]) > 0 then
      redis.call('HINCRBY', p .. 'trap:path', string.sub(url, 1, query - 1), 1)
    end
    if tonumber(ARGV[6]) > 0 then redis.call('HINCRBY', p .. 'trap:host', h, 1) end
    if pattern ~= '' and tonumber(ARGV[9]) > 0 then
      redis.call('HSETNX', p .. 'trap:pattern', pattern, 0)
    end
    n = n + 1
  end
end
redis.call('HSET', p .. 'state', 'next_id', n, 'processed', 0, 'leased', 0, 'reclaimed', 0)
redis.call('RPUSH', p .. 'flags', n)
return 1
"""


@dataclass(frozen=True)
class Summary:
    """The shared crawl as the last script saw it."""
    next_id: int
    processed: int
    leased: int
    limit_reached: bool
    wait: float | None        # seconds until the open level's next host may start; None: no host queued
    flags: tuple[int, ...]

    @classmethod
    def of(cls, reply) -> Summary:
        total, processed, leased, limit, wait, flags = reply
        return cls(int(total), int(processed), int(leased), bool(int(limit)),
                   None if int(wait) < 0 else int(wait) / 1000, tuple(int(m) for m in flags))

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


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class SharedCrawl:
    """One crawl's keys in Redis, and the scripts that change them."""

    def __init__(self, client: redis.Redis, crawl_id: str) -> None:
        self.client = client
        self.crawl_id = crawl_id
        self.prefix = f"crawl:{{{crawl_id}}}:"
        self._scripts = {name: client.register_script(code) for name, code in (
            ("lease", _LEASE), ("ack", _ACK), ("mark", _MARK), ("gate", _GATE),
            ("join", _JOIN), ("leave", _LEAVE), ("create", _CREATE), ("resync", _RESYNC),
            ("claim", _CLAIM))}
        self.lost_replies = 0   # calls retried after Redis went away: state to check again

    def run(self, name: str, *args):
        """Run a script; while Redis is away (restarting, say), wait and try
        again, for up to RECONNECT_SECONDS. Every script is safe to run twice
        (a retry after a lost reply) or is put right by ``resync``."""
        return self.call(lambda: self._scripts[name](keys=[self.prefix], args=list(args)))

    def call(self, command):
        """``command()``, tried again while Redis is away (see ``run``)."""
        deadline = time.monotonic() + RECONNECT_SECONDS
        pause = 0.05
        while True:
            try:
                return command()
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                    redis.exceptions.BusyLoadingError) as exc:
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

    def create(self, settings: dict, seeds: Iterable[tuple[str, str]], *, delay: float,
               per_host: int, max_pages: int, host_cap: int, query_cap: int,
               lease_seconds: float = LEASE_SECONDS, slots: int = 0, pattern_cap: int = 0) -> bool:
        """Store a new crawl's settings and seeds ((url, host, pattern or '')
        triples); False if a crawl with this id exists already. ``slots`` > 0
        partitions the hosts: each belongs to one slot, each slot to one
        worker at a time."""
        args = [json.dumps(settings), round(delay * 1000), per_host, max_pages,
                round(lease_seconds * 1000), host_cap, query_cap, slots, pattern_cap]
        for url, host, pattern in seeds:
            args += [fingerprint(url), host, pattern, url]
        return bool(self.run("create", *args))

    def settings(self) -> dict | None:
        raw = self.client.get(self.prefix + "settings")
        return None if raw is None else json.loads(raw)

    def exists(self) -> bool:
        return bool(self.client.exists(self.prefix + "state"))

    def status(self) -> dict:
        """What `crawler status` shows; read only, a moment's snapshot."""
        p, client = self.prefix, self.client
        state = {k.decode(): int(v) for k, v in client.hgetall(p + "state").items()}
        flags = [int(m) for m in client.lrange(p + "flags", 0, -1)]
        level = len(flags) - 1
        slots = int(client.hget(p + "cfg", "slots") or 0)
        suffixes = [f":{slot}" for slot in range(slots)] if slots else [""]
        hosts = {lvl: [h.decode() for suffix in suffixes
                       for h in client.zrange(p + f"ready:{lvl}{suffix}", 0, -1)]
                 for lvl in (level, level + 1)}
        queued = {lvl: sum(client.llen(p + f"q:{lvl}:{h}") for h in hosts[lvl])
                  for lvl in (level, level + 1)}
        server_now, lease_ms = _server_ms(client), self.lease_ms()
        workers = []
        for name, deadline in client.zrange(p + "workers", 0, -1, withscores=True):
            name = name.decode()
            pages = sum(int(v) for v in client.hvals(p + f"rate:{name}"))
            workers.append({"worker": name, "leased": client.hlen(p + f"lease:{name}"),
                            "rows_unconfirmed": client.hlen(p + f"rows:{name}"),
                            "slots": client.scard(p + f"owns:{name}"),
                            "pages_per_minute": pages * 60 / (WINDOW_MS / 1000),
                            "silent_for_seconds": max(0.0, (server_now - (deadline - lease_ms)) / 1000)})
        return {"crawl_id": self.crawl_id, "open_level": level, "flags": flags,
                "queue_total": state.get("next_id", 0), "processed": state.get("processed", 0),
                "leased": state.get("leased", 0), "reclaimed": state.get("reclaimed", 0),
                "queued_open_level": queued[level], "queued_next_level": queued[level + 1],
                "hosts_with_work": len(set(hosts[level]) | set(hosts[level + 1])),
                "partition_slots": slots, "workers": workers,
                "finished": self._finished(state)}

    def _finished(self, state: dict) -> bool:
        """As Summary.finished: every URL acknowledged, or the budget spent."""
        processed, leased = state.get("processed", 0), state.get("leased", 0)
        budget = int(self.client.hget(self.prefix + "cfg", "max_pages") or 0)
        return processed == state.get("next_id", 0) or (
            budget > 0 and processed + leased >= budget and leased == 0)

    def lease_ms(self) -> int:
        return int(self.client.hget(self.prefix + "cfg", "lease") or 0)

    def address(self) -> str:
        """The server's URL as a line may show it: a password becomes PASSWORD."""
        kwargs = self.client.connection_pool.connection_kwargs
        login = (f"{kwargs.get('username') or ''}:PASSWORD@" if kwargs.get("password")
                 else "")
        if "path" in kwargs:
            return f"unix://{login}{kwargs['path']}?db={kwargs.get('db', 0)}"
        scheme = "rediss" if issubclass(self.client.connection_pool.connection_class,
                                        redis.SSLConnection) else "redis"
        return f"{scheme}://{login}{kwargs.get('host')}:{kwargs.get('port')}/{kwargs.get('db', 0)}"

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

    def forget(self, batch: int = FORGET_BATCH) -> int:
        """Remove every key of this crawl; the number removed. The keys that
        make it a crawl go first, in one UNLINK: from then on no worker can
        join, and every fenced script of a worker still running is refused.
        The rest are found by SCAN (never KEYS, which blocks Redis for the
        whole key space) and unlinked in batches."""
        first = [self.prefix + name for name in ("settings", "state", "epoch", "cfg")]
        removed = self.call(lambda: self.client.unlink(*first))
        for keys in self._scanned(batch):
            removed += self.call(lambda: self.client.unlink(*keys))
        return removed

    def leftover(self) -> int:
        """Keys under this crawl's prefix (a worker still running may write one
        after ``forget``)."""
        return sum(len(keys) for keys in self._scanned(FORGET_BATCH))

    def _scanned(self, batch: int):
        """This crawl's keys, one SCAN step's worth at a time (a cursor stays
        valid while keys are removed, and across a reconnect)."""
        cursor = None
        while cursor != 0:
            cursor, keys = self.call(lambda: self.client.scan(cursor or 0, match=self._pattern(),
                                                              count=batch))
            if keys:
                yield keys

    def _pattern(self) -> str:
        """SCAN's MATCH pattern for this crawl's keys: the prefix with glob
        characters escaped (a crawl id may contain '*' or '[')."""
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in self.prefix)
        return escaped + "*"


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
        self.epoch = -1   # not joined: every call is refused
        self.last_reply = time.monotonic()   # when Redis last answered us
        self._lease_seconds: float | None = None

    def run(self, name: str, *args):
        """A script of this worker's: (worker, epoch, *args)."""
        return self._fenced_as(lambda: self.shared.run(name, self.worker, self.epoch, *args))

    def gate(self, op: str, seq: int, host: str, ms: int):
        return self._fenced_as(lambda: self.shared.run("gate", op, self.worker, self.epoch,
                                                       seq, host, ms))

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


class RedisGate:
    """The politeness gate (getpage.PolitenessGate's interface) on Redis:
    every worker's requests to a host share one in-flight count and one
    next-allowed time. ``clock`` is this process's monotonic clock; Redis
    answers in durations, so no two machines' clocks are ever compared."""

    def __init__(self, shared: SharedCrawl, worker: str, cancelled: type[Exception]) -> None:
        self._shared = shared
        self.member = Member(shared, worker)
        self._cancelled = threading.Event()
        self._error = cancelled      # what a cancelled wait raises (getpage's Cancelled)
        self._lock = threading.RLock()   # ops and resync: the held counts match Redis's
        self.held: Counter[str] = Counter()   # host -> slots this worker holds
        self._seq = 0   # numbers this worker's gate calls, made one at a time (the lock)
        self._per_host_cached: int | None = None

    def clock(self) -> float:
        return time.monotonic()

    def _op(self, op: str, host: str, seconds: float = 0.0) -> int:
        with self._lock:
            self._seq += 1
            answer = int(self.member.gate(op, self._seq, host, round(seconds * 1000)))
            if op == "start" and answer == 0:
                self.held[host] += 1
            elif op == "release" and answer == 1:
                self.held[host] -= 1
            return answer

    def locked(self):
        return self._lock

    def leased(self, host: str) -> None:
        """A slot taken by the lease script, with a URL."""
        with self._lock:
            self.held[host] += 1

    def try_start(self, host: str, now: float | None = None) -> bool:
        if self._cancelled.is_set():
            return False
        return self._op("start", host) == 0

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

    def started(self, host: str) -> None:
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

    def answered(self, host: str) -> None:
        """Nothing to tell Redis: the interval counts from the slot's release, later still."""

    def _per_host(self) -> int:
        if self._per_host_cached is None:
            self._per_host_cached = int(self._shared.call(
                lambda: self._shared.client.hget(self._shared.prefix + "cfg", "per_host")) or 1)
        return self._per_host_cached

    def release(self, host: str) -> None:
        self._op("release", host)

    def hold_off(self, host: str, seconds: float) -> None:
        self._op("hold_off", host, seconds)

    def raise_interval(self, host: str, seconds: float) -> None:
        self._op("raise", host, seconds)

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
        self._client = shared.client
        self._call = shared.call
        self._key = shared.prefix + "robots"
        self._claims = shared.prefix + "robots-claim:"
        self._worker = worker

    def get(self, origin: str) -> dict | None:
        raw = self._call(lambda: self._client.hget(self._key, origin))
        return None if raw is None else json.loads(raw)

    def claim(self, origin: str) -> bool:
        """True: this worker loads it (others wait while it lives)."""
        return bool(self._shared.run("claim", self._worker, origin))

    def put(self, origin: str, record: dict) -> None:
        self._call(lambda: self._client.hset(self._key, origin, json.dumps(record)))
        self._call(lambda: self._client.delete(self._claims + origin))


class RedisFrontier:
    """URL_List's Frontier protocol over a SharedCrawl, for one worker.

    pop() leases URLs whose host may start now (the slot taken in the same
    script); a page's children, content verdict and commit go in one
    ``commit`` call (the Controller's shared-state path), so ``push`` and
    ``done`` do nothing here. A URL whose fetch goes on later (a retry, a
    redirect to another host) stays leased and waits here for its host.
    """

    def __init__(self, shared: SharedCrawl, gate: RedisGate, threads: int = 8,
                 sync_rows=lambda: None) -> None:
        self.threads = threads
        self._sync_rows = sync_rows   # makes the rows written so far durable (fsync)
        self._confirmed_at = 0.0
        self._shared = shared
        self._member = gate.member
        self._gate = gate
        self._summary: Summary | None = None
        self._waiting: list[tuple[float, str, QueuedUrl]] = []   # (local time, host, item)
        self._written: list[int] = []   # committed ids whose rows are written: forget them
        self._asked_at = 0.0
        self._held_ids: set[int] = set()   # leased to us and not committed
        self._lost_seen = shared.lost_replies
        self._beat = threading.Event()
        self._heart = threading.Thread(target=self._heartbeat, daemon=True)

    # -- joining and leaving ------------------------------------------------
    def join(self) -> tuple[int, dict[int, tuple[int, int | None, str]]]:
        """(URLs this worker held before, given back now; its committed rows
        that may not be written: id -> (new links, duplicate_of, row JSON))."""
        freed, rows, self._member.epoch = self._shared.run("join", self._member.worker)
        found = {}
        for key, value in zip(rows[::2], rows[1::2]):
            new, original, row = value.decode("utf-8").split("\t", 2)
            found[int(key)] = (int(new), None if int(original) < 0 else int(original), row)
        self._heart.start()
        self._refresh(0)
        return int(freed), found

    def leave(self) -> None:
        self._beat.set()
        if self._heart.is_alive():
            self._heart.join()   # its last renewal must not come after the leave
        self._sync_rows()   # Redis drops the rows it kept for us
        self._member.run("leave")

    def _heartbeat(self) -> None:
        while not self._beat.wait(max(self._shared.lease_ms() / 4000, 0.25)):
            try:
                self._refresh(0)
            except (redis.exceptions.RedisError, RedisStateError):
                pass   # the loop's own calls report it (fenced: stop beating)

    def _refresh(self, n: int) -> list[QueuedUrl]:
        """Lease up to n URLs (n = 0: only the heartbeat and the summary)."""
        with self._gate.locked():
            if self._shared.lost_replies != self._lost_seen:
                self._resync()
            written = self._confirmable()
            entries, summary = self._member.run("lease", n, self.threads, *written)
            self._summary = Summary.of(summary)
            self._asked_at = time.monotonic()
            items = []
            for entry in entries:
                item, host = parse_entry(entry)
                self._gate.leased(host)
                self._held_ids.add(item.id)
                items.append(item)
            return items

    def _confirmable(self) -> list[int]:
        """Ids whose rows Redis may forget: written, and on disk for good
        (one fsync a second at most, not one a row)."""
        if not self._written or time.monotonic() - self._confirmed_at < CONFIRM_SECONDS:
            return []
        self._sync_rows()
        self._confirmed_at = time.monotonic()
        written, self._written = self._written, []
        return written

    def _resync(self) -> None:
        """After a lost reply: give back what Redis holds for us that we never heard of."""
        self._lost_seen = self._shared.lost_replies
        slots = [value for host, count in self._gate.held.items() if count > 0
                 for value in (host, count)]
        self._member.run("resync", *sorted(self._held_ids), "--", *slots)

    # -- the Frontier protocol ------------------------------------------------
    def pop(self, n: int, now: float) -> list[QueuedUrl]:
        out = self._due(n, now)
        if len(out) < n:
            out += self._refresh(n - len(out))
        return out

    def _due(self, n: int, now: float) -> list[QueuedUrl]:
        """Waiting URLs whose time has come and whose host gives a slot."""
        out, later = [], []
        for when, host, item in sorted(self._waiting, key=lambda w: w[0]):
            if len(out) < n and when <= now and self._gate.try_start(host):
                out.append(item)
            else:
                later.append((when if when > now else now + POLL_SECONDS, host, item))
        self._waiting = later
        return out

    def next_ready(self, now: float) -> float | None:
        summary = self._summary
        if summary is None or summary.finished:
            return None if not self._waiting else min(w[0] for w in self._waiting)
        times = [w[0] for w in self._waiting]
        if summary.wait is not None:
            times.append(self._asked_at + summary.wait)
        times.append(now + POLL_SECONDS)   # others hold the open level: ask again soon
        return min(times)

    def fetched(self, item: QueuedUrl) -> None:
        """Its slot went back to Redis through the gate."""

    def requeue(self, item: QueuedUrl, host: str, not_before: float | None = None) -> None:
        self._waiting.append((not_before or 0.0, host, item))

    def done(self, item: QueuedUrl) -> None:
        """Committed already, by commit()."""

    def exhausted(self) -> bool:
        return self._summary is not None and self._summary.finished and not self._waiting

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
        return self._summary.flags if self._summary else ()

    @property
    def current_level(self) -> int:
        return max(len(self.level_flags) - 1, 0)

    @property
    def finished_levels(self) -> int:
        if not self._summary:
            return 0
        return sum(1 for m in self._summary.flags if m <= self._summary.processed)

    @property
    def limit_reached(self) -> bool:
        return bool(self._summary and self._summary.limit_reached)

    # -- the shared-state path ---------------------------------------------
    def commit(self, item: QueuedUrl, content_md5: str, links: list[tuple[str, str, str]],
               expand: bool, row: dict) -> Commit:
        """Acknowledge item: its content verdict, its links ((url, host,
        path if it has a query, pattern or '')) queued if new, its row kept
        until written."""
        args = [item.id, content_md5 or "", int(expand), json.dumps(row)]
        for url, host, path, pattern in links:
            args += [fingerprint(url), host, path, pattern, url]
        reply = self._member.run("ack", *args)
        if int(reply[0]) == -1 and len(reply) == 1:
            self._held_ids.discard(item.id)
            return Commit(False)
        self._held_ids.discard(item.id)
        original, new, counts, summary, new_count, cut = reply
        self._summary = Summary.of(summary)
        self._asked_at = time.monotonic()
        items = tuple(QueuedUrl(int(i), url.decode("utf-8"), item.level + 1, item.id)
                      for i, url in zip(new[::2], new[1::2]))
        seen, host_full, query_full, beyond, too_deep = (int(c) for c in counts)
        return Commit(True, None if int(original) < 0 else int(original), items, int(new_count),
                      {"seen": seen, "host-pages": host_full, "query-variants": query_full,
                       "depth": beyond, "pattern-depth": too_deep},
                      tuple(pattern.decode("utf-8") for pattern in cut))

    def mark_seen(self, item_id: int, url: str, host: str, path: str, pattern: str) -> int:
        return int(self._member.run("mark", item_id, fingerprint(url), host, path, pattern))

    def written(self, item_id: int) -> None:
        """The row of item_id is in this worker's index.csv: Redis may forget it."""
        self._written.append(item_id)
