-- @no-writes
-- queue_inflight: the messages in flight, soonest lease end first, with who leased them.
-- KEYS as every queue script (messages hash, ready list, delayed zset, in-flight zset, dead
-- zset, attempts hash, wake list, id counter, consumers hash).
-- ARGV[1] count
-- returns {id, message, attempt, lease_ms, who, leased_at, held_ms, ...}: lease_ms left of the
-- lease (0 when it ran out and is reclaimed by the next pop), who '' and the times -1 for a
-- message an older rcoord leased
-- @lib clock
-- @lib history
-- @lib queue
-- @lib holder
check_queue_keys()
local now = server_ms()
local out = {}
local leased = redis.call('ZRANGE', KEYS[4], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #leased, 2 do
  local id = leased[i]
  local message = redis.call('HGET', KEYS[1], id)
  if message then
    out[#out + 1] = id
    out[#out + 1] = message
    out[#out + 1] = (attempts_of(id))
    out[#out + 1] = math.max(0, tonumber(leased[i + 1]) - now)
    push_holder(out, KEYS[9], id, now)
  end
end
return out
