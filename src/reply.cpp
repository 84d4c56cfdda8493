#include "reply.hpp"

#include <fmt/format.h>

#include <charconv>

#include "keys.hpp"

namespace rcoord {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string error_text(const redisReply* r) { return {r->str, r->len}; }

// A command refused because the client never authenticated. Redis answers a long command
// (a script's many arguments) from such a client with a protocol error instead of NOAUTH,
// and closes: it is the same missing password.
bool is_noauth_error(std::string_view msg) {
  return starts_with(msg, "NOAUTH") || starts_with(msg, "ERR Protocol error: unauthenticated");
}

bool is_auth_error(std::string_view msg) {
  return is_noauth_error(msg) || starts_with(msg, "WRONGPASS") ||
         starts_with(msg, "ERR invalid password") || starts_with(msg, "ERR AUTH");
}

// `prefix` ('*' or '$'), the decimal `n`, CRLF: the line that opens an array or a bulk.
void append_length(std::string& out, char prefix, std::size_t n) {
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof(digits), n).ptr;
  out += prefix;
  out.append(digits, end);
  out += "\r\n";
}

const redisReply* element_of(const redisReply* r, std::size_t i, std::string_view what) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements <= i) {
    throw Error(kServer, fmt::format("unexpected reply from {}", what));
  }
  return r->element[i];
}

}  // namespace

void append_array_header(std::string& out, std::size_t n) { append_length(out, '*', n); }

void append_bulk(std::string& out, std::string_view s) {
  append_length(out, '$', s.size());
  out += s;
  out += "\r\n";
}

void append_command(std::string& out, const Args& args) {
  append_array_header(out, args.size());
  for (const auto& a : args) append_bulk(out, a);
}

ReplyParser::ReplyParser() : reader_(redisReaderCreate()) {
  if (!reader_) throw Error(kConnection, "out of memory");
}

void ReplyParser::feed(std::string_view bytes) {
  redisReaderFeed(reader_.get(), bytes.data(), bytes.size());
}

bool ReplyParser::next(Reply& out) {
  void* raw = nullptr;
  if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) return false;
  out.reset(static_cast<redisReply*>(raw));
  return true;
}

std::string ReplyParser::error() const { return reader_->errstr; }

bool is_auth_reply(const redisReply* r) {
  return r != nullptr && r->type == REDIS_REPLY_ERROR && is_auth_error(error_text(r));
}

bool refused_unrun(const Error& e) {
  std::string_view what = e.what();
  return e.code() == kConnection &&
         (starts_with(what, kNoAuthWhat) || what.find(kDeniedWhat) != std::string_view::npos);
}

bool is_denied_reply(const redisReply* r) {
  return r != nullptr && r->type == REDIS_REPLY_ERROR && starts_with(error_text(r), "DENIED ");
}

Error reply_error(const std::string& msg, std::string_view what) {
  // A password given and refused fails the handshake (Session::handshake): a command refused
  // for want of one means none was given. The protocol error Redis answers a long command
  // with says nothing of a password: NOAUTH is the word to search for.
  if (is_noauth_error(msg)) {
    return {kConnection,
            fmt::format("{}: the server needs a password and none was given{}", kNoAuthWhat,
                        starts_with(msg, "NOAUTH") ? "" : fmt::format("; it answered: {}", msg)),
            kNoPasswordHint};
  }
  if (is_auth_error(msg)) {
    return {kConnection, fmt::format("authentication required: {}", msg), kAuthHint};
  }
  if (starts_with(msg, "CLUSTERDOWN")) {
    return {kServer, fmt::format("cluster error: {} failed: {}", what, msg),
            "the cluster cannot serve this key now; check it with 'rcoord doctor'"};
  }
  if (starts_with(msg, "CROSSSLOT") || starts_with(msg, "MOVED ") || starts_with(msg, "ASK ")) {
    // A redirect left here came from a bulk stream or a pipeline that only partly ran.
    return {kServer, fmt::format("cluster error: {} failed: {}", what, msg),
            "run the command again; if it persists, report it as a bug"};
  }
  if (starts_with(msg, "NOPERM")) {
    return {kServer, fmt::format("{} refused by ACL: {}", what, msg),
            "grant the rcoord ACL rule to this user (see docs/configuration.md, ACL)"};
  }
  // A write refused by a replica or by a full server: the server's words, and what to do. (A
  // script's write refused inside it carries the same words after the script's own.)
  if (msg.find("READONLY ") != std::string::npos) {
    return {kServer, fmt::format("{} failed: {}", what, msg),
            "this server is a read-only replica: point --url at its master, or find the master "
            "with --sentinel"};
  }
  if (msg.find("NOREPLICAS ") != std::string::npos) {
    return {kServer, fmt::format("{} failed: {}", what, msg),
            "the master has fewer good replicas than its min-replicas-to-write and refuses "
            "writes until one catches up: try again, and check the replicas with 'rcoord "
            "doctor'"};
  }
  if (msg.find("OOM command not allowed") != std::string::npos) {
    return {kServer, fmt::format("{} failed: {}", what, msg),
            "the server is full and evicts nothing (maxmemory-policy noeviction): free memory "
            "(rcoord ls, rcoord rm) or raise maxmemory"};
  }
  return {kServer, fmt::format("{} failed: {}", what, msg)};
}

void check_reply(const Reply& r, std::string_view what) {
  if (r->type != REDIS_REPLY_ERROR) return;
  throw reply_error(error_text(r.get()), what);
}

void check_key_reply(const Reply& r, std::string_view what, std::string_view key) {
  if (r->type == REDIS_REPLY_ERROR && starts_with(error_text(r.get()), "WRONGTYPE")) {
    throw foreign_key_error(key, "another type than rcoord keeps there");
  }
  check_reply(r, what);
}

std::int64_t reply_integer(const redisReply* r) {
  if (r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r->type == REDIS_REPLY_STRING) {
    try {
      return std::stoll(std::string(r->str, r->len));
    } catch (const std::exception&) {
    }
  }
  throw Error(kServer, "unexpected reply from the server: expected an integer");
}

std::string reply_string(const redisReply* r) {
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) return {r->str, r->len};
  if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
  if (r->type == REDIS_REPLY_NIL) return {};
  throw Error(kServer, "unexpected reply from the server: expected a string");
}

bool reply_is_nil(const redisReply* r) { return r->type == REDIS_REPLY_NIL; }

std::int64_t element_integer(const redisReply* r, std::size_t i, std::string_view what) {
  return reply_integer(element_of(r, i, what));
}

std::string element_string(const redisReply* r, std::size_t i, std::string_view what) {
  return reply_string(element_of(r, i, what));
}

}  // namespace rcoord
