-- signal_register: enter a waiter in a channel's registry, so that `signal send --one` can
-- pick it. Entries whose wait is long over are dropped here and by signal_send_one.
-- KEYS[1] registry: sorted set of waiter id -> server time (ms) after which the entry is stale
-- ARGV[1] waiter id, ARGV[2] how long it waits in ms, or 'forever'
-- returns the number of registered waiters
-- @lib clock
check_types({'zset'}, 'signal')
local now = server_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
-- A minute of grace past the wait: the entry outlives any waiter that is still alive.
local stale = '+inf'
if ARGV[2] ~= 'forever' then stale = now + tonumber(ARGV[2]) + 60000 end
redis.call('ZADD', KEYS[1], stale, ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] == 'inf' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(last[2]) - now))
end
return redis.call('ZCARD', KEYS[1])
