-- limit_token_bucket: one token-bucket decision: a check, a peek, or the reservation of
-- `limit wait`.
-- The bucket holds up to burst * unit tokens and refills `drain` per µs; a request takes
-- cost * unit. A reservation takes its tokens at once, leaving the bucket in debt: it is due
-- when the bucket has refilled to zero, and later callers queue behind it.
-- KEYS[1] state hash {algo, tokens, at, unit, drain, burst}; KEYS[2] unused. `ls` peeks with
-- the parameters kept there.
-- ARGV[1] unit, ARGV[2] drain, ARGV[3] burst, ARGV[4] cost, ARGV[5] window_us (unused),
-- ARGV[6] max_wait_us (< 0: no reservation), ARGV[7] peek ('1': change nothing),
-- ARGV[8] member (unused)
-- returns {allowed, limit, remaining, retry_after_us (-1: never), reset_after_us, wait_us,
--          now_us, due_us, slot (0)}
-- @lib clock
-- @lib limit
local key = KEYS[1]
local unit, drain = tonumber(ARGV[1]), tonumber(ARGV[2])
local burst, cost = tonumber(ARGV[3]), tonumber(ARGV[4])
local max_wait, peek = tonumber(ARGV[6]), ARGV[7] == '1'
local kMaxDeficit = 4503599627370496 -- 2^52: capacity minus tokens stays an exact double

local now = server_us()
local cap = burst * unit
local tokens = cap
local state = limit_state('token-bucket', 'tokens', 'at', 'unit', 'drain', 'burst')
if state then
  tokens = tonumber(state[2])
  local at = tonumber(state[3])
  if now < at then now = at end -- the server's clock stepped back: time stands still here
  local old_unit, old_drain, old_burst = tonumber(state[4]), tonumber(state[5]), tonumber(state[6])
  if old_unit ~= unit or old_drain ~= drain or old_burst ~= burst then
    -- another rate or size: keep how long the bucket takes to refill
    local refill = div_ceil(old_burst * old_unit - tokens, old_drain)
    tokens = cap - math.min(refill * drain, kMaxDeficit)
  end
  local refilled = (now - at) * drain
  if refilled >= cap - tokens then tokens = cap else tokens = tokens + refilled end
end

local function left(n)
  if n <= 0 then return 0 end
  return div_floor(n, unit)
end
local function store(n)
  redis.call('HSET', key, 'algo', 'token-bucket', 'tokens', fmt(n), 'at', fmt(now),
    'unit', fmt(unit), 'drain', fmt(drain), 'burst', fmt(burst))
  redis.call('PEXPIRE', key, fmt(div_ceil(div_ceil(cap - n, drain), 1000) + 1))
end

if cost > burst then
  return {0, burst, left(tokens), -1, div_ceil(cap - tokens, drain), 0, now, 0, 0}
end
local need = cost * unit
local after = tokens - need
if after >= 0 then
  if peek then return {1, burst, left(tokens), 0, div_ceil(cap - tokens, drain), 0, now, now, 0} end
  store(after)
  return {1, burst, left(after), 0, div_ceil(cap - after, drain), 0, now, now, 0}
end
local retry = div_ceil(-after, drain)
if peek or max_wait < 0 or retry > max_wait or cap - after > kMaxDeficit then
  return {0, burst, left(tokens), retry, div_ceil(cap - tokens, drain), 0, now, 0, 0}
end
store(after)
local at_due = math.min(cap, after + retry * drain)
return {1, burst, left(at_due), 0, div_ceil(cap - after, drain) - retry, retry, now, now + retry, 0}
