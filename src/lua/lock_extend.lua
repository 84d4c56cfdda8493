-- lock_extend: set a new TTL on the lock if ARGV[1] still holds it (writer or reader).
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash, ...,
-- KEYS[12] the take counters, where a lease found gone counts as `lost`).
-- ARGV[1] token, ARGV[2] ttl_ms
-- returns {1, fence} extended | {0, 0} not held by the token
-- @lib clock
-- @lib contention
-- @lib history
-- @lib lock
local token, ttl = ARGV[1], tonumber(ARGV[2])
local holder, _, held = lock_holder()
if holder == token then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, tonumber(held[4])}
end
local fence = lock_extend_reader(token, ttl, server_ms())
if not fence then
  contention_add(KEYS[12], 'lost', 1)
  return {0, 0}
end
return {1, fence}
