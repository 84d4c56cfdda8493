-- lock_extend: set a new TTL on the lock if ARGV[1] still holds it.
-- KEYS[1] lock hash
-- ARGV[1] token, ARGV[2] ttl_ms
-- returns {1, fence} extended | {0, 0} not held by the token
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return {0, 0} end
local holder = false
if kind == 'hash' then holder = redis.call('HGET', KEYS[1], 'token') end
if not holder then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord lock')
end
if holder ~= ARGV[1] then return {0, 0} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, tonumber(redis.call('HGET', KEYS[1], 'fence'))}
