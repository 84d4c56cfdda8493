-- elect_renew: extend the lease of the leader of one given term; never takes leadership.
-- KEYS[1] leader hash {id, term}
-- ARGV[1] id, ARGV[2] term, ARGV[3] ttl_ms
-- returns 1 renewed | 0 this id no longer leads with this term (expired, resigned, replaced)
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return 0 end
local leader = false
if kind == 'hash' then leader = redis.call('HGET', KEYS[1], 'id') end
if not leader then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord election')
end
if leader ~= ARGV[1] or redis.call('HGET', KEYS[1], 'term') ~= ARGV[2] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
