#!lua flags=no-writes
-- latch_status: the count left.
-- KEYS[1] latch hash {count, initial}
-- returns the count | -1 when there is no such latch
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return -1 end
local count = false
if kind == 'hash' then count = redis.call('HGET', KEYS[1], 'count') end
if not count then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord latch')
end
return tonumber(count)
