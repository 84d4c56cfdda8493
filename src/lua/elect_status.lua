#!lua flags=no-writes
-- elect_status: who leads, in which term, for how much longer.
-- KEYS[1] leader hash {id, term}, KEYS[2] term counter
-- returns {id, term, ttl_ms} with a leader | {'', last_term, 0} without one
local leader = object_field(1, 'id', 'election')
check_types({false, 'string'})
if not leader then return {'', tonumber(redis.call('GET', KEYS[2]) or '0') or 0, 0} end
return {leader, tonumber(redis.call('HGET', KEYS[1], 'term')), redis.call('PTTL', KEYS[1])}
