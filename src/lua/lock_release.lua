-- lock_release: delete the lock if ARGV[1] holds it, and wake one waiter.
-- KEYS[1] lock hash, KEYS[2] wake list (same {hash tag})
-- ARGV[1] token
-- returns 1 released | 0 not held by the token
-- When the lock is free already, a waiter is woken anyway: a caller that gives up waiting
-- may have taken the last wake-up, and passing it on costs one spurious retry at most.
local kind = redis.call('TYPE', KEYS[1])['ok']
local function wake()
  redis.call('DEL', KEYS[2])
  redis.call('RPUSH', KEYS[2], '1')
  redis.call('PEXPIRE', KEYS[2], 60000)
end
if kind == 'none' then
  wake()
  return 0
end
local holder = false
if kind == 'hash' then holder = redis.call('HGET', KEYS[1], 'token') end
if not holder then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord lock')
end
if holder ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
wake()
return 1
