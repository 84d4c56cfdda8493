-- limit_fixed_window: one fixed-window decision: a check, a peek, or the reservation of
-- `limit wait`.
-- Time is cut into back-to-back windows of window_us (burst / rate), each allowing `burst`
-- cost. The first window starts at the first request (and again at the first request after
-- every window has ended), so from any window's start the allowed cost stays within
-- burst + rate * span, as for the other algorithms. The hash counts the cost per window
-- (field n:<window start in µs>); a reservation counts in the first later window with room.
-- KEYS[1] state hash {algo, window, anchor, at, burst, n:<start>...}; KEYS[2] unused. The
-- burst is kept for `ls`, which peeks with the parameters last used.
-- ARGV[1] unit (unused), ARGV[2] drain (unused), ARGV[3] burst, ARGV[4] cost,
-- ARGV[5] window_us, ARGV[6] max_wait_us (< 0: no reservation), ARGV[7] peek ('1': change
-- nothing), ARGV[8] member (unused)
-- returns {allowed, limit, remaining, retry_after_us (-1: never), reset_after_us, wait_us,
--          now_us, due_us, slot (the window start the request counts in)}
-- @lib clock
-- @lib limit
local key = KEYS[1]
local burst, cost, window = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local max_wait, peek = tonumber(ARGV[6]), ARGV[7] == '1'

local now = server_us()
local counts = {} -- window start -> cost counted in it
local rewrite = false
local anchor = nil -- the start of some window: all windows are anchor + k * window
local state = limit_state('fixed-window', 'window', 'at', 'anchor')
if state then
  local old_window, at = tonumber(state[2]), tonumber(state[3])
  if now < at then now = at end -- the server's clock stepped back: time stands still here
  if old_window == window then anchor = tonumber(state[4]) else anchor = now end
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    local start = tonumber(string.match(fields[i], '^n:(%d+)$') or '')
    if start then
      local n = tonumber(fields[i + 1])
      if start + old_window <= now then
        rewrite = true -- a window that has ended
      else
        if old_window ~= window then
          -- another window length: windows start anew now, and what the old ones counted
          -- counts in the new window that holds it
          start = now + div_floor(math.max(start, now) - now, window) * window
          rewrite = true
        end
        counts[start] = (counts[start] or 0) + n
      end
    end
  end
end

if next(counts) == nil then anchor = now end -- nothing live: a window starts now
local current = anchor + div_floor(now - anchor, window) * window
-- Until the last window with anything counted in it ends, from `from`.
local function reset_from(from)
  local last = nil
  for start, n in pairs(counts) do
    if n > 0 and (not last or start > last) then last = start end
  end
  if not last then return 0 end
  return math.max(0, last + window - from)
end
local function store(start)
  counts[start] = (counts[start] or 0) + cost
  if rewrite then redis.call('DEL', key) end
  local args = {'algo', 'fixed-window', 'window', fmt(window), 'anchor', fmt(anchor), 'at', fmt(now),
    'burst', fmt(burst)}
  for s, n in pairs(counts) do
    args[#args + 1] = 'n:' .. fmt(s)
    args[#args + 1] = fmt(n)
  end
  redis.call('HSET', key, unpack(args))
  redis.call('PEXPIRE', key, fmt(math.floor(reset_from(now) / 1000) + 2))
end

local used = counts[current] or 0
if cost > burst then
  return {0, burst, math.max(0, burst - used), -1, reset_from(now), 0, now, 0, 0}
end
if used + cost <= burst then
  if peek then return {1, burst, burst - used, 0, reset_from(now), 0, now, now, current} end
  store(current)
  return {1, burst, burst - used - cost, 0, reset_from(now), 0, now, now, current}
end
-- The first later window with room: past the last reserved one at the latest.
local start = current + window
while (counts[start] or 0) + cost > burst do start = start + window end
local retry = start - now
if peek or max_wait < 0 or retry > max_wait then
  return {0, burst, math.max(0, burst - used), retry, reset_from(now), 0, now, 0, 0}
end
store(start)
return {1, burst, burst - counts[start], 0, reset_from(start), retry, now, start, start}
