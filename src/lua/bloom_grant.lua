-- bloom_grant: settle a finished batch of adds, then grant slots of the newest layer for
-- the next batch, adding a layer when the newest one is full (scalable filters).
-- A slot is one item a writer may add to a layer: `used:N` counts granted slots, so writers
-- together never put more than `capacity:N` items into layer N; slots a batch did not need
-- (items already present) are given back when it is settled.
-- KEYS[1] metadata hash, KEYS[2] bitmap of the layer ARGV[5] would create, KEYS[3] bitmap of
-- the newest layer the caller knows (ARGV[5] - 1) (same {hash tag})
-- ARGV[1] layer to settle (-1: none), ARGV[2] slots given back, ARGV[3] items added there
-- ARGV[4] slots wanted (0: settle only)
-- ARGV[5] index of the next layer as the caller knows it (its layer count), ARGV[6] its
-- capacity, ARGV[7] its bits (0: the filter may not grow), ARGV[8] its hashes
-- returns {status, layer, granted, layers}; status 1 granted (granted may be less than
-- wanted), 0 full (nonscaling, or it may not grow), -1 stale (the caller's layer count is
-- out of date: re-read the metadata and retry), -2 no such filter
-- A new layer ends when the filter's other keys do (bloom add --expire, bloom reserve --expire).
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  -- The filter expired or was removed while a writer set bits: a BITFIELD sent before this
  -- script may have made its layer again, without metadata or expiry. Nothing may keep it.
  for i = 2, 3 do
    if redis.call('TYPE', KEYS[i])['ok'] == 'string' then redis.call('DEL', KEYS[i]) end
  end
  return {-2, 0, 0, 0}
end
if kind ~= 'hash' or redis.call('HEXISTS', KEYS[1], 'layers') == 0 then
  refuse(1, 'a ' .. kind .. ' that is not an rcoord bloom filter')
end
local layers = tonumber(redis.call('HGET', KEYS[1], 'layers'))
-- Slots are granted in the newest layer: refused, before anything changes, when its key holds
-- someone else's data (checked when the caller knows that layer, as it nearly always does).
if tonumber(ARGV[5]) == layers then check_types({false, false, 'string'}) end
local settle = tonumber(ARGV[1])
if settle >= 0 then
  local back = tonumber(ARGV[2])
  local added = tonumber(ARGV[3])
  if back ~= 0 then redis.call('HINCRBY', KEYS[1], 'used:' .. settle, -back) end
  if added ~= 0 then
    redis.call('HINCRBY', KEYS[1], 'items:' .. settle, added)
    redis.call('HINCRBY', KEYS[1], 'items', added)
  end
end
local layer = layers - 1
local want = tonumber(ARGV[4])
if want <= 0 then return {1, layer, 0, layers} end
local room = tonumber(redis.call('HGET', KEYS[1], 'capacity:' .. layer)) -
  tonumber(redis.call('HGET', KEYS[1], 'used:' .. layer))
if room <= 0 then
  if tonumber(redis.call('HGET', KEYS[1], 'expansion')) == 0 then return {0, layer, 0, layers} end
  if tonumber(ARGV[5]) ~= layers then return {-1, layer, 0, layers} end
  if tonumber(ARGV[7]) == 0 then return {0, layer, 0, layers} end
  local layer_kind = redis.call('TYPE', KEYS[2])['ok']
  if layer_kind ~= 'none' then
    refuse(2, 'a ' .. layer_kind .. ' where the filter would put its next layer',
      'a layer without its metadata is not part of the filter: delete that key first')
  end
  layer = layers
  layers = layers + 1
  redis.call('HSET', KEYS[1], 'capacity:' .. layer, ARGV[6], 'bits:' .. layer, ARGV[7],
    'hashes:' .. layer, ARGV[8], 'used:' .. layer, 0, 'items:' .. layer, 0, 'layers', layers)
  redis.call('SETBIT', KEYS[2], tonumber(ARGV[7]) - 1, 0)
  expire_object(0)
  room = tonumber(ARGV[6])
end
local granted = math.min(want, room)
redis.call('HINCRBY', KEYS[1], 'used:' .. layer, granted)
return {1, layer, granted, layers}
