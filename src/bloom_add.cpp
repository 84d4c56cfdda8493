#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "bloom.hpp"
#include "bloom_wire.hpp"
#include "errors.hpp"
#include "lua_scripts.hpp"
#include "reply.hpp"
#include "script.hpp"
#include "token.hpp"

namespace rcoord::bloom {
namespace {

// Slots asked for ahead of the next batch: the batch size of the command layer.
constexpr auto kGrantAhead = static_cast<std::int64_t>(kBatchSize);

}  // namespace

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

}  // namespace rcoord::bloom
