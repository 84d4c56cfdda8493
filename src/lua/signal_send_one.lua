-- signal_send_one: deliver a message to exactly one waiting receiver, chosen at random.
-- Each waiter subscribes to a channel of its own before it registers; PUBLISH counts the
-- connections that got the message, so a waiter whose process died (its connection is
-- gone) is dropped and the next one is tried: a dead waiter never swallows the message.
-- The chosen waiter leaves the registry, so a second send picks another one.
-- KEYS[1] registry: sorted set of waiter id -> stale time (ms)
-- ARGV[1] prefix of the waiters' own channels (the channel is ARGV[1] .. id), ARGV[2] data
-- returns 1 delivered | 0 nobody waits
-- Message: '1' .. data (so that a waiter hands on only --one messages it does not use).
-- @lib clock
check_types({'zset'}, 'signal')
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local now = server_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
while true do
  local id = redis.call('ZRANDMEMBER', KEYS[1])
  if not id then return 0 end
  redis.call('ZREM', KEYS[1], id)
  if redis.call('PUBLISH', ARGV[1] .. id, '1' .. ARGV[2]) > 0 then return 1 end
end
