-- @no-writes
-- lock_status: who holds the lock, for how long, and its fence.
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash).
-- returns {token, fence, ttl_ms, 'exclusive', 0, held_ms, waiting, who, acquired_at, ended_at,
--          ended_ms, exit_code} held by a writer
--       | {'', last_fence, longest reader ttl_ms, 'shared', readers, -1, waiting, '', -1, -1, -1, -1,
--          token1, ttl_ms1, who1, acquired_at1, held_ms1, ended_at1, ended_ms1, exit_code1,
--          token2, ...} by readers (at most 100 listed)
--       | {'', last_fence, 0, '', 0, -1, waiting, '', -1, -1, -1, -1} free
-- held_ms: since the writer took it and acquired_at its server time (-1 when the take did not
-- record when: an older rcoord); who: what the taker packed ('' from an older rcoord);
-- waiting: writers and readers waiting for it (their heartbeat not yet run out); ended_at: when
-- the command of the `lock run` that holds it (or a reader's share) ended, kept by --min-hold
-- since (server ms; -1 while it is not), ended_ms how long ago that was, and exit_code its code
-- (-1 unknown).
-- @lib clock
-- @lib history
-- @lib lock
-- @lib holder
local holder, _, held = lock_holder()

-- Appends ended_at, ended_ms and exit_code of a take kept since its command ended at `at`
-- (nil: not kept) with `code`.
local function push_kept(out, at, code, now)
  at = tonumber(at or '')
  table.insert(out, at or -1)
  table.insert(out, at and math.max(0, now - at) or -1)
  table.insert(out, at and tonumber(code or '') or -1)
end

local now = server_ms()
local waiting = redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf') + redis.call('ZCOUNT', KEYS[6], '(' .. now, '+inf')
if holder then
  local at = tonumber(held[3] or '')
  local held_ms = at and math.max(0, now - at) or -1
  local out = {holder, tonumber(held[4]), redis.call('PTTL', KEYS[1]), 'exclusive', 0, held_ms,
               waiting, held[2] or '', at or -1}
  local kept = redis.call('HMGET', KEYS[1], 'ended_at', 'exit_code')
  push_kept(out, kept[1], kept[2], now)
  return out
end
local last_fence = tonumber(redis.call('GET', KEYS[2]) or '0')
local readers = redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
if readers > 0 then
  local live = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 100)
  local out = {'', last_fence, tonumber(live[#live]) - now, 'shared', readers, -1, waiting, '', -1,
               -1, -1, -1}
  if readers > 100 then
    local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
    out[3] = tonumber(last[2]) - now
  end
  for i = 1, #live, 2 do
    table.insert(out, live[i])
    table.insert(out, tonumber(live[i + 1]) - now)
    push_holder(out, KEYS[8], live[i], now)
    local ended_at, code = string.match(redis.call('HGET', KEYS[8], lock_kept_mark(live[i])) or '',
                                        '^(%d+)\31(.*)$')
    push_kept(out, ended_at, code, now)
  end
  return out
end
return {'', last_fence, 0, '', 0, -1, waiting, '', -1, -1, -1, -1}
