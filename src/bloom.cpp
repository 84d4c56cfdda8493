#include "bloom.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "reply.hpp"
#include "script.hpp"

namespace rcoord::bloom {
namespace {

std::uint64_t to_u64(const std::string& s, std::string_view field) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) {
    throw Error(kServer, fmt::format("bad bloom metadata field {}: '{}'", field, s),
                "the filter's hash was changed by hand; delete it and reserve it again");
  }
  return v;
}

std::int64_t to_i64(const std::string& s, std::string_view field) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) {
    throw Error(kServer, fmt::format("bad bloom metadata field {}: '{}'", field, s),
                "the filter's hash was changed by hand; delete it and reserve it again");
  }
  return v;
}

std::string format_rate(double p) { return fmt::format("{}", p); }

void check_options(const ReserveOptions& opts) {
  if (opts.capacity < 1) {
    throw Error(kUsage, "--capacity must be at least 1", "use e.g. --capacity 100000");
  }
  if (!(opts.error_rate > 0 && opts.error_rate < 1)) {
    throw Error(kUsage,
                fmt::format("bad --error-rate '{}': it must lie between 0 and 1", opts.error_rate),
                "use e.g. --error-rate 0.01 for 1%");
  }
  if (!opts.nonscaling && opts.expansion < 1) {
    throw Error(kUsage, "--expansion must be at least 1", "use e.g. --expansion 2");
  }
  Sizing s = size_for(opts.capacity, opts.error_rate);
  if (s.bits > kMaxBits) {
    throw Error(kUsage,
                fmt::format("a filter of {} items at error rate {} needs {} bits, more than one "
                            "Redis string holds (2^32 bits, 512 MiB)",
                            opts.capacity, format_rate(opts.error_rate), s.bits),
                "lower --capacity (it scales past it) or raise --error-rate");
  }
}

}  // namespace

std::string layer_key(const Keys& keys, std::string_view name, std::size_t layer) {
  return keys.aux(kType, name, std::to_string(layer));
}

Sizing size_for(std::uint64_t capacity, double error_rate) {
  // With k hashes and m bits, n items give a false-positive rate of (1 - e^(-kn/m))^k; it is
  // at most p when m >= -k n / ln(1 - p^(1/k)). Of the two whole k around the real optimum
  // log2(1/p), the one that needs fewer bits is taken, and m is sized for that k: the rate
  // holds exactly, not only for the real optimum (rounding k alone would miss it by up to
  // 12%, and every layer of a scalable filter would add its share).
  double n = static_cast<double>(std::max<std::uint64_t>(capacity, 1));
  double ideal = -std::log2(error_rate);
  Sizing best{~std::uint64_t{0}, 1};
  for (double k : {std::floor(ideal), std::ceil(ideal)}) {
    k = std::clamp(k, 1.0, 64.0);
    double m = std::ceil(-k * n / std::log1p(-std::pow(error_rate, 1.0 / k)));
    std::uint64_t bits = m < 1 ? 1 : (m > 1e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(m));
    if (bits < best.bits) best = {bits, static_cast<std::uint32_t>(k)};
  }
  return best;
}

Layer next_layer(const Meta& meta, std::size_t index) {
  Layer l;
  if (index >= kMaxLayers) return l;  // bits stays 0: the filter is full
  double cap = static_cast<double>(meta.capacity) *
               std::pow(static_cast<double>(meta.expansion), static_cast<double>(index));
  double p = meta.error_rate * std::pow(kTightening, static_cast<double>(index));
  if (cap > 1e15 || p <= 0) return l;  // bits stays 0: it may not grow
  l.capacity = static_cast<std::uint64_t>(cap);
  Sizing s = size_for(l.capacity, p);
  if (s.bits > kMaxBits) return l;
  l.bits = s.bits;
  l.hashes = s.hashes;
  return l;
}

bool read_meta(Connection& conn, const Keys& keys, std::string_view name, Meta& meta) {
  std::string key = keys.object(kType, name);
  auto replies = conn.pipeline({{"TYPE", key}, {"HGETALL", key}});
  return decode_meta(replies[0].get(), replies[1].get(), key, meta);
}

bool decode_meta(const redisReply* type, const redisReply* all, const std::string& key,
                 Meta& meta) {
  std::string kind = reply_string(type);
  if (kind == "none") return false;
  if (kind != "hash" || all->type != REDIS_REPLY_ARRAY) {
    throw foreign_key_error(key, fmt::format("a {} that is not an rcoord bloom filter", kind));
  }
  std::unordered_map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < all->elements; i += 2) {
    fields.emplace(reply_string(all->element[i]), reply_string(all->element[i + 1]));
  }
  auto get = [&](const std::string& f) -> const std::string* {
    auto it = fields.find(f);
    return it == fields.end() ? nullptr : &it->second;
  };
  const std::string* layers = get("layers");
  if (layers == nullptr) throw foreign_key_error(key, "a hash that is not an rcoord bloom filter");
  auto need = [&](const std::string& f) -> const std::string& {
    const std::string* v = get(f);
    if (v == nullptr) {
      throw Error(kServer, fmt::format("bloom filter {} lacks field {}", key, f),
                  "the filter's hash was changed by hand; delete it and reserve it again");
    }
    return *v;
  };
  if (const std::string* scheme = get("hash"); scheme != nullptr && *scheme != kHashScheme) {
    throw Error(kServer, fmt::format("bloom filter {} uses hash scheme '{}'", key, *scheme),
                fmt::format("this rcoord knows only '{}'", kHashScheme));
  }
  meta = Meta{};
  meta.capacity = to_u64(need("capacity"), "capacity");
  meta.error_rate = std::strtod(need("error_rate").c_str(), nullptr);
  // Sizing a new layer takes logarithms of it: NaN or a rate outside (0, 1) would make the
  // bit count undefined.
  if (!(meta.error_rate > 0 && meta.error_rate < 1)) {
    throw Error(kServer,
                fmt::format("bad bloom metadata field error_rate: '{}'", need("error_rate")),
                "the filter's hash was changed by hand; delete it and reserve it again");
  }
  meta.expansion = static_cast<std::uint32_t>(to_u64(need("expansion"), "expansion"));
  meta.items = to_i64(need("items"), "items");
  auto count = to_u64(*layers, "layers");
  // Versions before the layer cap let a filter grow one layer past it (then it could not be
  // read): such a filter stays readable, and takes no more items.
  if (count < 1 || count > kMaxLayers + 1) {
    throw Error(kServer, fmt::format("bloom filter {} has {} layers", key, count),
                "the filter's hash was changed by hand; delete it and reserve it again");
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string n = std::to_string(i);
    Layer l;
    l.capacity = to_u64(need("capacity:" + n), "capacity:" + n);
    l.bits = to_u64(need("bits:" + n), "bits:" + n);
    l.hashes = static_cast<std::uint32_t>(to_u64(need("hashes:" + n), "hashes:" + n));
    l.used = to_i64(need("used:" + n), "used:" + n);
    l.items = to_i64(need("items:" + n), "items:" + n);
    if (l.bits < 1 || l.bits > kMaxBits || l.hashes < 1 || l.hashes > 64) {
      throw Error(kServer, fmt::format("bloom filter {} has a bad layer {}", key, n),
                  "the filter's hash was changed by hand; delete it and reserve it again");
    }
    meta.layers.push_back(l);
  }
  return true;
}

Reserved reserve(Connection& conn, const Keys& keys, std::string_view name,
                 const ReserveOptions& opts) {
  check_name("bloom filter", name);
  check_options(opts);
  Sizing s = size_for(opts.capacity, opts.error_rate);
  Reply r = eval(
      conn, lua::kBloomCreate, {keys.object(kType, name), layer_key(keys, name, 0)},
      {std::to_string(opts.capacity), format_rate(opts.error_rate),
       std::to_string(opts.nonscaling ? 0 : opts.expansion), std::to_string(s.bits),
       std::to_string(s.hashes), std::string(kHashScheme), std::to_string(opts.expire.count())});
  Reserved out;
  out.name = std::string(name);
  out.reserved = reply_integer(r.get()) == 1;
  if (out.reserved) {
    out.capacity = opts.capacity;
    out.error_rate = opts.error_rate;
    out.bits = s.bits;
    out.hashes = s.hashes;
  } else {
    Meta m;
    if (read_meta(conn, keys, name, m)) {
      out.capacity = m.capacity;
      out.error_rate = m.error_rate;
      out.bits = m.layers.front().bits;
      out.hashes = m.layers.front().hashes;
    }
  }
  out.bytes = (out.bits + 7) / 8;
  return out;
}

Info info(Connection& conn, const Keys& keys, std::string_view name) {
  check_name("bloom filter", name);
  Meta m;
  if (!read_meta(conn, keys, name, m)) {
    Info out;
    out.name = std::string(name);
    return out;
  }
  auto replies = conn.pipeline(layer_commands(keys, name, m));
  return decode_info(keys, name, m, replies);
}

std::vector<Args> meta_commands(const Keys& keys, std::string_view name) {
  std::string key = keys.object(kType, name);
  return {{"TYPE", key}, {"HGETALL", key}};
}

std::vector<Args> layer_commands(const Keys& keys, std::string_view name, const Meta& meta) {
  std::vector<Args> cmds;
  for (std::size_t i = 0; i < meta.layers.size(); ++i) {
    std::string key = layer_key(keys, name, i);
    cmds.push_back({"BITCOUNT", key});
    cmds.push_back({"STRLEN", key});
  }
  cmds.push_back({"PTTL", keys.object(kType, name)});
  return cmds;
}

Info decode_info(const Keys& keys, std::string_view name, const Meta& m,
                 std::span<const Reply> replies) {
  if (replies.size() != 2 * m.layers.size() + 1) {
    throw Error(kServer, "unexpected replies to the bloom filter's BITCOUNT, STRLEN and PTTL");
  }
  Info out;
  out.name = std::string(name);
  out.exists = true;
  out.error_rate = m.error_rate;
  out.items = m.items;
  out.layers = static_cast<std::int64_t>(m.layers.size());
  out.expansion = m.expansion;
  out.nonscaling = m.expansion == 0;
  out.hashes = m.layers.back().hashes;
  // the last reply: the filter's PTTL (set by --expire)
  const Reply& pttl = replies.back();
  std::int64_t ttl = pttl->type == REDIS_REPLY_INTEGER ? pttl->integer : -1;
  out.expires_in_ms = ttl >= 0 ? ttl : -1;
  std::uint64_t ones = 0;
  double none_positive = 1.0;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    std::string key = layer_key(keys, name, i);
    check_key_reply(replies[2 * i], "BITCOUNT " + key, key);
    check_key_reply(replies[2 * i + 1], "STRLEN " + key, key);
    auto layer_ones = static_cast<std::uint64_t>(reply_integer(replies[2 * i].get()));
    const Layer& l = m.layers[i];
    out.capacity += l.capacity;
    out.bits += l.bits;
    out.bytes += static_cast<std::uint64_t>(reply_integer(replies[2 * i + 1].get()));
    ones += layer_ones;
    double fill = static_cast<double>(layer_ones) / static_cast<double>(l.bits);
    none_positive *= 1.0 - std::pow(fill, static_cast<double>(l.hashes));
  }
  out.fill_ratio = out.bits == 0 ? 0 : static_cast<double>(ones) / static_cast<double>(out.bits);
  out.estimated_error_rate = 1.0 - none_positive;
  return out;
}

bool bits_all_ones(const redisReply* r) { return bits_all_ones(r, 0, r->elements); }

bool bits_all_ones(const redisReply* r, std::size_t first, std::size_t count) {
  for (std::size_t i = first; i < first + count && i < r->elements; ++i) {
    if (r->element[i]->type != REDIS_REPLY_INTEGER || r->element[i]->integer == 0) return false;
  }
  return true;
}

std::array<std::int64_t, 4> decode_grant(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 4) {
    throw Error(kServer, "unexpected reply from the bloom_grant script");
  }
  return {reply_integer(r->element[0]), reply_integer(r->element[1]), reply_integer(r->element[2]),
          reply_integer(r->element[3])};
}

}  // namespace rcoord::bloom
