#!lua flags=no-writes
-- elect_status: who leads, in which term, for how much longer.
-- KEYS[1] leader hash {id, term}, KEYS[2] term counter
-- returns {id, term, ttl_ms} with a leader | {'', last_term, 0} without one
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  local counter = redis.call('TYPE', KEYS[2])['ok']
  if counter ~= 'none' and counter ~= 'string' then
    return redis.error_reply('WRONGTYPE key ' .. KEYS[2] .. ' holds a ' .. counter .. ' that is not an rcoord election')
  end
  return {'', tonumber(redis.call('GET', KEYS[2]) or '0') or 0, 0}
end
local leader = false
if kind == 'hash' then leader = redis.call('HGET', KEYS[1], 'id') end
if not leader then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord election')
end
return {leader, tonumber(redis.call('HGET', KEYS[1], 'term')), redis.call('PTTL', KEYS[1])}
