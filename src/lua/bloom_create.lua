-- bloom_create: reserve a new Bloom filter: its metadata and its first layer.
-- KEYS[1] metadata hash, KEYS[2] bitmap of layer 0 (same {hash tag})
-- ARGV[1] capacity, ARGV[2] error rate (text), ARGV[3] expansion (0: nonscaling),
-- ARGV[4] bits of layer 0, ARGV[5] hashes of layer 0, ARGV[6] hash scheme name,
-- ARGV[7] expiry in ms (0: the filter does not expire)
-- returns 1 when created | 0 when the filter exists already (nothing is changed)
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'hash' and redis.call('HEXISTS', KEYS[1], 'layers') == 1 then return 0 end
if kind ~= 'none' then refuse(1, 'a ' .. kind .. ' that is not an rcoord bloom filter') end
local layer_kind = redis.call('TYPE', KEYS[2])['ok']
if layer_kind ~= 'none' then
  refuse(2, 'a ' .. layer_kind .. ' where the filter keeps its first layer',
    'a layer without its metadata is not a filter: delete that key first')
end
redis.call('HSET', KEYS[1], 'capacity', ARGV[1], 'error_rate', ARGV[2], 'expansion', ARGV[3],
  'hash', ARGV[6], 'layers', 1, 'items', 0,
  'capacity:0', ARGV[1], 'bits:0', ARGV[4], 'hashes:0', ARGV[5], 'used:0', 0, 'items:0', 0)
-- Allocate the whole bitmap now: memory use is known from the start and never grows.
redis.call('SETBIT', KEYS[2], tonumber(ARGV[4]) - 1, 0)
expire_object(tonumber(ARGV[7]))
return 1
