-- fence: the numbers that order holders, a lock's fences and an election's terms (spliced in
-- by cmake/EmbedLua.cmake, after lib/clock.lua). A counter only counting up by one would hand
-- out, after a failover to a replica that missed its last writes, numbers the old master
-- already gave: a fenced store would then take a stale holder's writes. Taking the next
-- number as at least the server's clock in microseconds puts every number given after a
-- failover (which takes far longer than the clocks of two servers disagree) above those
-- given before, replicated or not, while one server still counts strictly up. A counter of
-- an older rcoord (small numbers) simply jumps up to the clock: no migration.
-- Values stay below 2^53 (the year 2255 in µs), where a Lua number is an exact integer.

-- The number to hand out, given `counted`, the counter KEYS[i] just INCRed (the INCR stays in
-- the script, so that a counter changed by hand is named in the error): the larger of it, the
-- server's clock in µs and `floor` (a Redlock's proposal, or nil), which the counter is then
-- set to. The nodes of a Redlock each answer with their own clock, so their fences would
-- never agree; the client proposes one number a little ahead of every clock, so that they
-- all answer it and the raise to the highest (lock_fence_raise) is needed only when one
-- node's clock or counter is ahead of the proposal.
local function fence_after(i, counted, floor)
  local now = math.max(server_us(), floor or 0)
  if counted >= now then return counted end
  redis.call('SET', KEYS[i], now)
  return now
end

-- A fence or term as text (concatenated into a message): Lua's tostring writes 1.7e+15.
local function fence_text(n)
  return string.format('%.0f', n)
end
