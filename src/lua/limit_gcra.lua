-- limit_gcra: one GCRA decision (redis-cell's CL.THROTTLE semantics): a check, a peek, or
-- the reservation of `limit wait`.
-- The state is the backlog `level` at server time `at` (µs): every unit of cost adds `unit`,
-- `drain` units leak away per µs, and a request fits while the level stays within
-- burst * unit. level / drain is the theoretical arrival time minus `at`; storing it as an
-- integer level keeps every rate exact. A reservation lets the level pass the capacity: the
-- request is due when it has drained back to it, and later callers queue behind it.
-- KEYS[1] state hash {algo, level, at, unit, drain, burst}; KEYS[2] unused (the log of other
-- algos). The burst is kept for `ls`, which peeks with the parameters last used.
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
local kMaxLevel = 4503599627370496 -- 2^52: level + cost stays an exact double

local now = server_us()
local cap = burst * unit
local level = 0
local state = limit_state('gcra', 'level', 'at', 'unit', 'drain')
if state then
  level = tonumber(state[2])
  local at = tonumber(state[3])
  if now < at then now = at end -- the server's clock stepped back: time stands still here
  local old_drain = tonumber(state[5])
  if tonumber(state[4]) ~= unit or old_drain ~= drain then
    -- another rate: keep how long the backlog takes to drain
    level = math.min(div_ceil(level, old_drain) * drain, kMaxLevel)
  end
  local drained = (now - at) * drain
  if drained >= level then level = 0 else level = level - drained end
end

local function left(l)
  if l >= cap then return 0 end
  return div_floor(cap - l, unit)
end
local function store(l)
  redis.call('HSET', key, 'algo', 'gcra', 'level', fmt(l), 'at', fmt(now), 'unit', fmt(unit),
    'drain', fmt(drain), 'burst', fmt(burst))
  redis.call('PEXPIRE', key, fmt(div_ceil(div_ceil(l, drain), 1000) + 1))
end

if cost > burst then
  return {0, burst, left(level), -1, div_ceil(level, drain), 0, now, 0, 0}
end
local after = level + cost * unit
if after <= cap then
  if peek then return {1, burst, left(level), 0, div_ceil(level, drain), 0, now, now, 0} end
  store(after)
  return {1, burst, left(after), 0, div_ceil(after, drain), 0, now, now, 0}
end
local retry = div_ceil(after - cap, drain)
if peek or max_wait < 0 or retry > max_wait or after > kMaxLevel then
  return {0, burst, left(level), retry, div_ceil(level, drain), 0, now, 0, 0}
end
store(after)
local at_due = math.max(0, after - retry * drain)
return {1, burst, left(at_due), 0, div_ceil(after, drain) - retry, retry, now, now + retry, 0}
