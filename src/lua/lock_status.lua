#!lua flags=no-writes
-- lock_status: who holds the lock, for how long, and its fence.
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash).
-- returns {token, fence, ttl_ms, 'exclusive', 0, held_ms, waiting} held by a writer
--       | {'', last_fence, longest reader ttl_ms, 'shared', readers, -1, waiting} by readers
--       | {'', last_fence, 0, '', 0, -1, waiting} free
-- held_ms: since the writer took it (-1 when the take did not record when: an older rcoord);
-- waiting: writers and readers waiting for it (their heartbeat not yet run out).
-- @lib clock
-- @lib lock
local holder = lock_holder()
local now = server_ms()
local waiting = redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf') + redis.call('ZCOUNT', KEYS[6], '(' .. now, '+inf')
if holder then
  local at = tonumber(redis.call('HGET', KEYS[1], 'acquired_at') or '')
  local held = at and math.max(0, now - at) or -1
  return {holder, tonumber(redis.call('HGET', KEYS[1], 'fence')), redis.call('PTTL', KEYS[1]), 'exclusive', 0, held, waiting}
end
local last_fence = tonumber(redis.call('GET', KEYS[2]) or '0')
local readers = redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
if readers > 0 then
  local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
  return {'', last_fence, tonumber(last[2]) - now, 'shared', readers, -1, waiting}
end
return {'', last_fence, 0, '', 0, -1, waiting}
