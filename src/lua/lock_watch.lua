-- lock_watch: `lock wait`'s look at the lock. Free (no writer, no reader): say so, and leave
-- the watchers. Held: the caller stays among the watchers (KEYS[11]) until its heartbeat
-- deadline, so that the give-back that frees the lock wakes it (lib/lock.lua,
-- lock_wake_watchers); it takes nothing and keeps no taker out.
-- KEYS as lock_acquire, then KEYS[11] the watchers zset (watcher -> heartbeat deadline); the
-- watcher's wake list is KEYS[11] .. ':' .. ARGV[1] (same {hash tag}).
-- ARGV[1] the watcher's token, ARGV[2] ms it stays among the watchers without looking again
-- (0: it stops waiting and leaves; a wake-up that reached it first still counts as free),
-- ARGV[3] events the history keeps (0: none recorded; leases found run out are `expired`)
-- returns {1, 0} free (or freed since the last look) | {0, remaining ms of the holders}
-- @lib clock
-- @lib history
-- @lib lock
local token, life, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3] or '0')
local holder, present = lock_holder()
local now = server_ms()
local readers = lock_drop_expired(holder, now, cap, present)
local wake = KEYS[11] .. ':' .. token
local woken = redis.call('LPOP', wake)
if woken or (not holder and readers == 0) then
  if present[11] then redis.call('ZREM', KEYS[11], token) end
  return {1, 0}
end
if life <= 0 then
  if present[11] then redis.call('ZREM', KEYS[11], token) end
else
  if present[11] then redis.call('ZREMRANGEBYSCORE', KEYS[11], '-inf', now) end
  redis.call('ZADD', KEYS[11], now + life, token)
  -- Every watcher gets the same life: the newest deadline is this one.
  redis.call('PEXPIRE', KEYS[11], life)
end
if holder then return {0, redis.call('PTTL', KEYS[1])} end
local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
return {0, tonumber(last[2]) - now}
