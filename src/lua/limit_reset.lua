-- limit_reset: delete a limit's state, whatever its algorithm.
-- KEYS[1] state hash, KEYS[2] sliding-window log (same hash tag)
-- returns the number of keys deleted (0: there was no state)
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'none' and (kind ~= 'hash' or not redis.call('HGET', KEYS[1], 'algo')) then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord limit')
end
local log_kind = redis.call('TYPE', KEYS[2])['ok']
if log_kind ~= 'none' and log_kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[2] .. ' holds a ' .. log_kind .. ' that is not an rcoord limit log')
end
return redis.call('DEL', KEYS[1], KEYS[2])
