-- gate_count: count one outcome of a gate's take in the gate's counters (lib/contention.lua),
-- where no gate_take script ran on the counters' node: the ordered take of a Redis Cluster,
-- and a part of a running gate found lost.
-- KEYS[1] the counters hash `<prefix>{gate:PARTS}:stats` (gate.hpp, counters_key)
-- ARGV[1] 'acquired' (every part held), 'busy' (refused) or 'lost'; ARGV[2] the server time
-- (ms) of this call's first refusal ('' or absent: none yet)
-- returns the server time in ms, which a refused call's next tries pass as ARGV[2]
-- @lib clock
-- @lib contention
local now, since = server_ms(), tonumber(ARGV[2] or '')
if ARGV[1] == 'acquired' then
  contention_acquired(KEYS[1], since, now)
elseif ARGV[1] == 'busy' then
  contention_busy(KEYS[1], since)
elseif ARGV[1] == 'lost' then
  contention_add(KEYS[1], 'lost', 1)
else
  return redis.error_reply('ERR gate_count: unknown outcome ' .. tostring(ARGV[1]))
end
return now
