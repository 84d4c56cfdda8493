-- elect_renew: extend the lease of the leader of one given term; never takes leadership.
-- KEYS[1] leader hash {id, term}, KEYS[2] the take counters (lib/contention.lua), where a
-- leadership found gone counts as `lost`
-- ARGV[1] id, ARGV[2] term, ARGV[3] ttl_ms
-- returns 1 renewed | 0 this id no longer leads with this term (expired, resigned, replaced)
-- @lib contention
local leader = object_field(1, 'id', 'election')
check_types({false, 'hash'})
if not leader or leader ~= ARGV[1] or redis.call('HGET', KEYS[1], 'term') ~= ARGV[2] then
  contention_add(KEYS[2], 'lost', 1)
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
