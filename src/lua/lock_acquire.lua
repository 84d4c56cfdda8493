-- lock_acquire: take the lock exclusively (a writer), or refresh it for its holder.
-- KEYS[1] lock hash {token, fence, acquired_at (server ms)}, KEYS[2] fence counter, KEYS[3] writers' wake list,
-- KEYS[4] readers zset (token -> lease deadline), KEYS[5] waiting writers zset (token ->
-- heartbeat deadline), KEYS[6] waiting readers zset, KEYS[7] readers' fences hash, KEYS[8]
-- readers' identities hash, KEYS[9] history stream, KEYS[10] the writer's open take, KEYS[11]
-- the watchers zset of `lock wait`, KEYS[12] the take counters (lib/contention.lua) (all under one
-- {hash tag}; times in ms of server time)
-- ARGV[1] token, ARGV[2] ttl_ms, ARGV[3] 1 when the caller will wait, ARGV[4] heartbeat ms,
-- ARGV[5] who takes it (src/identity.hpp's pack(), kept in the hash's `who`), ARGV[6] events
-- the history keeps (0: none recorded), ARGV[7] 1 when a busy answer is the call's last (a try
-- without --wait: recorded as `busy`; a waiter records it when it gives up), ARGV[8] the least
-- fence to hand out (a Redlock's proposal, lib/fence.lua; absent or empty: none), ARGV[9] the
-- server time of the busy answer to the caller's first try (absent or empty: this is the first),
-- ARGV[10] '1' to decide only (a gate's check of every part before it takes any, gate_take):
-- nothing is written, and the answer is {1, fence held or 0, ttl_ms, refreshed} when it would
-- be acquired, {0} when not
-- returns {1, fence, ttl_ms, refreshed} when acquired (refreshed: 1 when the token already held
-- it, 0 when newly taken) | {0, 0, remaining_ms of the holders, now} when busy (now: the server
-- time, which the caller's next tries pass as ARGV[9])
-- @lib clock
-- @lib contention
-- @lib fence
-- @lib history
-- @lib lock
local token, ttl, waiting, heartbeat = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', tonumber(ARGV[4])
local who, cap, last_try = ARGV[5] or '', tonumber(ARGV[6] or '0'), ARGV[7] == '1'
local fence_floor, since = tonumber(ARGV[8] or ''), tonumber(ARGV[9] or '')
local peek = ARGV[10] == '1'
local holder, present, held = lock_holder()
if holder == token then
  if not peek then redis.call('PEXPIRE', KEYS[1], ttl) end
  return {1, tonumber(held[4]), ttl, 1}
end
local now = server_ms()
local readers
if peek then
  readers = lock_live_readers(now, present)
else
  readers = lock_drop_expired(holder, now, cap, present)
  -- Calls on a waiting set that does not exist are left out (they would find it empty).
  if present[5] then redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now) end
end

if not holder and readers == 0 then
  if peek then return {1, 0, ttl, 0} end
  local fence = fence_after(2, redis.call('INCR', KEYS[2]), fence_floor)
  redis.call('HSET', KEYS[1], 'token', token, 'fence', fence, 'acquired_at', now, 'who', who)
  redis.call('PEXPIRE', KEYS[1], ttl)
  if present[5] then redis.call('ZREM', KEYS[5], token) end
  history_add(KEYS[9], cap, 'acquired', who, 'token', token, 'fence', fence)
  history_open(KEYS[10], cap, token, who, fence)
  contention_acquired(KEYS[12], since, now)
  return {1, fence, ttl, 0}
end
if peek then return {0} end
-- Busy. A writer that will wait says so: from now on no new reader gets in before it.
if waiting then
  redis.call('ZADD', KEYS[5], now + heartbeat, token)
  redis.call('PEXPIRE', KEYS[5], heartbeat * 2)
end
if last_try then lock_record_busy(cap, who, token) end
contention_busy(KEYS[12], since)
if holder then return {0, 0, redis.call('PTTL', KEYS[1]), now} end
local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
return {0, 0, tonumber(last[2]) - now, now}
