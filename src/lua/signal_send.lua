-- signal_send: deliver a message to every waiting receiver of a channel.
-- Each waiter subscribes to a channel of its own before it registers. Delivery removes the
-- waiter from this channel's registry (a waiter takes one message per channel), so a
-- second send right after does not count it again; PUBLISH counts the connections that got
-- the message, so a waiter whose process died is dropped and not counted.
-- KEYS[1] registry: sorted set of waiter id -> stale time (ms)
-- ARGV[1] prefix of the waiters' own channels (the channel is ARGV[1] .. id), ARGV[2] data
-- returns the number of receivers
-- Message: '*' .. data (a broadcast; '1' marks a --one message, see signal_send_one).
-- @lib clock
check_types({'zset'}, 'signal')
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local now = server_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
local receivers = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  redis.call('ZREM', KEYS[1], id)
  if redis.call('PUBLISH', ARGV[1] .. id, '*' .. ARGV[2]) > 0 then receivers = receivers + 1 end
end
return receivers
