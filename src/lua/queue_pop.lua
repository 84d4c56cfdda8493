-- queue_pop: move what is due back to ready, then hand out up to ARGV[1] ready messages.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] count, ARGV[2] '1': newest first (LIFO), ARGV[3] lease ms (0: plain pop, the
-- message is deleted as it is handed out), ARGV[4] max deliveries per message, ARGV[5] '1':
-- the caller blocks next when this finds nothing (it then owns the wake-up it consumes),
-- ARGV[6] who leases them (src/identity.hpp's pack(); kept while they are in flight), ARGV[7]
-- events the history keeps (0: none recorded)
-- returns {next_ms, id, message, attempt, id, message, attempt, ...}; next_ms is 0 when more
-- is ready now, else the ms until the next delayed message or lease is due, -1 if none is
-- @lib clock
-- @lib history
-- @lib queue
-- @lib holder
check_queue_keys()
local now = server_ms()

local count = tonumber(ARGV[1])
local lease = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local cap = tonumber(ARGV[7] or '0')
promote(now, cap)
local before = earliest()
local out = {0}
local handed = 0
local granted = false
-- A message delivered max times already goes to the dead set instead; bound that work too.
local budget = count + 100
while handed < count and budget > 0 do
  budget = budget - 1
  local id
  if ARGV[2] == '1' then
    id = redis.call('RPOP', KEYS[2])
  else
    id = redis.call('LPOP', KEYS[2])
  end
  if not id then break end
  local message = redis.call('HGET', KEYS[1], id)
  if message then
    local n = attempts_of(id)
    if n >= max then
      bury(id, now, cap, ARGV[6], n)
    else
      if lease > 0 then
        redis.call('HSET', KEYS[6], id, (n + 1) .. '/' .. max)
        redis.call('ZADD', KEYS[4], now + lease, id)
        redis.call('HSET', KEYS[9], id, holder_record(ARGV[6], now))
        granted = true
      else
        redis.call('HDEL', KEYS[1], id)
        redis.call('HDEL', KEYS[6], id)
      end
      handed = handed + 1
      out[#out + 1] = id
      out[#out + 1] = message
      out[#out + 1] = n + 1
    end
  end
end

local ready = redis.call('LLEN', KEYS[2])
if ready > 0 or (granted and (not before or now + lease < before)) then
  -- Others may take what is left; a new lease that ends before anything else is due must
  -- shorten the sleep of blocked poppers, or they would miss its expiry.
  wake()
elseif ARGV[5] == '1' then
  -- This caller knows everything pending now; a stale wake-up would only spin it.
  redis.call('DEL', KEYS[7])
end
if ready == 0 then
  local first = earliest()
  if first then out[1] = math.max(0, first - now) else out[1] = -1 end
end
return out
