-- latch_init: create a count-down latch; an existing one is left as it is.
-- KEYS[1] latch hash {count, initial}
-- ARGV[1] count, ARGV[2] ttl_ms or '' (no expiry), ARGV[3] channel announcing that it opened
-- returns {1, count} created | {0, count} it exists already (its count)
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'none' then
  local count = false
  if kind == 'hash' then count = redis.call('HGET', KEYS[1], 'count') end
  if not count then
    return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord latch')
  end
  return {0, tonumber(count)}
end
redis.call('HSET', KEYS[1], 'count', ARGV[1], 'initial', ARGV[1])
if ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if tonumber(ARGV[1]) == 0 then redis.call('PUBLISH', ARGV[3], '0') end
return {1, tonumber(ARGV[1])}
