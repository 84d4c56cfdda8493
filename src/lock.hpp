#pragma once
/// Exclusive locks with a TTL, owner tokens, fencing tokens and push wake-up of waiters.
///
/// Keys: `<prefix>{lock:NAME}` hash {token, fence} with the TTL; `…:fence` counter (kept
/// forever, so fences never go back); `…:wake` a list a release pushes to and waiters BLPOP.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"

namespace rcoord::lock {

struct AcquireOptions {
  Millis ttl{30'000};
  std::optional<Millis> wait;  ///< nullopt: try once; Millis::max(): forever
  std::string token;           ///< empty: 128 random bits
};

/// Member names are the JSON fields of SPEC §3.
struct Acquired {
  bool acquired = false;
  std::string name;
  std::string token;        ///< ours when acquired; empty when busy
  std::int64_t ttl_ms = 0;  ///< our TTL when acquired; the holder's remaining TTL when busy
  std::int64_t fence = 0;
  std::int64_t waited_ms = 0;
};

/// Takes `name`, waiting up to opts.wait; a waiter sleeps in BLPOP on the wake list and is
/// woken by the release. acquired=false when still busy. Re-acquiring with the holder's token
/// refreshes the TTL. Throws Error(kConnection/kServer), Error(kInterrupted) on a signal.
Acquired acquire(Connection& conn, const Keys& keys, std::string_view name,
                 const AcquireOptions& opts);

/// True if released; false if `token` does not hold it.
bool release(Connection& conn, const Keys& keys, std::string_view name, std::string_view token);

struct Extended {
  bool extended = false;
  std::string name;
  std::int64_t ttl_ms = 0;
  std::int64_t fence = 0;
};
/// Sets the TTL to `ttl` if `token` still holds the lock; extended=false otherwise.
Extended extend(Connection& conn, const Keys& keys, std::string_view name, std::string_view token,
                Millis ttl);

struct Status {
  bool held = false;
  std::string name;
  std::string token;
  std::int64_t ttl_ms = 0;
  std::int64_t fence = 0;  ///< the holder's fence; when free, the last fence handed out
};
Status status(Connection& conn, const Keys& keys, std::string_view name);

struct Broken {
  bool broken = false;
  std::string name;
  std::string token;  ///< who held it
};
/// Deletes the lock whoever holds it (operator override) and wakes a waiter.
Broken break_lock(Connection& conn, const Keys& keys, std::string_view name);

}  // namespace rcoord::lock
