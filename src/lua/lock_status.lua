-- lock_status: who holds the lock, for how long, and its fence.
-- KEYS[1] lock hash, KEYS[2] fence counter
-- returns {token, fence, ttl_ms} when held | {'', last_fence, 0} when free
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  return {'', tonumber(redis.call('GET', KEYS[2]) or '0'), 0}
end
local holder = false
if kind == 'hash' then holder = redis.call('HGET', KEYS[1], 'token') end
if not holder then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord lock')
end
return {holder, tonumber(redis.call('HGET', KEYS[1], 'fence')), redis.call('PTTL', KEYS[1])}
