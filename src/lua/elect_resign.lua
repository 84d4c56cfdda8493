-- elect_resign: step down if ARGV[1] leads (and, when they are not '', with term ARGV[2] and
-- the token ARGV[3] of the process that won), announce the vacancy, and wake one waiting
-- candidate.
-- KEYS[1] leader hash {id, term, token}, KEYS[2] wake list (same hash tag)
-- ARGV[1] id, ARGV[2] term or '', ARGV[3] token or '', ARGV[4] change channel
-- returns the term given up | 0 when ARGV[1] did not lead (so)
-- Announcement: 'V <term>'.
local leader = object_field(1, 'id', 'election')
check_types({false, 'list'})
if not leader then return 0 end
local term = redis.call('HGET', KEYS[1], 'term')
if leader ~= ARGV[1] or (ARGV[2] ~= '' and term ~= ARGV[2]) then return 0 end
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], 'token') ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[4], 'V ' .. term)
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], '1')
redis.call('PEXPIRE', KEYS[2], 60000)
return tonumber(term)
