-- limit_sliding_window: one exact sliding-window decision: a check, a peek, or the
-- reservation of `limit wait`.
-- The log holds one entry per allowed request, `id:cost` scored by its server time (µs);
-- a request fits while the cost of the entries younger than the window, plus its own, stays
-- within the burst. Denied requests are not recorded, so the log never holds more than the
-- burst (plus the reservations of waiting callers). A reservation is an entry at the future
-- time at which enough older entries will have left the window.
-- KEYS[1] state hash {algo, sum, at, burst, window}, KEYS[2] log sorted set (same hash tag).
-- The burst and window are kept for `ls`, which peeks with the parameters last used.
-- ARGV[1] unit (unused), ARGV[2] drain (unused), ARGV[3] burst, ARGV[4] cost,
-- ARGV[5] window_us, ARGV[6] max_wait_us (< 0: no reservation), ARGV[7] peek ('1': change
-- nothing), ARGV[8] member id (unique per request)
-- returns {allowed, limit, remaining, retry_after_us (-1: never), reset_after_us, wait_us,
--          now_us, due_us, slot (0)}
-- @lib clock
-- @lib limit
local key, log = KEYS[1], KEYS[2]
local burst, cost, window = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local max_wait, peek = tonumber(ARGV[6]), ARGV[7] == '1'
local member = ARGV[8] .. ':' .. ARGV[4]

local function cost_of(entry) return tonumber(string.match(entry, ':(%d+)$')) end

local now = server_us()
local sum = 0
local state = limit_state('sliding-window', 'sum', 'at')
if state then
  sum = tonumber(state[2])
  local at = tonumber(state[3])
  if now < at then now = at end -- the server's clock stepped back: time stands still here
end
local log_kind = redis.call('TYPE', log)['ok']
if log_kind == 'none' then
  sum = 0
elseif log_kind == 'zset' and not state then
  for _, e in ipairs(redis.call('ZRANGE', log, 0, -1)) do sum = sum + cost_of(e) end
elseif log_kind ~= 'zset' then
  refuse(2, 'a ' .. log_kind .. ', not the zset rcoord keeps there')
end

-- Entries at or before now - window have left the window.
local edge = now - window
if sum > 0 then
  local expired = redis.call('ZRANGEBYSCORE', log, '-inf', fmt(edge))
  for _, e in ipairs(expired) do sum = sum - cost_of(e) end
  if #expired > 0 and not peek then
    redis.call('ZREMRANGEBYSCORE', log, '-inf', fmt(edge))
    redis.call('HSET', key, 'algo', 'sliding-window', 'sum', fmt(sum), 'at', fmt(now),
      'burst', fmt(burst), 'window', fmt(window))
    if not state then redis.call('PEXPIRE', key, math.max(1, redis.call('PTTL', log))) end
  end
end

-- Until the youngest entry leaves the window, from `from`.
local function reset_from(from)
  local newest = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
  if #newest == 0 then return 0 end
  local score = tonumber(newest[2])
  if score <= edge then return 0 end -- only expired entries (a peek did not remove them)
  return math.max(0, score + window - from)
end
local function store(score)
  redis.call('ZADD', log, fmt(score), member)
  sum = sum + cost
  redis.call('HSET', key, 'algo', 'sliding-window', 'sum', fmt(sum), 'at', fmt(now),
    'burst', fmt(burst), 'window', fmt(window))
  local ttl = math.floor(reset_from(now) / 1000) + 2
  redis.call('PEXPIRE', key, fmt(ttl))
  redis.call('PEXPIRE', log, fmt(ttl))
end

if cost > burst then
  return {0, burst, math.max(0, burst - sum), -1, reset_from(now), 0, now, 0, 0}
end
if sum + cost <= burst then
  if not peek then store(now) end -- a peek reports what is left now
  return {1, burst, burst - sum, 0, reset_from(now), 0, now, now, 0}
end

-- Walk the oldest live entries until enough cost has left: each costs at least 1, so at
-- most `need` of them.
local need = sum + cost - burst
local oldest = redis.call('ZRANGEBYSCORE', log, '(' .. fmt(edge), '+inf', 'WITHSCORES', 'LIMIT', 0, need)
local freed, leaves = 0, nil
for i = 1, #oldest, 2 do
  freed = freed + cost_of(oldest[i])
  if freed >= need then
    leaves = tonumber(oldest[i + 1])
    break
  end
end
if not leaves then leaves = now end -- the log was changed by hand: retry after one window
local due = leaves + window
local retry = due - now
if peek or max_wait < 0 or retry > max_wait then
  return {0, burst, math.max(0, burst - sum), retry, reset_from(now), 0, now, 0, 0}
end
-- what is still in the window at `due`, with this request
local gone = 0
for _, e in ipairs(redis.call('ZRANGEBYSCORE', log, '(' .. fmt(edge), fmt(leaves))) do
  gone = gone + cost_of(e)
end
store(due)
return {1, burst, burst - (sum - gone), 0, reset_from(due), retry, now, due, 0}
