-- @no-writes
-- elect_status: who leads, in which term, for how much longer, and which process it is.
-- KEYS[1] leader hash {id, term, token, who, acquired_at}, KEYS[2] term counter
-- returns {id, term, ttl_ms, who, acquired_at, held_ms} with a leader (who '' and the times
-- -1 for a leadership an older rcoord won) | {'', last_term, 0, '', -1, -1} without one
-- @lib clock
local leader = object_field(1, 'id', 'election')
check_types({false, 'string'})
if not leader then return {'', tonumber(redis.call('GET', KEYS[2]) or '0') or 0, 0, '', -1, -1} end
local at = tonumber(redis.call('HGET', KEYS[1], 'acquired_at') or '')
return {leader, tonumber(redis.call('HGET', KEYS[1], 'term')), redis.call('PTTL', KEYS[1]),
        redis.call('HGET', KEYS[1], 'who') or '', at or -1, at and math.max(0, server_ms() - at) or -1}
