-- limit_cancel: give back the reservation of an interrupted `limit wait`, if it is not due
-- yet by the server's clock (a due one has been used: it stays counted).
-- KEYS[1] state hash, KEYS[2] sliding-window log (same hash tag)
-- ARGV[1] algo, ARGV[2] due_us, ARGV[3] unit, ARGV[4] drain, ARGV[5] burst, ARGV[6] cost,
-- ARGV[7] slot (fixed-window: window start), ARGV[8] member id (sliding-window)
-- returns 1 when given back, 0 when not (due already, or the state changed meanwhile)
-- @lib clock
-- @lib limit
local key, log = KEYS[1], KEYS[2]
local algo, due = ARGV[1], tonumber(ARGV[2])
local unit, drain, burst, cost = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

local now = server_us()
if redis.call('TYPE', key)['ok'] ~= 'hash' then return 0 end
if redis.call('HGET', key, 'algo') ~= algo then return 0 end
local at = tonumber(redis.call('HGET', key, 'at'))
if now < at then now = at end
if now >= due then return 0 end

if algo == 'gcra' then
  local s = redis.call('HMGET', key, 'level', 'unit', 'drain')
  if tonumber(s[2]) ~= unit or tonumber(s[3]) ~= drain then return 0 end
  local level = tonumber(s[1])
  local drained = (now - at) * drain
  if drained >= level then level = 0 else level = level - drained end
  level = math.max(0, level - cost * unit)
  redis.call('HSET', key, 'level', fmt(level), 'at', fmt(now))
  redis.call('PEXPIRE', key, fmt(div_ceil(div_ceil(level, drain), 1000) + 1))
  return 1
elseif algo == 'token-bucket' then
  local s = redis.call('HMGET', key, 'tokens', 'unit', 'drain', 'burst')
  if tonumber(s[2]) ~= unit or tonumber(s[3]) ~= drain or tonumber(s[4]) ~= burst then return 0 end
  local cap = burst * unit
  local tokens = tonumber(s[1])
  local refilled = (now - at) * drain
  if refilled >= cap - tokens then tokens = cap else tokens = tokens + refilled end
  tokens = math.min(cap, tokens + cost * unit)
  redis.call('HSET', key, 'tokens', fmt(tokens), 'at', fmt(now))
  redis.call('PEXPIRE', key, fmt(div_ceil(div_ceil(cap - tokens, drain), 1000) + 1))
  return 1
elseif algo == 'sliding-window' then
  check_types({false, 'zset'})
  if redis.call('ZREM', log, ARGV[8] .. ':' .. ARGV[6]) == 0 then return 0 end
  redis.call('HINCRBY', key, 'sum', -cost)
  return 1
elseif algo == 'fixed-window' then
  local field = 'n:' .. ARGV[7]
  local n = tonumber(redis.call('HGET', key, field))
  if not n then return 0 end
  if n <= cost then redis.call('HDEL', key, field) else redis.call('HINCRBY', key, field, -cost) end
  return 1
end
return 0
