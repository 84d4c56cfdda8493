-- lock_extend: set a new TTL on the lock if ARGV[1] still holds it (writer or reader).
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash).
-- ARGV[1] token, ARGV[2] ttl_ms
-- returns {1, fence} extended | {0, 0} not held by the token
-- @lib clock
-- @lib history
-- @lib lock
local token, ttl = ARGV[1], tonumber(ARGV[2])
local holder, _, held = lock_holder()
if holder == token then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, tonumber(held[4])}
end
local now = server_ms()
local deadline = redis.call('ZSCORE', KEYS[4], token)
if not deadline or tonumber(deadline) <= now then return {0, 0} end
redis.call('ZADD', KEYS[4], now + ttl, token)
local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[4], tonumber(last[2]) - now + 1000)
redis.call('PEXPIRE', KEYS[7], tonumber(last[2]) - now + 1000)
if redis.call('EXISTS', KEYS[8]) == 1 then redis.call('PEXPIRE', KEYS[8], tonumber(last[2]) - now + 1000) end
return {1, tonumber(redis.call('HGET', KEYS[7], token) or '0')}
