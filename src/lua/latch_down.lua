-- latch_down: count a latch down (never below 0); reaching 0 is announced on the channel,
-- which wakes every waiter.
-- KEYS[1] latch hash {count, initial}
-- ARGV[1] by how much, ARGV[2] channel announcing that it opened
-- returns the count left | -1 when there is no such latch
local count = object_field(1, 'count', 'latch')
if not count then return -1 end
count = tonumber(count)
if count == 0 then return 0 end
local left = math.max(0, count - tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'count', left)
if left == 0 then redis.call('PUBLISH', ARGV[2], '0') end
return left
