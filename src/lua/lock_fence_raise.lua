-- lock_fence_raise: Redlock's fencing step. After a quorum granted the lock, the client takes
-- F = the highest fence any granting node handed out and raises every granting node to it,
-- so the next Redlock holder (whose majority shares a node with this one) gets a higher fence.
-- KEYS as lock_acquire (lock hash, fence counter, ...); only KEYS[1] and KEYS[2] are used.
-- ARGV[1] token, ARGV[2] the fence F
-- returns 1 when ARGV[1] still holds the lock here (its fence is now F and the counter at
-- least F) | 0 when it does not (expired or taken: nothing is changed)
local token, fence = ARGV[1], tonumber(ARGV[2])
check_types({false, 'string'})
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then return 0 end
if redis.call('HGET', KEYS[1], 'token') ~= token then return 0 end
if tonumber(redis.call('GET', KEYS[2]) or '0') < fence then
  redis.call('SET', KEYS[2], fence)
end
redis.call('HSET', KEYS[1], 'fence', fence)
return 1
