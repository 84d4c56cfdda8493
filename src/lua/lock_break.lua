-- lock_break: operator override; delete the lock whoever holds it, and wake one waiter.
-- KEYS[1] lock hash, KEYS[2] wake list
-- returns the token that held it | '' when it was free
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return '' end
local holder = false
if kind == 'hash' then holder = redis.call('HGET', KEYS[1], 'token') end
if not holder then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord lock')
end
redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], '1')
redis.call('PEXPIRE', KEYS[2], 60000)
return holder
