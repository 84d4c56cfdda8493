-- contention: the counters of a lock's, semaphore's or election's takes (SPEC §6 contention
-- you can see), kept by the take and renewal scripts themselves (spliced in by
-- cmake/EmbedLua.cmake), so that counting costs no round trip. They live in one hash beside
-- the object (`<object>:stats`, same hash tag), which `rcoord metrics` exports:
--   acquired   takes that got it
--   busy       calls that found it taken at their first try (they then waited, or gave up)
--   lost       renewals that found the lease gone (taken, broken, expired or flushed)
--   le:<ms>    takes that waited at most <ms> ms (and more than the bound before); le:inf
--   wait_ms    the waits of all takes, summed
-- A waiter's next tries pass the server time of its first try's busy answer (`since`), so
-- that the wait is reckoned on the server's clock, pipelined tries included.

-- The counters of an object no take has touched for this long are dropped.
local CONTENTION_LIFE_MS = 30 * 24 * 3600 * 1000

-- The histogram's upper bounds, in ms (0.005 s ... 60 s); above the last: le:inf.
local CONTENTION_BOUNDS_MS = {5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000}

-- Adds `n` to counter `field` of the counters hash `key`.
local function contention_add(key, field, n)
  redis.call('HINCRBY', key, field, n)
  redis.call('PEXPIRE', key, CONTENTION_LIFE_MS)
end

-- A take got it at `now` (server ms), its caller's first try answered busy at `since` (nil: this
-- was the first try).
local function contention_acquired(key, since, now)
  local waited = since and math.max(0, now - since) or 0
  local bucket = 'le:inf'
  for _, bound in ipairs(CONTENTION_BOUNDS_MS) do
    if waited <= bound then
      bucket = 'le:' .. bound
      break
    end
  end
  redis.call('HINCRBY', key, 'acquired', 1)
  redis.call('HINCRBY', key, bucket, 1)
  contention_add(key, 'wait_ms', waited)
end

-- A try was answered busy; it counts when it was its caller's first (`since` nil).
local function contention_busy(key, since)
  if not since then contention_add(key, 'busy', 1) end
end
