-- latch_down: count a latch down (never below 0); reaching 0 is announced on the channel,
-- which wakes every waiter.
-- KEYS[1] latch hash {count, initial}
-- ARGV[1] by how much, ARGV[2] channel announcing that it opened
-- returns the count left | -1 when there is no such latch
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return -1 end
local count = false
if kind == 'hash' then count = redis.call('HGET', KEYS[1], 'count') end
if not count then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord latch')
end
count = tonumber(count)
if count == 0 then return 0 end
local left = math.max(0, count - tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'count', left)
if left == 0 then redis.call('PUBLISH', ARGV[2], '0') end
return left
