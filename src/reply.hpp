#pragma once
/// Replies and requests in the RESP protocol: a command's arguments, its RESP encoding, the
/// parser that turns received bytes into replies (hiredis's reader), and the checks and
/// accessors that turn a reply of the wrong kind or shape into an Error.

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "errors.hpp"

namespace rcoord {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
/// An owned reply. Never null once returned by Connection.
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// One command: its arguments, binary-safe.
using Args = std::vector<std::string>;

/// Appends one command in RESP form (`*N` then `$len` bulk strings) to `out`.
void append_command(std::string& out, const Args& args);
/// Appends the `*N` header of a command of `n` arguments; append_bulk() then adds each one.
/// For bulk verbs that write their arguments straight from where they are.
void append_array_header(std::string& out, std::size_t n);
/// Appends `s` as one RESP bulk string (`$len`, the bytes).
void append_bulk(std::string& out, std::string_view s);

/// Turns the bytes of a reply stream into replies, whatever way the bytes arrive.
class ReplyParser {
 public:
  /// Throws Error(kConnection) when out of memory.
  ReplyParser();
  void feed(std::string_view bytes);
  /// The next complete reply into `out` (nullptr when more bytes are needed). False when the
  /// stream is not RESP; error() then says why.
  bool next(Reply& out);
  std::string error() const;

 private:
  struct ReaderDeleter {
    void operator()(redisReader* r) const { redisReaderFree(r); }
  };
  std::unique_ptr<redisReader, ReaderDeleter> reader_;
};

/// What to do about a missing or wrong password.
inline constexpr const char* kAuthHint =
    "check --user and the password (--password-file, RCOORD_PASSWORD)";
/// What to do when the server wants a password and none was given.
inline constexpr const char* kNoPasswordHint =
    "give the password with --password-file FILE, RCOORD_PASSWORD or REDISCLI_AUTH, or in the "
    "URL as redis://:PASSWORD@HOST:PORT; add --user NAME for an ACL user";
/// How the message of a command refused for want of a password begins (reply_error()).
inline constexpr std::string_view kNoAuthWhat = "authentication required (NOAUTH)";
/// What the message of a protected-mode refusal holds (Transport).
inline constexpr std::string_view kDeniedWhat = "refused this client: DENIED ";

/// True for an error that says that the server refused the client before running anything:
/// a command of a client that has not authenticated, or protected mode. Nothing was taken,
/// and a new connection would be refused as well.
bool refused_unrun(const Error& e);
/// True for Redis's protected-mode refusal (`DENIED ...`), sent as a new connection opens.
bool is_denied_reply(const redisReply* r);

/// True for an error reply saying that the server wants a password, or another one.
bool is_auth_reply(const redisReply* r);

/// The Error for the error reply `msg` to `what` (a command or script): kConnection for a
/// missing or wrong password, kServer otherwise. The server's words are kept; for a read-only
/// replica (READONLY) and a full server under noeviction (OOM) the hint says what to do.
Error reply_error(const std::string& msg, std::string_view what);
/// Throws reply_error() if `r` is an error reply, naming `what` (a command or script).
void check_reply(const Reply& r, std::string_view what);
/// As check_reply() for a command on `key`, part of an rcoord object: WRONGTYPE becomes
/// foreign_key_error(), naming the object and the key.
void check_key_reply(const Reply& r, std::string_view what, std::string_view key);
/// Reply accessors that throw Error(kServer) when the shape is not the expected one.
std::int64_t reply_integer(const redisReply* r);
std::string reply_string(const redisReply* r);
bool reply_is_nil(const redisReply* r);
/// Element `i` of the array reply `r` of `what` (e.g. "a lock script"), as reply_integer()
/// and reply_string() read it; Error(kServer) "unexpected reply from `what`" when `r` is no
/// array or has no element `i`.
std::int64_t element_integer(const redisReply* r, std::size_t i, std::string_view what);
std::string element_string(const redisReply* r, std::size_t i, std::string_view what);

}  // namespace rcoord
