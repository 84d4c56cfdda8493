#include "script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "errors.hpp"
#include "keys.hpp"
#include "redirect.hpp"
#include "signals.hpp"
#include "waiting.hpp"

namespace rcoord {
namespace {

Args eval_args(std::string_view verb, std::string_view what, const Args& keys, const Args& args) {
  Args out;
  out.reserve(3 + keys.size() + args.size());
  out.emplace_back(verb);
  out.emplace_back(what);
  out.push_back(std::to_string(keys.size()));
  out.insert(out.end(), keys.begin(), keys.end());
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

// The command on line `line` of a script body (`redis.call('HSET', ...)`), or "".
std::string command_on_line(std::string_view body, long line) {
  for (long n = 1; n < line && !body.empty(); ++n) {
    auto nl = body.find('\n');
    body = nl == std::string_view::npos ? std::string_view{} : body.substr(nl + 1);
  }
  body = body.substr(0, body.find('\n'));
  auto call = body.find("call('");
  if (call == std::string_view::npos) return {};
  body.remove_prefix(call + 6);
  return std::string(body.substr(0, body.find('\'')));
}

// The line of the script an error names (`... on @user_script:26.`), or 0.
long script_line(std::string_view msg) {
  auto at = msg.find("@user_script:");
  if (at == std::string_view::npos) return 0;
  return std::strtol(std::string(msg.substr(at + 13)).c_str(), nullptr, 10);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The key the line `line` of a script body names first (`KEYS[2]` gives keys[1]), or "".
std::string key_on_line(std::string_view body, long line, const Args& keys) {
  for (long n = 1; n < line && !body.empty(); ++n) {
    auto nl = body.find('\n');
    body = nl == std::string_view::npos ? std::string_view{} : body.substr(nl + 1);
  }
  body = body.substr(0, body.find('\n'));
  auto at = body.find("KEYS[");
  if (at == std::string_view::npos) return {};
  std::size_t index = 0;
  for (std::size_t i = at + 5; i < body.size() && is_digit(body[i]); ++i) {
    index = index * 10 + static_cast<std::size_t>(body[i] - '0');
  }
  return index >= 1 && index <= keys.size() ? keys[index - 1] : std::string();
}

// A lock's fence counter or an election's term counter: its next number is at least the
// server's clock in µs (src/lua/lib/fence.lua), so starting it again is safe.
bool counts_from_clock(std::string_view key) {
  auto ends_with = [key](std::string_view tail) {
    return key.size() >= tail.size() && key.substr(key.size() - tail.size()) == tail;
  };
  return key.find("{lock:") != std::string_view::npos
             ? ends_with(":fence")
             : key.find("{elect:") != std::string_view::npos && ends_with(":term");
}

// A refusal of the prelude (src/lua/lib/prelude.lua): `WRONGTYPE KEYS[<i>] holds <what>`,
// optionally ending in ` (<hint>)`.
struct Refusal {
  std::size_t index = 0;  // 1-based, as in KEYS
  std::string what;
  std::string hint;
};

std::optional<Refusal> parse_refusal(std::string_view text) {
  constexpr std::string_view kStart = "WRONGTYPE KEYS[";
  if (text.substr(0, kStart.size()) != kStart) return std::nullopt;
  text.remove_prefix(kStart.size());
  Refusal r;
  std::size_t digits = 0;
  while (digits < text.size() && digits < 4 && is_digit(text[digits])) {
    r.index = r.index * 10 + static_cast<std::size_t>(text[digits] - '0');
    ++digits;
  }
  constexpr std::string_view kHolds = "] holds ";
  if (digits == 0 || r.index == 0 || text.substr(digits, kHolds.size()) != kHolds) {
    return std::nullopt;
  }
  text.remove_prefix(digits + kHolds.size());
  auto open = text.rfind(" (");
  if (!text.empty() && text.back() == ')' && open != std::string_view::npos) {
    r.hint = std::string(text.substr(open + 2, text.size() - open - 3));
    text = text.substr(0, open);
  }
  r.what = std::string(text);
  return r;
}

// The reply to a take was lost after its request went out: the server may have run it, or
// may still run it if it is only slow. Gives back by token on a fresh connection, within
// `budget`, so that an exit 3 means nothing is held. True when the server confirmed it.
// (A server that is only slow runs the take first: its request came in on the older
// connection, so it is read first when the server goes on.)
bool give_back_after_lost_reply(Connection& conn, const std::function<void()>& give_back,
                                Millis budget) {
  signals::Uninterruptible quiet;
  ReplicaWaitSuspended no_wait(conn);
  DeadlineCap cap(conn, std::chrono::steady_clock::now() + budget);
  conn.close();
  try {
    give_back();
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool is_noscript(const Reply& r) {
  return r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).substr(0, 8) == "NOSCRIPT";
}

}  // namespace

bool refused_by_acl(std::string_view msg) {
  return msg.find("NOPERM") != std::string_view::npos ||
         msg.find("can't run this command") != std::string_view::npos ||
         msg.find("has no permissions to run") != std::string_view::npos;
}

std::string script_error_text(std::string_view msg) {
  std::string out;
  // Redis 6.2 puts `ERR Error running script (call to f_<sha1>): @user_script:N: ` before any
  // error raised in a script, and a space after it; Redis 7 says where at the end instead.
  // What follows is the error of a command the script called (`WRONGTYPE ...`), a refusal of
  // the prelude, or a Lua error (`user_script:N: ...`, of class ERR as Redis 7 says).
  constexpr std::string_view kBefore62 = "ERR Error running script (call to f_";
  if (auto close = msg.find("): ");
      msg.substr(0, kBefore62.size()) == kBefore62 && close != std::string_view::npos) {
    msg.remove_prefix(close + 3);
    constexpr std::string_view kAt = "@user_script:";
    if (msg.substr(0, kAt.size()) == kAt) {
      std::size_t digits = kAt.size();
      while (digits < msg.size() && is_digit(msg[digits])) ++digits;
      if (msg.substr(digits, 2) == ": ") msg.remove_prefix(digits + 2);
    }
    while (!msg.empty() && msg.back() == ' ') msg.remove_suffix(1);
    if (msg.substr(0, kAt.size() - 1) == kAt.substr(1)) out = "ERR ";
  }
  // `user_script:12: ` in front of a Lua runtime error.
  for (;;) {
    auto at = msg.find("user_script:");
    std::size_t digits = at == std::string_view::npos ? 0 : at + 12;
    while (digits < msg.size() && is_digit(msg[digits])) ++digits;
    bool located = at != std::string_view::npos && digits > at + 12 &&
                   msg.substr(digits, 2) == ": " && (at == 0 || msg[at - 1] == ' ');
    if (!located) break;
    out += msg.substr(0, at);
    msg.remove_prefix(digits + 2);
  }
  out += msg;
  // ` script: <sha1>, on @user_script:17.` after any error raised inside a script.
  auto tail = out.rfind(" script: ");
  if (tail != std::string::npos && out.find(", on @user_script:", tail) != std::string::npos) {
    out.resize(tail);
  }
  return out;
}

Error script_error(std::string_view msg, const Script& script, const Args& keys) {
  // Redis refuses a command inside a script with a message that names only the script line
  // (`... can't run this command or subcommand script: <sha>, on @user_script:26.`), or the
  // command in lower case (`ACL failure in script: User u has no permissions to run the
  // 'hset' command ...`, Redis 7.2 on): name the command from the embedded body, as every
  // message of rcoord names it.
  if (long line = script_line(msg); line > 0 && refused_by_acl(msg)) {
    std::string command = command_on_line(script.body, line);
    if (!command.empty()) {
      return {
          kServer,
          fmt::format("script {} refused by ACL: this user may not run {}", script.name, command),
          "grant the rcoord ACL rule to this user (see docs/configuration.md, ACL)"};
    }
  }
  std::string text = script_error_text(msg);
  if (auto refusal = parse_refusal(text); refusal && refusal->index <= keys.size()) {
    return foreign_key_error(keys[refusal->index - 1], refusal->what, refusal->hint);
  }
  // A counter (a lock's fence, an election's term, a queue's ids) that is no integer any more
  // (changed by hand): name it, and how to mend it.
  if (text.find("not an integer or out of range") != std::string::npos) {
    std::string key = key_on_line(script.body, script_line(msg), keys);
    if (!key.empty()) {
      auto object = object_of_key(key);
      std::string whose =
          object ? fmt::format("{} '{}': ", object_noun(object->type), object->name) : "";
      std::string what = fmt::format("script {} failed: {}key '{}' does not hold an integer: {}",
                                     script.name, whose, key, text);
      if (counts_from_clock(key)) {
        return {kServer, what,
                fmt::format("it was changed by hand: delete it, and the next number is taken from "
                            "the server's clock, above those handed out: redis-cli DEL '{}'",
                            key)};
      }
      return {kServer, what,
              fmt::format("it was changed by hand: set it above every number it handed out, "
                          "e.g. redis-cli SET '{}' 1000000, or delete it to count again from 1: "
                          "redis-cli DEL '{}'",
                          key, key)};
    }
  }
  if (text.rfind("WRONGTYPE", 0) == 0 && !keys.empty()) {
    // A key the script reached without checking it first (none should be left): name the
    // object, whose keys all start with its main key.
    auto object = object_of_key(keys.front());
    std::string whose = object ? fmt::format("{} '{}'", object_noun(object->type), object->name)
                               : fmt::format("key '{}'", keys.front());
    return {kServer,
            fmt::format("{}: one of its keys holds another type than rcoord keeps there", whose),
            fmt::format("find it with redis-cli --scan --pattern '{}*'", keys.front())};
  }
  return reply_error(text, fmt::format("script {}", script.name));
}

Reply eval(Connection& conn, const Script& script, const Args& keys, const Args& args) {
  if (script.writes) conn.count_replicas_with_next_request();
  Reply r = conn.command_raw(eval_args("EVALSHA", script.sha1, keys, args));
  // The script cache is empty after a restart or SCRIPT FLUSH: send the body once.
  if (is_noscript(r)) r = conn.command_raw(eval_args("EVAL", script.body, keys, args));
  if (r->type == REDIS_REPLY_ERROR)
    throw script_error(std::string_view(r->str, r->len), script, keys);
  if (script.writes) conn.await_replicas();
  return r;
}

Call script_call(const Script& script, const Args& keys, const Args& args) {
  return {eval_args("EVALSHA", script.sha1, keys, args), &script};
}

namespace {

// The keys of a script call (EVALSHA sha numkeys key... arg...), for its error messages.
Args call_keys(const Call& call) {
  if (call.args.size() < 3) return {};
  std::size_t n = std::strtoul(call.args[2].c_str(), nullptr, 10);
  n = std::min(n, call.args.size() - 3);
  auto first = call.args.begin() + 3;
  return {first, first + static_cast<std::ptrdiff_t>(n)};
}

// The same call with the script's body instead of its SHA1.
Args as_eval(const Call& call) {
  Args args = call.args;
  args[0] = "EVAL";
  args[1] = std::string(call.script->body);
  return args;
}

// Sends the commands and reads their replies with `exchange`, which is given them by address
// (a pass over many objects would otherwise copy every argument of every call once more);
// then those of `calls` answered NOSCRIPT once more as EVAL, which also puts the script in
// the server's cache.
std::vector<Reply> with_noscript_retry(
    const std::vector<Call>& calls,
    const std::function<std::vector<Reply>(const std::vector<const Args*>&)>& exchange) {
  std::vector<const Args*> commands;
  commands.reserve(calls.size());
  for (const auto& c : calls) commands.push_back(&c.args);
  auto replies = exchange(commands);
  std::vector<std::size_t> again;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].script != nullptr && is_noscript(replies[i])) again.push_back(i);
  }
  if (again.empty()) return replies;
  std::vector<Args> evals;
  evals.reserve(again.size());
  for (std::size_t i : again) evals.push_back(as_eval(calls[i]));
  std::vector<const Args*> eval_commands;
  eval_commands.reserve(evals.size());
  for (const auto& e : evals) eval_commands.push_back(&e);
  auto second = exchange(eval_commands);
  for (std::size_t k = 0; k < again.size(); ++k) replies[again[k]] = std::move(second[k]);
  return replies;
}

}  // namespace

std::vector<Reply> send_calls(Connection& conn, const std::vector<Call>& calls) {
  return with_noscript_retry(calls, [&conn](const std::vector<const Args*>& commands) {
    std::string out;
    std::size_t size = 0;  // reserved at once: a pipeline of hundreds would grow it many times
    for (const auto* c : commands) {
      for (const auto& arg : *c) size += arg.size() + 16;
    }
    out.reserve(size);
    for (const auto* c : commands) append_command(out, *c);
    conn.send_formatted(out);
    std::vector<Reply> replies;
    replies.reserve(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(conn.receive());
    return replies;
  });
}

std::vector<Reply> send_calls_routed(Connection& conn, const std::vector<Call>& calls) {
  return with_noscript_retry(calls, [&conn](const std::vector<const Args*>& commands) {
    std::vector<Args> copies;  // redirected calls are few: pipeline() keeps its own
    copies.reserve(commands.size());
    for (const auto* c : commands) copies.push_back(*c);
    return conn.pipeline(copies);
  });
}

Error call_error(const redisReply* reply, const Call& call) {
  std::string_view msg(reply->str, reply->len);
  if (call.script != nullptr) return script_error(msg, *call.script, call_keys(call));
  return reply_error(std::string(msg), call.args.empty() ? "command" : call.args.front());
}

namespace {

// Runs `take`, a request that may take something; see eval_taking() for what is given back
// (within `budget` when its reply does not come).
Reply taking(Connection& conn, const std::function<Reply()>& take,
             const std::function<void()>& give_back, Millis budget) {
  try {
    return take();
  } catch (const ReplicaShortfall& e) {
    // Given back within at most one --timeout (never past an earlier deadline the session
    // has); when even that fails (the server is that slow), the lease ends by its TTL, and the
    // message says which of the two happened.
    ReplicaWaitSuspended no_wait(conn);
    DeadlineCap cap(conn, std::chrono::steady_clock::now() + conn.timeout());
    std::string outcome = "so what it took was given back";
    try {
      give_back();
    } catch (const Error& failed) {
      outcome = fmt::format("and what it took could not be given back ({}): its TTL ends it",
                            failed.what());
    }
    throw ReplicaShortfall(e.code(), fmt::format("{}, {}", e.what(), outcome), e.hint());
  } catch (const Error& e) {
    if (!conn.request_sent()) throw;
    if (e.code() == kInterrupted) {
      // The request may have run: the signal ends rcoord, which must leave nothing held.
      give_back_after_lost_reply(conn, give_back, budget);
      throw;
    }
    // Refused for want of a password, or by protected mode, the request ran nothing: nothing
    // to give back, and a new connection would be refused as well.
    if (e.code() != kConnection || refused_unrun(e)) throw;
    bool confirmed = give_back_after_lost_reply(conn, give_back, budget);
    throw Error(kConnection, e.what(),
                fmt::format("{}; {}", e.hint(),
                            confirmed ? "nothing is held: what it may have taken was given back"
                                      : "what it may have taken was given back on a new "
                                        "connection, unconfirmed (else its TTL ends it)"));
  }
}

// The script's reply of a wait_then_eval_taking() pipeline, checked as eval() checks it.
Reply script_reply(Connection& conn, Reply r, const Script& script, const Args& keys,
                   const Args& args) {
  // Not run there: the script cache was flushed, or the slot is moving (a redirect of the
  // script alone, not of the whole pipeline). eval() sends it again, and follows redirects.
  if (is_noscript(r) || cluster::is_redirect(r.get())) return eval(conn, script, keys, args);
  if (r->type == REDIS_REPLY_ERROR)
    throw script_error(std::string_view(r->str, r->len), script, keys);
  if (script.writes) conn.await_replicas();
  return r;
}

// What wait_then_eval_taking() got back.
struct WaitedReply {
  Reply reply;         ///< the script's
  bool waited = true;  ///< false when the wait alone was redirected (a slot on the move)
};

// eval_taking() of `take`, with `wait` sent in front of it in one write (retry_after_wait).
WaitedReply wait_then_eval_taking(Connection& conn, const Args& wait, Millis block,
                                  const Take& take) {
  const Script& script = take.script;
  const Args& keys = take.keys;
  const Args& args = take.args;
  // The wait ends by `block`, and the script right after it: half a timeout later the server
  // counts as gone, and the other half is left for giving back. A waiter whose server stops
  // answering exits within `block` and one timeout, as one that sent its wait alone.
  Millis half = conn.timeout() / 2;
  WaitedReply out;
  out.reply = taking(
      conn,
      [&] {
        auto replies = conn.pipeline_blocking({wait, eval_args("EVALSHA", script.sha1, keys, args)},
                                              block - half);
        Reply r = script_reply(conn, std::move(replies[1]), script, keys, args);
        const Reply& woke = replies[0];
        if (cluster::is_redirect(woke.get())) {
          out.waited = false;
        } else if (woke->type == REDIS_REPLY_ERROR) {
          try {
            take.give_back();
          } catch (const Error&) {
            // Its TTL ends what could not be given back; the wait's error is the one to tell.
          }
          check_key_reply(woke, wait.front(), wait.size() > 1 ? wait[1] : "");
        }
        return r;
      },
      take.give_back, half);
  return out;
}

}  // namespace

Reply eval_taking(Connection& conn, const Take& take) {
  return taking(
      conn, [&] { return eval(conn, take.script, take.keys, take.args); }, take.give_back,
      conn.timeout());
}

Reply retry_after_wait(Connection& conn, const Take& take, const std::string& wake_key,
                       Millis block, Millis lease, std::chrono::steady_clock::time_point& sent) {
  // A lease counted up to one wait early loses at most a quarter of itself that way.
  constexpr int kWaitShareOfLease = 4;
  Args wait{"BLPOP", wake_key, waiting::block_seconds(block)};
  sent = std::chrono::steady_clock::now();
  if (block * kWaitShareOfLease <= lease) {
    auto woken = wait_then_eval_taking(conn, wait, block, take);
    if (woken.waited || take.took(woken.reply.get())) return std::move(woken.reply);
    // The wait alone was redirected and the try did not take: wait where the key is now.
  }
  conn.command_blocking(wait, block);
  sent = std::chrono::steady_clock::now();
  return eval_taking(conn, take);
}

}  // namespace rcoord
