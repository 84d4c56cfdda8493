-- complete_add: add terms to an autocomplete index, optionally scoring them.
-- KEYS[1] index (sorted set, all scores 0, members `folded \0 term`), KEYS[2] scores
-- (sorted set, same members, score = popularity) (same {hash tag})
-- ARGV[1] mode: 'plain' (no score change), 'set' (score := ARGV[2]), 'incr' (score += ARGV[2])
-- ARGV[2] score or increment, ARGV[3] expiry in ms (0: none given), ARGV[4..] members
-- returns {added1, score1, added2, score2, ...}: added 1 when the term is new, score the
-- term's score as a string ('' when it has none)
check_types({'zset', 'zset'}, 'autocomplete index')
local mode = ARGV[1]
local out = {}
for i = 4, #ARGV do
  local member = ARGV[i]
  out[#out + 1] = redis.call('ZADD', KEYS[1], 0, member)
  local score
  if mode == 'set' then
    redis.call('ZADD', KEYS[2], ARGV[2], member)
    score = redis.call('ZSCORE', KEYS[2], member)
  elseif mode == 'incr' then
    score = redis.call('ZINCRBY', KEYS[2], ARGV[2], member)
  else
    score = redis.call('ZSCORE', KEYS[2], member)
  end
  out[#out + 1] = score or ''
end
expire_object(tonumber(ARGV[3]))
return out
