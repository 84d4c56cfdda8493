-- elect_resign: step down if ARGV[1] leads (and, when they are not '', with term ARGV[2] and
-- the token ARGV[3] of the process that won), announce the vacancy, and wake one waiting
-- candidate.
-- KEYS[1] leader hash {id, term, token}, KEYS[2] wake list, KEYS[3] history stream, KEYS[4] the
-- leader's open take (same hash tag)
-- ARGV[1] id, ARGV[2] term or '', ARGV[3] token or '', ARGV[4] change channel, ARGV[5] events
-- the history keeps (0: none recorded), ARGV[6] who calls, ARGV[7] how the leadership ends
-- ('', or 'lost' / 'timeout' from a `run` form: recorded first), ARGV[8] a `run` form's exit
-- code (''), ARGV[9] ms its campaign waited ('')
-- returns the term given up | 0 when ARGV[1] did not lead (so)
-- Announcement: 'V <term>'.
-- @lib clock
-- @lib history
local leader = object_field(1, 'id', 'election')
check_types({false, 'list', 'stream', 'string'})
local cap, who, how, exit_code, waited = tonumber(ARGV[5] or '0'), ARGV[6], ARGV[7] or '', ARGV[8], ARGV[9]
if how == 'lost' or how == 'timeout' then
  history_add(KEYS[3], cap, how, who, 'id', ARGV[1], 'term', ARGV[2], 'exit_code', exit_code)
end
if not leader then
  history_expired(KEYS[4], KEYS[3], cap, 'id', 'term')
  return 0
end
local term = redis.call('HGET', KEYS[1], 'term')
if leader ~= ARGV[1] or (ARGV[2] ~= '' and term ~= ARGV[2]) then return 0 end
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], 'token') ~= ARGV[3] then return 0 end
local taken = redis.call('HMGET', KEYS[1], 'who', 'acquired_at')
local at = tonumber(taken[2] or '')
history_add(KEYS[3], cap, 'resigned', taken[1], 'id', leader, 'term', term, 'held_ms',
            at and server_ms() - at, 'exit_code', exit_code, 'waited_ms', waited)
history_close(KEYS[4])
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[4], 'V ' .. term)
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], '1')
redis.call('PEXPIRE', KEYS[2], 60000)
return tonumber(term)
