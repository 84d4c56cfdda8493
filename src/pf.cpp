#include "pf.hpp"

#include <fmt/format.h>

#include "errors.hpp"

namespace rcoord::pf {
namespace {

constexpr std::string_view kType = "pf";

void append_bulk(std::string& out, std::string_view s) {
  out += '$';
  out += std::to_string(s.size());
  out += "\r\n";
  out += s;
  out += "\r\n";
}

// A reply error names the key: WRONGTYPE (another type, or a string that is not a
// HyperLogLog) becomes the project's one wording.
void check(const Reply& r, std::string_view what, std::string_view key) {
  if (r->type != REDIS_REPLY_ERROR) return;
  std::string msg(r->str, r->len);
  if (msg.rfind("WRONGTYPE", 0) == 0 || msg.find("HyperLogLog") != std::string::npos) {
    throw Error(kServer,
                fmt::format("WRONGTYPE key {} holds something that is not an rcoord pf", key),
                "use another key name or --prefix");
  }
  check_reply(r, what);
}

std::string object(const Keys& keys, std::string_view name) {
  check_name("pf key", name);
  return keys.object(kType, name);
}

}  // namespace

Adder::Adder(Connection& conn, const Keys& keys, std::string_view key)
    : conn_(conn), key_(object(keys, key)) {
  result_.key = std::string(key);
}

Adder::~Adder() {
  if (in_flight_ > 0) conn_.close();
}

void Adder::complete() {
  for (; in_flight_ > 0; --in_flight_) {
    Reply r = conn_.receive();
    if (r->type == REDIS_REPLY_ERROR) {
      in_flight_ = 0;
      conn_.close();
      check(r, "PFADD", key_);
    }
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) result_.changed = true;
  }
}

void Adder::add(const std::vector<std::string>& items) {
  out_.clear();
  std::size_t commands = 0;
  for (std::size_t i = 0; i < items.size(); i += kItemsPerCommand) {
    std::size_t n = std::min(kItemsPerCommand, items.size() - i);
    out_ += '*';
    out_ += std::to_string(n + 2);
    out_ += "\r\n$5\r\nPFADD\r\n";
    append_bulk(out_, key_);
    for (std::size_t j = i; j < i + n; ++j) append_bulk(out_, items[j]);
    ++commands;
  }
  complete();  // the previous batch, while this one was being formatted
  if (commands > 0) {
    conn_.send_formatted(out_);
    in_flight_ = commands;
  }
  result_.items += items.size();
}

const Added& Adder::finish() {
  complete();
  return result_;
}

Count count(Connection& conn, const Keys& keys, const std::vector<std::string>& names) {
  Count c;
  c.keys = names;
  Args args{"PFCOUNT"};
  for (const auto& n : names) args.push_back(object(keys, n));
  if (names.empty()) throw Error(kUsage, "pf count needs at least one key", "name the keys");
  Reply r = conn.command_raw(args);
  c.count = decode_count(r, names.size() == 1 ? args[1] : "one of the keys");
  return c;
}

Merged merge(Connection& conn, const Keys& keys, std::string_view dest,
             const std::vector<std::string>& sources) {
  Merged m;
  m.dest = std::string(dest);
  m.keys = sources;
  std::string dest_key = object(keys, dest);
  Args args{"PFMERGE", dest_key};
  for (const auto& s : sources) args.push_back(object(keys, s));
  auto replies = conn.pipeline({args, {"PFCOUNT", dest_key}});
  check(replies[0], "PFMERGE", sources.size() == 1 ? args[2] : "one of the keys");
  m.count = decode_count(replies[1], dest_key);
  return m;
}

std::int64_t decode_count(const Reply& r, std::string_view key) {
  check(r, "PFCOUNT", key);
  return reply_integer(r.get());
}

}  // namespace rcoord::pf
