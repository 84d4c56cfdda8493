-- elect_campaign: become leader when there is none, or renew the lease of the id that leads
-- (it keeps its term). A new leader gets the next term and is announced on the channel.
-- With ARGV[4] = '1' (exclusive: `elect run`) only a vacancy is taken: a live lease of the
-- same id belongs to another process (or to one that died, whose command may still run).
-- ARGV[5] is the campaigning process's token, stored with a new leadership only, so that a
-- process interrupted mid-request can give back exactly what it may have won.
-- KEYS[1] leader hash {id, term, token, who, acquired_at} whose TTL is the lease, KEYS[2] term
-- counter, KEYS[3] wake list a waiting candidate blocks on, KEYS[4] history stream, KEYS[5] the
-- leader's open take (for `expired`; lib/history.lua), KEYS[6] the take counters
-- (lib/contention.lua) (same hash tag)
-- ARGV[1] id, ARGV[2] ttl_ms, ARGV[3] change channel, ARGV[4] exclusive '1' | '0', ARGV[5] token,
-- ARGV[6] who campaigns (src/identity.hpp's pack()): a new leadership keeps it in `who`, with
-- the server time it began in `acquired_at`, ARGV[7] events the history keeps (0: none),
-- ARGV[8] the server time of the answer to the caller's first try, when it did not win
-- (absent or empty: this is the first)
-- returns {1, term, ttl_ms, id} leader | {0, term, leader_ttl_ms, leader_id, now} not leader
-- (now: the server time, which the caller's next tries pass as ARGV[8])
-- Announcement: 'L <term> <ttl_ms> <id>'.
-- @lib clock
-- @lib contention
-- @lib fence
-- @lib history
local leader = object_field(1, 'id', 'election')
check_types({false, 'string', 'list', 'stream', 'string', 'hash'})
local since = tonumber(ARGV[8] or '')
if not leader then
  local cap, who = tonumber(ARGV[7] or '0'), ARGV[6] or ''
  history_expired(KEYS[5], KEYS[4], cap, 'id', 'term')
  local term = fence_after(2, redis.call('INCR', KEYS[2]))
  local now = server_ms()
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'term', term, 'token', ARGV[5], 'who', who,
             'acquired_at', now)
  contention_acquired(KEYS[6], since, now)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  history_add(KEYS[4], cap, 'elected', who, 'id', ARGV[1], 'term', term)
  history_open(KEYS[5], cap, ARGV[1], who, term)
  redis.call('PUBLISH', ARGV[3], 'L ' .. fence_text(term) .. ' ' .. ARGV[2] .. ' ' .. ARGV[1])
  return {1, term, tonumber(ARGV[2]), ARGV[1]}
end
local term = tonumber(redis.call('HGET', KEYS[1], 'term'))
if leader == ARGV[1] and ARGV[4] ~= '1' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, term, tonumber(ARGV[2]), leader}
end
contention_busy(KEYS[6], since)
return {0, term, redis.call('PTTL', KEYS[1]), leader, server_ms()}
