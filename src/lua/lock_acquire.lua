-- lock_acquire: take a free lock, or refresh it for the token that already holds it.
-- KEYS[1] lock hash {token, fence}, KEYS[2] fence counter (same {hash tag})
-- ARGV[1] token, ARGV[2] ttl_ms
-- returns {1, fence, ttl_ms} when acquired | {0, 0, holder_ttl_ms} when busy
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  local fence = redis.call('INCR', KEYS[2])
  redis.call('HSET', KEYS[1], 'token', ARGV[1], 'fence', fence)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, fence, tonumber(ARGV[2])}
end
local holder = false
if kind == 'hash' then holder = redis.call('HGET', KEYS[1], 'token') end
if not holder then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord lock')
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('HGET', KEYS[1], 'fence')), tonumber(ARGV[2])}
end
return {0, 0, redis.call('PTTL', KEYS[1])}
