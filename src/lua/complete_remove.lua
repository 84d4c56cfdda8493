-- complete_remove: remove terms from an autocomplete index and their scores.
-- KEYS[1] index, KEYS[2] scores (same {hash tag}); ARGV[1..] members `folded \0 term`
-- returns {removed1, removed2, ...}: 1 when the term was there, 0 when it was not
check_types({'zset', 'zset'}, 'autocomplete index')
local out = {}
for i = 1, #ARGV do
  out[i] = redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
end
return out
