-- lock_release: give the lock back if ARGV[1] holds it (as the writer or as a reader), and
-- wake who may take it next; a waiter that gives up leaves the waiting sets here too.
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash).
-- ARGV[1] token, ARGV[2] prefix of the readers' wake lists (same {hash tag}), ARGV[3] heartbeat ms
-- returns 1 released | 0 not held by the token
-- Whenever the lock is free afterwards, waiters are woken even if nothing was released: a
-- caller that gives up waiting may have taken the last wake-up, and passing it on costs one
-- spurious retry at most.
-- @lib clock
-- @lib lock
local token, rwake, heartbeat = ARGV[1], ARGV[2], tonumber(ARGV[3])
local holder = lock_holder()
local now = server_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
redis.call('ZREM', KEYS[5], token)
redis.call('ZREM', KEYS[6], token)
redis.call('DEL', rwake .. token)

local released = 0
if holder == token then
  redis.call('DEL', KEYS[1])
  holder = false
  released = 1
elseif redis.call('ZREM', KEYS[4], token) == 1 then
  redis.call('HDEL', KEYS[7], token)
  redis.call('HDEL', KEYS[8], token)
  released = 1
end

if not holder then
  if redis.call('ZCARD', KEYS[4]) == 0 then  -- free: one writer may go
    redis.call('DEL', KEYS[3])
    redis.call('RPUSH', KEYS[3], '1')
    redis.call('PEXPIRE', KEYS[3], 60000)
  end
  if redis.call('ZCARD', KEYS[5]) == 0 then  -- no writer waits: every reader may go
    for _, r in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
      redis.call('DEL', rwake .. r)
      redis.call('RPUSH', rwake .. r, '1')
      redis.call('PEXPIRE', rwake .. r, heartbeat * 2)
    end
  end
end
return released
