#include "detail.hpp"

#include <optional>

namespace rcoord::inventory {
namespace {

Status read_status(Connection& c, const Keys& k, const std::string& type, const std::string& name) {
  if (type == "lock") return lock::status(c, k, name);
  if (type == "sem") return semaphore::status(c, k, name);
  if (type == "elect") return elect::status(c, k, name);
  if (type == "queue") return queue::stats(c, k, name);
  if (type == "bloom") return bloom::info(c, k, name);
  if (type == "latch") return latch::status(c, k, name);
  if (type == "gate") return gate::status(c, k, name);  // a gate's name is its token
  if (type == "limit") {
    // A peek needs the parameters the limit's state keeps: none, no status.
    Reply fields = c.command(limit::stored_params_command(k, name));
    if (auto params = limit::decode_stored_params(fields.get())) {
      return limit::status(c, k, name, *params);
    }
  }
  return std::monostate{};
}

bool keeps_history(const std::string& type) {
  return type == "lock" || type == "sem" || type == "elect" || type == "queue";
}

}  // namespace

Detail read_detail(Connection& conn, const Keys& keys, const std::string& type,
                   const std::string& name, std::int64_t events) {
  Detail d;
  d.status = read_status(conn, keys, type, name);
  if (keeps_history(type)) {
    d.events = history::read(conn, keys.history(type, name), std::nullopt, events).events;
  }
  return d;
}

}  // namespace rcoord::inventory
