-- clock: the server's time, for the scripts that read it (spliced in by cmake/EmbedLua.cmake).
-- Every client of a server shares its clock, while the clocks of the clients' machines may
-- disagree: deadlines, leases and rates are all reckoned in the server's TIME.

-- Milliseconds since the epoch, by the server's clock.
local function server_ms()
  local clock = redis.call('TIME')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

-- Microseconds since the epoch, by the server's clock (the rate limits count in µs).
local function server_us()
  local clock = redis.call('TIME')
  return tonumber(clock[1]) * 1000000 + tonumber(clock[2])
end
