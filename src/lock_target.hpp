#pragma once
/// One lock API over what the settings name, chosen once: the one server of the connection,
/// or a Redlock over three or more --url (redlock.hpp). Its results are lock.hpp's, with the
/// Redlock's votes when there is one; the command layer never asks which it is.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "lease.hpp"
#include "lock.hpp"
#include "settings.hpp"

namespace rcoord::lock {

/// True when the settings name a Redlock: three or more --url.
bool on_redlock(const Settings& settings);

class Target {
 public:
  virtual ~Target() = default;

  /// As lock::acquire (Redlock::acquire). Throws Error.
  virtual Acquired acquire(std::string_view name, const AcquireOptions& opts) = 0;
  /// As lock::release: released=false when `token` does not hold it.
  virtual Released release(std::string_view name, std::string_view token) = 0;
  /// As lock::extend: extended=false when `token` does not hold it.
  virtual Extended extend(std::string_view name, std::string_view token, Millis ttl) = 0;
  virtual Status status(std::string_view name) = 0;
  /// As lock::wait_free. Throws Error(kUsage) on a Redlock, which has no watchers.
  virtual Freed wait_free(std::string_view name, std::optional<Millis> wait) = 0;
  /// Deletes it whoever holds it; `who` (pack()) is what one server's history records.
  virtual Broken break_lock(std::string_view name, const std::string& who) = 0;

  /// The length the supervisor of a command gives a lease of `ttl`: a Redlock's leaves out
  /// the clock drift allowance.
  virtual Millis lease_length(Millis ttl) const = 0;
  /// The lease of `taken` (acquired with a TTL of `ttl`) for a command run while holding it
  /// (lock::lease, Redlock::lease). This target must outlive it.
  virtual Lease lease(const Acquired& taken, Millis ttl) = 0;
};

/// The target `settings` name, for calls that ask for leases of `ttl` (a Redlock's per-node
/// timeout is a tenth of it, redlock::node_timeout). `conn` gives the one server's connection,
/// asked only when there is one; it and `keys` must outlive the target. Throws Error(kUsage)
/// for a Redlock whose --url reach one server twice.
std::unique_ptr<Target> open_target(const Settings& settings, const Keys& keys, Millis ttl,
                                    const std::function<Connection&()>& conn);

}  // namespace rcoord::lock
