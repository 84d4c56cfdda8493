#include "pf.hpp"

#include <fmt/format.h>

#include <functional>

#include "errors.hpp"
#include "lua_scripts.hpp"
#include "reply.hpp"
#include "script.hpp"
#include "token.hpp"

namespace rcoord::pf {
namespace {

constexpr std::string_view kType = "pf";

// A reply error names the key: WRONGTYPE (another type, or a string that is not a
// HyperLogLog) becomes the project's one wording.
void check(const Reply& r, std::string_view what, std::string_view key) {
  if (r->type != REDIS_REPLY_ERROR) return;
  std::string msg(r->str, r->len);
  if (msg.rfind("WRONGTYPE", 0) == 0 || msg.find("HyperLogLog") != std::string::npos) {
    throw foreign_key_error(key, "something that is not an rcoord HyperLogLog");
  }
  check_reply(r, what);
}

std::string object(const Keys& keys, std::string_view name) {
  check_name("pf key", name);
  return keys.object(kType, name);
}

}  // namespace

Adder::Adder(Connection& conn, const Keys& keys, std::string_view key, Millis expire)
    : conn_(conn),
      key_(object(keys, key)),
      scratch_key_(keys.aux(kType, key, "registers:" + random_token())),
      expire_(expire) {
  result_.key = std::string(key);
}

// Batches sent before the oldest one's replies are read: with two, the next batch is already
// at the server when it finishes one (one alone left it idle while the replies travelled back
// and the next batch came in).
constexpr std::size_t kBatchesInFlight = 2;

Adder::~Adder() {
  if (!in_flight_.empty()) conn_.close();
}

void Adder::complete_oldest() {
  for (std::size_t left = in_flight_.front(); left > 0; --left) {
    Reply r = conn_.receive();
    if (r->type == REDIS_REPLY_ERROR) {
      in_flight_.clear();
      conn_.close();
      check(r, "PFADD", key_);
    }
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) result_.changed = true;
  }
  in_flight_.pop_front();
}

void Adder::complete_all() {
  while (!in_flight_.empty()) complete_oldest();
}

void Adder::add(const std::vector<std::string>& items) {
  if (items.empty()) return;
  if (!past_first_batch_) {
    past_first_batch_ = true;
    add_items(items);
    return;
  }
  gather(items);
  if (gathered_ends_.size() >= kItemsPerMerge || gathered_bytes_.size() >= kBytesPerMerge) {
    merge_gathered();
  }
}

void Adder::gather(const std::vector<std::string>& items) {
  for (const auto& item : items) {
    gathered_.add(item);
    gathered_bytes_ += item;
    gathered_ends_.push_back(gathered_bytes_.size());
  }
}

void Adder::merge_gathered() {
  if (gathered_ends_.empty()) return;
  complete_all();  // the replies of PFADDs in flight come first on the connection
  Reply r = eval(conn_, lua::kPfAddRegisters, {key_, scratch_key_},
                 {gathered_.dense(), std::to_string(expire_.count())});
  if (reply_integer(r.get()) < 0) {
    add_gathered_items();
  } else {
    if (reply_integer(r.get()) == 1) result_.changed = true;
    result_.items += gathered_ends_.size();
  }
  gathered_.clear();
  gathered_bytes_.clear();
  gathered_ends_.clear();
}

// The gathered items as PFADDs, a batch at a time, as if they had never been gathered.
void Adder::add_gathered_items() {
  std::vector<std::string> batch;
  std::size_t start = 0;
  for (std::size_t end : gathered_ends_) {
    batch.emplace_back(gathered_bytes_, start, end - start);
    start = end;
    if (batch.size() == kBatchSize) {
      add_items(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) add_items(batch);
  complete_all();
}

void Adder::add_items(const std::vector<std::string>& items) {
  if (expire_.count() > 0) {
    add_expiring(items);
    return;
  }
  if (!routed_ && !items.empty()) {
    // The first batch goes through pipeline(), which follows a cluster redirect, so that
    // the stream of the later batches starts on the key's own node.
    add_routed(items);
    return;
  }
  add_pipelined(items);
}

void Adder::add_pipelined(const std::vector<std::string>& items) {
  out_.clear();
  std::size_t commands = 0;
  for (std::size_t i = 0; i < items.size(); i += kItemsPerCommand) {
    std::size_t n = std::min(kItemsPerCommand, items.size() - i);
    append_array_header(out_, n + 2);
    append_bulk(out_, "PFADD");
    append_bulk(out_, key_);
    for (std::size_t j = i; j < i + n; ++j) append_bulk(out_, items[j]);
    ++commands;
  }
  // The oldest batch, while this one was being formatted.
  while (in_flight_.size() >= kBatchesInFlight) complete_oldest();
  if (commands > 0) {
    conn_.send_formatted(out_);
    in_flight_.push_back(commands);
  }
  result_.items += items.size();
}

void Adder::add_routed(const std::vector<std::string>& items) {
  std::vector<Args> commands;
  for (std::size_t i = 0; i < items.size(); i += kItemsPerCommand) {
    std::size_t n = std::min(kItemsPerCommand, items.size() - i);
    Args cmd{"PFADD", key_};
    cmd.insert(cmd.end(), items.begin() + static_cast<std::ptrdiff_t>(i),
               items.begin() + static_cast<std::ptrdiff_t>(i + n));
    commands.push_back(std::move(cmd));
  }
  for (const auto& r : conn_.pipeline(commands)) {
    check(r, "PFADD", key_);
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) result_.changed = true;
  }
  routed_ = true;
  result_.items += items.size();
}

// One script per batch: the items and the expiry go in together. A round trip per batch
// (eval() follows redirects and reloads a flushed script cache), not a stream.
void Adder::add_expiring(const std::vector<std::string>& items) {
  if (items.empty()) return;
  Args args{std::to_string(expire_.count())};
  args.insert(args.end(), items.begin(), items.end());
  Reply r = eval(conn_, lua::kPfAdd, {key_}, args);
  if (reply_integer(r.get()) == 1) result_.changed = true;
  result_.items += items.size();
}

const Added& Adder::finish() {
  merge_gathered();
  complete_all();
  conn_.await_replicas();
  return result_;
}

namespace {

bool is_crossslot(const Reply& r) {
  return r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).substr(0, 9) == "CROSSSLOT";
}

// On Redis Cluster the keys of several pf objects live in different slots, and PFCOUNT or
// PFMERGE over them is refused (CROSSSLOT). A HyperLogLog is a plain string, so each other
// key's value is read (GET follows it to its node) and copied, for the time of one
// pipeline, into a temporary key under the hash tag of `home`; the command then runs there.
// Returns the replies of `run` (its keys: `home_key` then the copies, or the source itself
// when it shares the tag of `home`).
std::vector<Reply> across_slots(Connection& conn, const Keys& keys, const std::string& home,
                                const std::vector<std::string>& sources,
                                const std::function<std::vector<Args>(const Args&)>& run) {
  std::string tag = random_token();
  std::vector<Args> pipeline;
  Args local;  // the keys the command reads, all in the slot of `home`
  Args temps;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::string key = object(keys, sources[i]);
    if (sources[i] == home) {
      local.push_back(key);
      continue;
    }
    Reply value = conn.command_raw({"GET", key});
    check(value, "GET", key);
    if (reply_is_nil(value.get())) continue;  // a missing key is an empty HyperLogLog
    std::string temp = keys.aux(kType, home, fmt::format("merge:{}:{}", tag, i));
    // The expiry cleans up after a client that dies before the DEL below.
    pipeline.push_back({"SET", temp, reply_string(value.get()), "PX", "60000"});
    local.push_back(temp);
    temps.push_back(temp);
  }
  std::size_t first = pipeline.size();
  for (auto& cmd : run(local)) pipeline.push_back(std::move(cmd));
  std::size_t last = pipeline.size();
  if (!temps.empty()) {
    Args del{"DEL"};
    del.insert(del.end(), temps.begin(), temps.end());
    pipeline.push_back(std::move(del));
  }
  auto replies = conn.pipeline(pipeline);
  for (std::size_t i = 0; i < first; ++i) check_reply(replies[i], "SET");
  return {std::make_move_iterator(replies.begin() + static_cast<std::ptrdiff_t>(first)),
          std::make_move_iterator(replies.begin() + static_cast<std::ptrdiff_t>(last))};
}

}  // namespace

Count count(Connection& conn, const Keys& keys, const std::vector<std::string>& names) {
  Count c;
  c.keys = names;
  Args args{"PFCOUNT"};
  for (const auto& n : names) args.push_back(object(keys, n));
  if (names.empty()) throw Error(kUsage, "pf count needs at least one key", "name the keys");
  Reply r = conn.command_raw(args);
  if (is_crossslot(r)) {
    // PFCOUNT over copies is read-only for the real keys, and the union is the same.
    auto replies = across_slots(conn, keys, names.front(), names, [](const Args& local) {
      Args cmd{"PFCOUNT"};
      cmd.insert(cmd.end(), local.begin(), local.end());
      return std::vector<Args>{cmd};
    });
    r = std::move(replies.front());
  }
  c.count = decode_count(r, names.size() == 1 ? args[1] : "one of the keys");
  return c;
}

namespace {

// PFMERGE of `sources` into `dest_key`; with an expiry, the pf_merge script, which sets it in
// the same step (EVAL with the body: it also runs inside the pipeline of across_slots).
Args merge_command(const std::string& dest_key, const Args& sources, Millis expire) {
  Args cmd;
  if (expire.count() > 0) {
    cmd = {"EVAL", std::string(lua::kPfMerge.body), std::to_string(sources.size() + 1)};
  } else {
    cmd = {"PFMERGE"};
  }
  cmd.push_back(dest_key);
  cmd.insert(cmd.end(), sources.begin(), sources.end());
  if (expire.count() > 0) cmd.push_back(std::to_string(expire.count()));
  return cmd;
}

}  // namespace

Merged merge(Connection& conn, const Keys& keys, std::string_view dest,
             const std::vector<std::string>& sources, Millis expire) {
  Merged m;
  m.dest = std::string(dest);
  m.keys = sources;
  std::string dest_key = object(keys, dest);
  Args source_keys;
  for (const auto& s : sources) source_keys.push_back(object(keys, s));
  auto replies =
      conn.pipeline({merge_command(dest_key, source_keys, expire), {"PFCOUNT", dest_key}});
  if (is_crossslot(replies[0])) {
    replies = across_slots(conn, keys, std::string(dest), sources, [&](const Args& local) {
      return std::vector<Args>{merge_command(dest_key, local, expire), {"PFCOUNT", dest_key}};
    });
  }
  check(replies[0], "PFMERGE", sources.size() == 1 ? source_keys[0] : "one of the keys");
  m.count = decode_count(replies[1], dest_key);
  return m;
}

std::int64_t decode_count(const Reply& r, std::string_view key) {
  check(r, "PFCOUNT", key);
  return reply_integer(r.get());
}

}  // namespace rcoord::pf
