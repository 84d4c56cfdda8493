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
#include "token.hpp"

namespace rcoord::bloom {
namespace {

constexpr std::string_view kType = "bloom";
// Slots asked for ahead of the next batch: the batch size of the command layer.
constexpr auto kGrantAhead = static_cast<std::int64_t>(kBatchSize);
// Bit reads in one pipelined write of tests. A batch of items against one layer stays one
// write; against a filter of many layers (up to 64, each with more hashes than the last) a
// whole batch would be tens of megabytes, more than a busy server reads within --timeout,
// so it goes out in pieces of about this many reads.
constexpr std::size_t kMaxReadsPerWrite = std::size_t{1} << 17;

// How many items whose bits are read in layers [from, to) of `layers` go in one write.
std::size_t items_per_write(const std::vector<Layer>& layers, std::size_t from, std::size_t to) {
  std::size_t reads = 0;
  for (std::size_t i = from; i < to; ++i) reads += layers[i].hashes;
  return std::max<std::size_t>(1, kMaxReadsPerWrite / std::max<std::size_t>(1, reads));
}

std::string layer_key(const Keys& keys, std::string_view name, std::size_t layer) {
  return keys.aux(kType, name, std::to_string(layer));
}

// `v` as a bulk string of its decimal digits, without a temporary string.
void append_uint(std::string& out, std::uint64_t v) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof(digits), v).ptr;
  append_bulk(out, {digits, static_cast<std::size_t>(end - digits)});
}

// `*N\r\n$8\r\nBITFIELD\r\n$len\r\nkey\r\n` for `ops` operations (SET u1 POS 1, or
// GET u1 POS for BITFIELD_RO).
void append_header(std::string& out, std::string_view verb, std::string_view key,
                   std::uint32_t ops) {
  std::uint64_t per_op = verb == "BITFIELD" ? 4 : 3;
  append_array_header(out, 2 + per_op * ops);
  append_bulk(out, verb);
  append_bulk(out, key);
}

[[noreturn]] void reply_failed(Connection& conn, const redisReply* r, std::string_view key) {
  std::string msg(r->str, r->len);
  conn.close();  // replies of the rest of the batch are still on the way
  if (msg.rfind("WRONGTYPE", 0) == 0) {
    throw foreign_key_error(key, "another type than the string of a bloom filter's layer");
  }
  throw Error(kServer, fmt::format("BITFIELD on {} failed: {}", key, msg));
}

// A BITFIELD reply is an array of as many bits as the command read or set; anything else is
// the server refusing it (another type at the key) or not a reply to it.
void check_bitfield_reply(Connection& conn, const Reply& r, std::string_view key,
                          std::size_t bits) {
  if (r->type == REDIS_REPLY_ERROR) reply_failed(conn, r.get(), key);
  if (r->type != REDIS_REPLY_ARRAY || r->elements != bits) {
    conn.close();
    throw Error(kServer, fmt::format("unexpected reply to BITFIELD on {}", key));
  }
}

// `count` items' bits in one layer, kItemsPerBitfield items to a BITFIELD (`set`: SET u1 POS 1
// for adds) or BITFIELD_RO (GET u1 POS for tests); hash_of(i) is item i's hash.
template <typename HashOf>
void append_bitfields(std::string& out, bool set, std::string_view key, const Layer& l,
                      std::size_t count, HashOf hash_of) {
  for (std::size_t first = 0; first < count; first += kItemsPerBitfield) {
    std::size_t last = std::min(count, first + kItemsPerBitfield);
    append_header(out, set ? "BITFIELD" : "BITFIELD_RO", key,
                  l.hashes * static_cast<std::uint32_t>(last - first));
    for (std::size_t i = first; i < last; ++i) {
      for_each_position(hash_of(i), l.bits, l.hashes, [&](std::uint64_t pos) {
        out += set ? "$3\r\nSET\r\n$2\r\nu1\r\n" : "$3\r\nGET\r\n$2\r\nu1\r\n";
        append_uint(out, pos);
        if (set) out += "$1\r\n1\r\n";
      });
    }
  }
}

// Reads the replies to append_bitfields(count) and calls seen(i, all_ones) for each item:
// whether all of item i's bits were 1 before (set) or are 1 (get).
template <typename Seen>
void read_bitfields(Connection& conn, std::string_view key, const Layer& l, std::size_t count,
                    Seen seen) {
  for (std::size_t first = 0; first < count; first += kItemsPerBitfield) {
    std::size_t last = std::min(count, first + kItemsPerBitfield);
    Reply r = conn.receive();
    check_bitfield_reply(conn, r, key, l.hashes * (last - first));
    for (std::size_t i = first; i < last; ++i) {
      seen(i, bits_all_ones(r.get(), (i - first) * l.hashes, l.hashes));
    }
  }
}

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

// ---------------------------------------------------------------------------------------
// Adder

Adder::Adder(Connection& conn, const Keys& keys, std::string_view name, Millis expire)
    : conn_(conn), keys_(keys), name_(name), meta_key_(keys.object(kType, name)), expire_(expire) {
  check_name("bloom filter", name);
  scratch_key_ = keys.aux(kType, name, "scratch:" + random_token());
}

Adder::~Adder() {
  // An exception left replies unread: the socket cannot be reused.
  if (flight_.in_flight || grant_in_flight_) conn_.close();
}

void Adder::refresh() {
  if (!read_meta(conn_, keys_, name_, meta_)) {
    throw Error(kServer, fmt::format("bloom filter '{}' was deleted while items were added", name_),
                "add the items again");
  }
}

void Adder::load() {
  if (loaded_) return;
  if (!read_meta(conn_, keys_, name_, meta_)) {
    ReserveOptions defaults;
    defaults.expire = expire_;               // born with its expiry: never a moment without
    reserve(conn_, keys_, name_, defaults);  // or another writer created it just now
    refresh();
  }
  loaded_ = true;
}

// Every key of the filter gets the expiry again, the layers other writers added meanwhile
// included: the script refuses a layer count other than the one it is given.
void Adder::expire_all() {
  for (int attempt = 0; attempt < 100; ++attempt) {
    Args script_keys{meta_key_};
    for (std::size_t i = 0; i < meta_.layers.size(); ++i) {
      script_keys.push_back(layer_key(keys_, name_, i));
    }
    Reply r = eval(conn_, lua::kBloomExpire, script_keys, {std::to_string(expire_.count())});
    std::int64_t layers = reply_integer(r.get());
    if (layers == static_cast<std::int64_t>(meta_.layers.size())) return;
    refresh();  // throws when the filter is gone
  }
  throw Error(kServer,
              fmt::format("bloom filter '{}' keeps growing: its expiry was not set", name_),
              "add the items again with --expire");
}

void Adder::format_sets(const Batch& b, std::size_t begin, std::size_t end, std::int64_t layer,
                        std::string& out) const {
  const Layer& l = meta_.layers[static_cast<std::size_t>(layer)];
  std::string key = layer_key(keys_, name_, static_cast<std::size_t>(layer));
  out.clear();
  append_bitfields(out, true, key, l, end - begin,
                   [&](std::size_t i) { return b.hashes[begin + i]; });
}

std::string Adder::grant_command(std::int64_t want) {
  std::size_t next = meta_.layers.size();
  Layer l = next_layer(meta_, next);
  grant_keys_ = {meta_key_, layer_key(keys_, name_, next), layer_key(keys_, name_, next - 1)};
  Args args{"EVALSHA",
            std::string(lua::kBloomGrant.sha1),
            "3",
            grant_keys_[0],
            grant_keys_[1],
            grant_keys_[2],
            std::to_string(settle_layer_),
            std::to_string(settle_back_),
            std::to_string(settle_added_),
            std::to_string(want),
            std::to_string(next),
            std::to_string(l.capacity),
            std::to_string(l.bits),
            std::to_string(l.hashes)};
  carried_ = {settle_layer_, settle_back_, settle_added_};
  settle_layer_ = -1;
  settle_back_ = 0;
  settle_added_ = 0;
  std::string out;
  append_command(out, args);
  return out;
}

Adder::Grant Adder::parse_grant(const Reply& r) {
  if (r->type == REDIS_REPLY_ERROR && std::string_view(r->str, r->len).rfind("NOSCRIPT", 0) == 0) {
    // The script cache was flushed: keep the settlement it carried for the next EVAL.
    settle(carried_[0], carried_[1], carried_[2]);
    carried_ = {-1, 0, 0};
    return Grant{};
  }
  if (r->type == REDIS_REPLY_ERROR) {
    conn_.close();
    throw script_error(std::string_view(r->str, r->len), lua::kBloomGrant, grant_keys_);
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 4) {
    conn_.close();
    throw Error(kServer, "unexpected reply from the bloom_grant script");
  }
  Grant g;
  g.valid = true;
  auto values = decode_grant(r.get());
  g.status = values[0];
  g.layer = values[1];
  g.granted = values[2];
  g.layers = values[3];
  if (g.status == -2) {
    throw Error(kServer, fmt::format("bloom filter '{}' was deleted while items were added", name_),
                "add the items again");
  }
  return g;
}

Adder::Grant Adder::grant_now(std::int64_t want) {
  // EVAL with the body when the server lost its script cache (restart, SCRIPT FLUSH).
  std::size_t next = meta_.layers.size();
  Layer l = next_layer(meta_, next);
  grant_keys_ = {meta_key_, layer_key(keys_, name_, next), layer_key(keys_, name_, next - 1)};
  Reply r = eval(conn_, lua::kBloomGrant, grant_keys_,
                 {std::to_string(settle_layer_), std::to_string(settle_back_),
                  std::to_string(settle_added_), std::to_string(want), std::to_string(next),
                  std::to_string(l.capacity), std::to_string(l.bits), std::to_string(l.hashes)});
  settle_layer_ = -1;
  settle_back_ = 0;
  settle_added_ = 0;
  Grant g = parse_grant(r);
  if (g.layers != static_cast<std::int64_t>(meta_.layers.size())) refresh();
  return g;
}

void Adder::settle(std::int64_t layer, std::int64_t back, std::int64_t added) {
  if (back == 0 && added == 0) return;
  if (settle_layer_ >= 0 && settle_layer_ != layer) flush_settlement();
  settle_layer_ = layer;
  settle_back_ += back;
  settle_added_ += added;
}

void Adder::flush_settlement() {
  if (settle_layer_ < 0) return;
  grant_now(0);
}

void Adder::complete(Batch& b) {
  if (!b.in_flight) return;
  auto layer = static_cast<std::size_t>(b.layer);
  std::int64_t added = 0;
  read_bitfields(conn_, layer_key(keys_, name_, layer), meta_.layers[layer], b.results.size(),
                 [&](std::size_t i, bool was_set) {
                   b.results[i].yes = !was_set;
                   added += was_set ? 0 : 1;
                 });
  b.in_flight = false;
  settle(b.layer, b.granted - added, added);
}

void Adder::test_layers(Batch& b, std::vector<std::size_t>& candidates, std::size_t from,
                        std::size_t to) {
  if (from >= to || candidates.empty()) return;
  std::vector<std::size_t> absent;
  std::size_t per_write = items_per_write(meta_.layers, from, to);
  for (std::size_t first = 0; first < candidates.size(); first += per_write) {
    std::size_t last = std::min(candidates.size(), first + per_write);
    auto hash_of = [&](std::size_t i) { return b.hashes[candidates[first + i]]; };
    out_.clear();
    for (std::size_t layer = from; layer < to; ++layer) {
      append_bitfields(out_, false, layer_key(keys_, name_, layer), meta_.layers[layer],
                       last - first, hash_of);
    }
    conn_.send_formatted(out_);
    std::vector<char> found(last - first, 0);
    for (std::size_t layer = from; layer < to; ++layer) {
      read_bitfields(conn_, layer_key(keys_, name_, layer), meta_.layers[layer], last - first,
                     [&](std::size_t i, bool ones) {
                       if (ones) found[i] = 1;
                     });
    }
    for (std::size_t i = first; i < last; ++i) {
      if (found[i - first] == 0) absent.push_back(candidates[i]);
    }
  }
  candidates.swap(absent);
}

// The general case, one round trip at a time: a filter with several layers (an item present
// in an older layer is not added again), a layer running full, a nonscaling filter full.
void Adder::slow_path(Batch& b) {
  std::vector<std::size_t> candidates(b.results.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i] = i;
  std::size_t tested = 0;  // layers [0, tested) have been tested for every candidate
  while (!candidates.empty()) {
    std::size_t newest = meta_.layers.size() - 1;
    test_layers(b, candidates, tested, newest);
    tested = std::max(tested, newest);
    if (candidates.empty()) break;
    Grant g = grant_now(static_cast<std::int64_t>(candidates.size()));
    if (g.status == -1) continue;  // layers changed under us: re-read (done), test, retry
    auto layer = static_cast<std::size_t>(g.layer);
    if (g.status == 0) {
      // Full: what is present already is not refused.
      test_layers(b, candidates, tested, layer + 1);
      for (std::size_t c : candidates) b.results[c].full = true;
      break;
    }
    test_layers(b, candidates, tested, layer);  // layers added by other writers meanwhile
    tested = std::max(tested, layer);
    std::size_t take = std::min(candidates.size(), static_cast<std::size_t>(g.granted));
    out_.clear();
    const Layer& l = meta_.layers[layer];
    std::string key = layer_key(keys_, name_, layer);
    append_bitfields(out_, true, key, l, take,
                     [&](std::size_t i) { return b.hashes[candidates[i]]; });
    if (take > 0) conn_.send_formatted(out_);
    std::int64_t added = 0;
    read_bitfields(conn_, key, l, take, [&](std::size_t i, bool was_set) {
      b.results[candidates[i]].yes = !was_set;
      added += was_set ? 0 : 1;
    });
    settle(g.layer, g.granted - added, added);
    candidates.erase(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(take));
  }
}

namespace {

std::size_t bitmap_bytes(const Layer& l) { return static_cast<std::size_t>((l.bits + 7) / 8); }

// Bit `pos` of a bitmap as SETBIT counts: bit 0 is the most significant bit of byte 0. Bits
// past the end of the string are 0 (a layer GET read shorter, or missing).
bool bit_at(std::string_view bitmap, std::uint64_t pos) {
  return pos / 8 < bitmap.size() &&
         (static_cast<unsigned char>(bitmap[pos / 8]) & (0x80u >> (pos % 8))) != 0;
}
void set_bit(std::string& bitmap, std::uint64_t pos) {
  bitmap[pos / 8] =
      static_cast<char>(static_cast<unsigned char>(bitmap[pos / 8]) | (0x80u >> (pos % 8)));
}

std::size_t total_bytes(const std::vector<Layer>& layers) {
  std::size_t bytes = 0;
  for (const auto& l : layers) bytes += bitmap_bytes(l);
  return bytes;
}

std::size_t total_hashes(const std::vector<Layer>& layers) {
  std::size_t hashes = 0;
  for (const auto& l : layers) hashes += l.hashes;
  return hashes;
}

// Whether every bit of the item with hash `h` is set in `bitmap`, a layer `l` as GET read it
// (a missing layer holds nothing).
bool all_bits_set(const redisReply* bitmap, const Hash128& h, const Layer& l) {
  if (bitmap->type != REDIS_REPLY_STRING) return false;
  std::string_view bits(bitmap->str, bitmap->len);
  bool all_set = true;
  for_each_position(h, l.bits, l.hashes, [&](std::uint64_t pos) {
    if (!bit_at(bits, pos)) all_set = false;
  });
  return all_set;
}

// The layers at `keys`, read whole (GET, pipelined); one that holds another type is refused.
std::vector<Reply> read_layers(Connection& conn, const std::vector<std::string>& keys) {
  std::vector<Args> gets;
  gets.reserve(keys.size());
  for (const auto& key : keys) gets.push_back({"GET", key});
  std::vector<Reply> bitmaps = conn.pipeline(gets);
  for (std::size_t i = 0; i < bitmaps.size(); ++i) {
    if (bitmaps[i]->type == REDIS_REPLY_ERROR) {
      throw foreign_key_error(keys[i], "another type than the string of a bloom filter's layer");
    }
  }
  return bitmaps;
}

}  // namespace

// Gathering pays on a filter whose layers are small enough to hold, and which a group of at
// most kMaxGatherItems items can be worth (each item reads its bits in the older layers and
// sets them in the newest); with nothing of the pipelined path in flight (a filter that grew
// past the limit meanwhile goes on that path).
bool Adder::gathering() const {
  if (merge_refused_ || flight_.in_flight || grant_in_flight_ || meta_.layers.empty()) {
    return false;
  }
  std::size_t bytes = total_bytes(meta_.layers);
  return bytes <= kMaxMergeBytes &&
         bytes <= kMaxGatherItems * total_hashes(meta_.layers) * kMergeBytesPerBit;
}

void Adder::gather(const std::vector<std::string>& items) {
  for (const auto& item : items) {
    group_.hashes.push_back(murmur3_128(item));
    group_.results.push_back(ItemResult{item, false, false});
    group_bytes_ += item.size();
  }
}

bool Adder::worth_merging() const {
  return group_.results.size() * total_hashes(meta_.layers) * kMergeBytesPerBit >=
             total_bytes(meta_.layers) ||
         group_.results.size() >= kMaxGatherItems;
}

bool Adder::group_ready() const {
  return (group_.results.size() >= kMinGatherItems && worth_merging()) ||
         group_.results.size() >= kMaxGatherItems || group_bytes_ >= kMaxGatherBytes;
}

// Drops from `items` (indexes into b) those found in layers [from, to), read whole (GET):
// they are present, not added (their results stay so).
void Adder::drop_present(const Batch& b, std::vector<std::size_t>& items, std::size_t from,
                         std::size_t to) {
  if (from >= to || items.empty()) return;
  std::vector<std::string> keys;
  for (std::size_t i = from; i < to; ++i) keys.push_back(layer_key(keys_, name_, i));
  std::vector<Reply> bitmaps = read_layers(conn_, keys);
  std::erase_if(items, [&](std::size_t item) {
    for (std::size_t i = from; i < to; ++i) {
      if (all_bits_set(bitmaps[i - from].get(), b.hashes[item], meta_.layers[i])) return true;
    }
    return false;
  });
}

const std::vector<ItemResult>& Adder::run_group(bool merge) {
  Batch b = std::move(group_);
  group_ = Batch{};
  group_bytes_ = 0;
  if (!merge || b.results.empty() || !merge_group(b)) slow_path(b);
  done_ = std::move(b);
  return done_.results;
}

// Merges what of b the newest layer has room for, and sends the rest, which comes after it in
// the input, by the general path (it adds the next layer). False when nothing was merged (the
// slots went back): the caller sends all of b by the general path.
bool Adder::merge_group(Batch& b) {
  std::size_t newest = meta_.layers.size() - 1;
  std::vector<std::size_t> absent(b.results.size());
  for (std::size_t i = 0; i < absent.size(); ++i) absent[i] = i;
  drop_present(b, absent, 0, newest);
  if (absent.empty()) return true;  // every item is present in an older layer
  Grant g = grant_now(static_cast<std::int64_t>(absent.size()));
  if (!g.valid || g.status != 1) return false;  // full, or layers changed: the general path
  if (g.layer != static_cast<std::int64_t>(newest)) {
    // Other writers added layers meanwhile (grant_now read them): the slots are in the new
    // newest one; the layers between are older now, and read too (keeping the slots: giving
    // a whole group's back would leave that layer short, as another writer may have added
    // the next one since).
    auto layer = static_cast<std::size_t>(g.layer);
    if (layer + 1 != meta_.layers.size() || layer < newest) {
      settle(g.layer, g.granted, 0);
      return false;
    }
    drop_present(b, absent, newest, layer);
    newest = layer;
  }
  std::size_t take = std::min(absent.size(), static_cast<std::size_t>(g.granted));
  std::vector<std::size_t> rest(absent.begin() + static_cast<std::ptrdiff_t>(take), absent.end());
  absent.resize(take);
  if (!merge_bits(b, absent, newest, g.granted)) {
    settle(g.layer, g.granted, 0);  // refused by ACL: nothing changed, the slots go back
    return false;
  }
  if (rest.empty()) return true;
  Batch tail;
  for (std::size_t i : rest) {
    tail.hashes.push_back(b.hashes[i]);
    tail.results.push_back(std::move(b.results[i]));
  }
  slow_path(tail);
  for (std::size_t i = 0; i < rest.size(); ++i) b.results[rest[i]] = std::move(tail.results[i]);
  return true;
}

// MULTI, GET of the layer, SET of bitmap_ to the scratch key, bloom_merge, EXEC. Returns EXEC's
// reply; an empty one when the server refused the transaction by ACL before anything ran.
Reply Adder::send_merge(const std::string& key) {
  // MULTI alone first: a server that refuses it would run what follows one by one.
  Reply multi = conn_.command_raw({"MULTI"});
  if (multi->type == REDIS_REPLY_ERROR) {
    if (refused_by_acl({multi->str, multi->len})) return Reply{};
    throw Error(kServer, fmt::format("MULTI for bloom filter '{}' failed: {}", name_,
                                     std::string_view(multi->str, multi->len)));
  }
  out_.clear();
  append_command(out_, {"GET", key});
  append_array_header(out_, 3);
  append_bulk(out_, "SET");
  append_bulk(out_, scratch_key_);
  append_bulk(out_, bitmap_);
  append_command(out_,
                 {"EVAL", std::string(lua::kBloomMerge.body), "3", key, scratch_key_, meta_key_});
  append_command(out_, {"EXEC"});
  conn_.send_formatted(out_);
  std::string queue_error;
  for (int i = 0; i < 3; ++i) {
    Reply queued = conn_.receive();
    if (queued->type == REDIS_REPLY_ERROR && queue_error.empty()) {
      queue_error.assign(queued->str, queued->len);
    }
  }
  Reply exec = conn_.receive();
  if (queue_error.empty() && exec->type == REDIS_REPLY_ERROR) {
    // EXEC itself refused: the transaction is still open. Nothing of it ran; end it.
    queue_error.assign(exec->str, exec->len);
    Reply discard = conn_.command_raw({"DISCARD"});
    if (discard->type == REDIS_REPLY_ERROR) conn_.close();
  }
  if (queue_error.empty()) return exec;
  // Refused before anything ran (EXECABORT): by ACL, or the slot moved away.
  if (refused_by_acl(queue_error)) return Reply{};
  throw Error(kServer, fmt::format("merging the bits of bloom filter '{}' was refused: {}", name_,
                                   queue_error));
}

bool Adder::merge_bits(Batch& b, const std::vector<std::size_t>& items, std::size_t layer,
                       std::int64_t granted) {
  const Layer& l = meta_.layers[layer];
  std::string key = layer_key(keys_, name_, layer);
  bitmap_.assign(bitmap_bytes(l), '\0');
  for (std::size_t i : items) {
    for_each_position(b.hashes[i], l.bits, l.hashes,
                      [&](std::uint64_t pos) { set_bit(bitmap_, pos); });
  }
  Reply exec = send_merge(key);
  if (exec && exec->type == REDIS_REPLY_ARRAY && exec->elements == 3 &&
      exec->element[2]->type == REDIS_REPLY_ERROR &&
      refused_by_acl({exec->element[2]->str, exec->element[2]->len})) {
    exec.reset();  // BITOP refused: the scratch key was deleted, the layer is as it was
  }
  if (!exec) {
    merge_refused_ = true;
    return false;
  }
  if (exec->type != REDIS_REPLY_ARRAY || exec->elements != 3) {
    throw Error(kServer, fmt::format("unexpected reply to the merge of bloom filter '{}'", name_));
  }
  const redisReply* old = exec->element[0];
  const redisReply* merged = exec->element[2];
  if (merged->type == REDIS_REPLY_ERROR) {
    throw script_error({merged->str, merged->len}, lua::kBloomMerge,
                       {key, scratch_key_, meta_key_});
  }
  if (reply_integer(merged) == -2) {
    throw Error(kServer, fmt::format("bloom filter '{}' was deleted while items were added", name_),
                "add the items again");
  }
  if (old->type == REDIS_REPLY_ERROR) {
    throw foreign_key_error(key, "another type than the string of a bloom filter's layer");
  }
  std::int64_t added = answer_from(
      b, items, l,
      old->type == REDIS_REPLY_STRING ? std::string_view(old->str, old->len) : std::string_view{});
  settle(static_cast<std::int64_t>(layer), granted - added, added);
  return true;
}

// Answers `items` of b, in order, from `before`, the bits of layer `l` before the merge: an
// item is added when one of its bits was still 0, counting the bits of the items before it.
std::int64_t Adder::answer_from(Batch& b, const std::vector<std::size_t>& items, const Layer& l,
                                std::string_view before) {
  bitmap_.assign(bitmap_bytes(l), '\0');
  bitmap_.replace(0, std::min(bitmap_.size(), before.size()),
                  before.substr(0, std::min(bitmap_.size(), before.size())));
  std::int64_t added = 0;
  for (std::size_t i : items) {
    bool all_set = true;
    for_each_position(b.hashes[i], l.bits, l.hashes, [&](std::uint64_t pos) {
      if (bit_at(bitmap_, pos)) return;
      all_set = false;
      set_bit(bitmap_, pos);
    });
    b.results[i].yes = !all_set;
    added += all_set ? 0 : 1;
  }
  return added;
}

const std::vector<ItemResult>& Adder::add(const std::vector<std::string>& items) {
  load();
  if (gathering()) {
    gather(items);
    if (group_ready()) return run_group(worth_merging());
    done_ = Batch{};
    return done_.results;
  }
  Batch next;
  next.hashes.resize(items.size());
  next.results.resize(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    next.hashes[i] = murmur3_128(items[i]);
    next.results[i].item = items[i];
  }
  // While the server works on the batch in flight, format this one for the likely case.
  bool speculated = meta_.layers.size() == 1 && flight_.in_flight;
  if (speculated) format_sets(next, 0, next.results.size(), 0, speculative_);

  complete(flight_);
  if (grant_in_flight_) {
    next_grant_ = parse_grant(conn_.receive());
    grant_in_flight_ = false;
    carried_ = {-1, 0, 0};
    if (next_grant_.valid && next_grant_.layers != static_cast<std::int64_t>(meta_.layers.size())) {
      refresh();
    }
  }
  done_ = std::move(flight_);
  flight_ = Batch{};

  auto n = static_cast<std::int64_t>(next.results.size());
  Grant g = next_grant_;
  next_grant_ = Grant{};
  if (!g.valid && meta_.layers.size() == 1) g = grant_now(n);
  bool fast = g.valid && g.status == 1 && g.layer == 0 && meta_.layers.size() == 1 &&
              g.granted >= n && n > 0;
  if (!fast) {
    if (g.valid && g.status == 1) settle(g.layer, g.granted, 0);  // give the slots back
    if (n > 0) slow_path(next);
    flight_ = std::move(next);
    return done_.results;
  }
  if (!speculated) format_sets(next, 0, next.results.size(), 0, speculative_);
  next.in_flight = true;
  next.layer = 0;
  next.granted = g.granted;
  // The sets, then slots for the batch after this one (and the settlement of the last).
  speculative_ += grant_command(kGrantAhead);
  conn_.send_formatted(speculative_);
  speculative_.clear();
  grant_in_flight_ = true;
  flight_ = std::move(next);
  return done_.results;
}

const std::vector<ItemResult>& Adder::finish() {
  // Items gathered but too few to be worth the bitmaps go as BITFIELD, as a small input always
  // did. Nothing of the pipelined path is in flight while items are gathered.
  Batch gathered;
  if (!group_.results.empty()) {
    run_group(worth_merging());
    gathered = std::move(done_);
  }
  complete(flight_);
  if (grant_in_flight_) {
    Grant g = parse_grant(conn_.receive());
    grant_in_flight_ = false;
    carried_ = {-1, 0, 0};
    if (g.valid && g.status == 1) settle(g.layer, g.granted, 0);
  }
  if (next_grant_.valid && next_grant_.status == 1) {
    settle(next_grant_.layer, next_grant_.granted, 0);
  }
  next_grant_ = Grant{};
  if (loaded_) flush_settlement();
  if (loaded_ && expire_.count() > 0) expire_all();
  conn_.await_replicas();  // every BITFIELD of the stream, acknowledged at once
  done_ = gathered.results.empty() ? std::move(flight_) : std::move(gathered);
  flight_ = Batch{};
  return done_.results;
}

// ---------------------------------------------------------------------------------------
// Tester

Tester::Tester(Connection& conn, const Keys& keys, std::string_view name)
    : conn_(conn), keys_(keys), name_(name) {
  check_name("bloom filter", name);
}

Tester::~Tester() {
  if (in_flight_) conn_.close();
}

void Tester::complete() {
  std::size_t base = done_.size();
  done_.resize(base + flight_.size());
  for (std::size_t i = 0; i < flight_.size(); ++i) done_[base + i].item = flight_[i];
  for (std::size_t layer = 0; in_flight_ && layer < meta_.layers.size(); ++layer) {
    read_bitfields(conn_, layer_keys_[layer], meta_.layers[layer], flight_.size(),
                   [&](std::size_t i, bool ones) {
                     if (ones) done_[base + i].yes = true;
                   });
  }
  in_flight_ = false;
  flight_.clear();
}

void Tester::load() {
  if (loaded_) return;
  exists_ = read_meta(conn_, keys_, name_, meta_);
  for (std::size_t i = 0; i < meta_.layers.size(); ++i) {
    layer_keys_.push_back(layer_key(keys_, name_, i));
  }
  loaded_ = true;
}

bool Tester::gathering() const {
  if (!exists_ || in_flight_) return false;
  std::size_t bytes = total_bytes(meta_.layers);
  return bytes <= kMaxMergeBytes &&
         bytes <= kMaxGatherItems * total_hashes(meta_.layers) * kMergeBytesPerBit;
}

bool Tester::worth_reading() const {
  return group_.size() * total_hashes(meta_.layers) * kMergeBytesPerBit >=
             total_bytes(meta_.layers) ||
         group_.size() >= kMaxGatherItems;
}

// As Adder's; a group of long items is read whole too (the bitmaps are small on this route).
bool Tester::group_ready() const {
  return (group_.size() >= kMinGatherItems && worth_reading()) ||
         group_.size() >= kMaxGatherItems || group_bytes_ >= kMaxGatherBytes;
}

void Tester::test_group() {
  std::vector<Reply> replies = read_layers(conn_, layer_keys_);
  for (auto& item : group_) {
    Hash128 h = murmur3_128(item);
    bool present = false;
    for (std::size_t layer = 0; !present && layer < meta_.layers.size(); ++layer) {
      present = all_bits_set(replies[layer].get(), h, meta_.layers[layer]);
    }
    done_.push_back(ItemResult{std::move(item), present, false});
  }
  group_.clear();
  group_bytes_ = 0;
}

const std::vector<ItemResult>& Tester::test(const std::vector<std::string>& items) {
  load();
  if (gathering()) {
    done_.clear();
    group_.insert(group_.end(), items.begin(), items.end());
    for (const auto& item : items) group_bytes_ += item.size();
    if (group_ready()) test_group();
    return done_;
  }
  return test_bits(items);
}

const std::vector<ItemResult>& Tester::test_bits(const std::vector<std::string>& items) {
  done_.clear();
  // Each piece goes out while the server answers the one before; the last stays in flight.
  std::size_t per_write = items_per_write(meta_.layers, 0, meta_.layers.size());
  std::size_t first = 0;
  do {
    std::size_t last = std::min(items.size(), first + per_write);
    out_.clear();
    hashes_.clear();
    for (std::size_t i = first; exists_ && i < last; ++i) hashes_.push_back(murmur3_128(items[i]));
    for (std::size_t layer = 0; !hashes_.empty() && layer < meta_.layers.size(); ++layer) {
      append_bitfields(out_, false, layer_keys_[layer], meta_.layers[layer], hashes_.size(),
                       [&](std::size_t i) { return hashes_[i]; });
    }
    complete();
    if (!out_.empty()) {
      conn_.send_formatted(out_);
      in_flight_ = true;
    }
    flight_.assign(items.begin() + static_cast<std::ptrdiff_t>(first),
                   items.begin() + static_cast<std::ptrdiff_t>(last));
    first = last;
  } while (first < items.size());
  return done_;
}

const std::vector<ItemResult>& Tester::finish() {
  done_.clear();
  if (!group_.empty() && worth_reading()) {
    test_group();
  } else if (!group_.empty()) {
    // Too few to be worth the bitmaps: BITFIELD_RO, as a small input always went.
    std::vector<std::string> rest = std::move(group_);
    group_.clear();
    group_bytes_ = 0;
    test_bits(rest);
  }
  complete();
  return done_;
}

// ---------------------------------------------------------------------------------------

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
