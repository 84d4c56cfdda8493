-- lock_acquire_shared: take the lock as one of many readers, or refresh a reader's lease.
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash, ...,
-- KEYS[12] the take counters).
-- ARGV[1] token, ARGV[2] ttl_ms, ARGV[3] 1 when the caller will wait, ARGV[4] heartbeat ms,
-- ARGV[5] who takes it (kept with the server time of the take in the identities hash), ARGV[6]
-- events the history keeps (0: none recorded), ARGV[7] 1 when a busy answer is the call's
-- last (recorded as `busy`), ARGV[8] unused (lock_acquire's fence floor), ARGV[9] the server
-- time of the busy answer to the caller's first try (absent or empty: this is the first),
-- ARGV[10] '1' to decide only, as lock_acquire's (then {1, fence held or 0, ttl_ms, refreshed}
-- or {0}, nothing written)
-- returns {1, fence, ttl_ms, refreshed} when acquired (refreshed: 1 when the token already was a
-- reader, 0 when newly taken) | {0, 0, remaining_ms of the holders, now} when busy
-- A reader is refused while a writer holds the lock or any writer is waiting for it, so a
-- stream of readers cannot starve a writer.
-- @lib clock
-- @lib contention
-- @lib fence
-- @lib history
-- @lib lock
-- @lib holder
local token, ttl, waiting, heartbeat = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', tonumber(ARGV[4])
local who, cap, last_try = ARGV[5] or '', tonumber(ARGV[6] or '0'), ARGV[7] == '1'
local since, peek = tonumber(ARGV[9] or ''), ARGV[10] == '1'
local holder, present = lock_holder()
local now = server_ms()
if not peek then
  lock_drop_expired(holder, now, cap, present)
  -- Calls on a waiting set that does not exist are left out (they would find it empty).
  if present[5] then redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now) end
  if present[6] then redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now) end
end

local function keep(key, deadline)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then deadline = math.max(deadline, tonumber(last[2])) end
  redis.call('PEXPIRE', key, deadline - now + 1000)
end

local mine = redis.call('ZSCORE', KEYS[4], token)
-- (What a decision alone finds lapsed, the others drop first: a lease or a waiting writer's
-- heartbeat that ran out by `now` counts for nothing.)
if mine and tonumber(mine) <= now then mine = false end
local writers = present[5] and redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf') or 0
if mine or (not holder and writers == 0) then
  local fence = tonumber(redis.call('HGET', KEYS[7], token) or '0')
  if peek then return {1, mine and fence or 0, ttl, mine and 1 or 0} end
  if not mine then
    fence = fence_after(2, redis.call('INCR', KEYS[2]))
    redis.call('HSET', KEYS[7], token, fence)
    redis.call('HSET', KEYS[8], token, holder_record(who, now))
    history_add(KEYS[9], cap, 'acquired', who, 'token', token, 'mode', 'shared', 'fence', fence)
    contention_acquired(KEYS[12], since, now)
  end
  redis.call('ZADD', KEYS[4], now + ttl, token)
  redis.call('ZREM', KEYS[6], token)
  keep(KEYS[4], now + ttl)
  redis.call('PEXPIRE', KEYS[7], redis.call('PTTL', KEYS[4]))
  if redis.call('EXISTS', KEYS[8]) == 1 then redis.call('PEXPIRE', KEYS[8], redis.call('PTTL', KEYS[4])) end
  return {1, fence, ttl, mine and 1 or 0}
end
if peek then return {0} end
if waiting then
  redis.call('ZADD', KEYS[6], now + heartbeat, token)
  keep(KEYS[6], now + heartbeat)
end
if last_try then lock_record_busy(cap, who, token) end
contention_busy(KEYS[12], since)
if holder then return {0, 0, redis.call('PTTL', KEYS[1]), now} end
-- No writer holds it, but a writer waits and goes first: the readers' longest lease is
-- how long that can take (0 when only the waiting writer is in the way).
local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
if last[2] then return {0, 0, tonumber(last[2]) - now, now} end
return {0, 0, 0, now}
