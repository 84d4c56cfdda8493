#include "lock_target.hpp"

#include "errors.hpp"
#include "redlock.hpp"

namespace rcoord::lock {
namespace {

// One server: lock.hpp's calls on its connection.
class ServerTarget final : public Target {
 public:
  ServerTarget(Connection& conn, const Keys& keys) : conn_(conn), keys_(keys) {}

  Acquired acquire(std::string_view name, const AcquireOptions& opts) override {
    return lock::acquire(conn_, keys_, name, opts);
  }
  Released release(std::string_view name, std::string_view token) override {
    return {lock::release(conn_, keys_, name, token), std::string(name)};
  }
  Extended extend(std::string_view name, std::string_view token, Millis ttl) override {
    return lock::extend(conn_, keys_, name, token, ttl);
  }
  Status status(std::string_view name) override { return lock::status(conn_, keys_, name); }
  Freed wait_free(std::string_view name, std::optional<Millis> wait) override {
    return lock::wait_free(conn_, keys_, name, wait);
  }
  Broken break_lock(std::string_view name, const std::string& who) override {
    return lock::break_lock(conn_, keys_, name, who);
  }
  Millis lease_length(Millis ttl) const override { return ttl; }
  Lease lease(const Acquired& taken, Millis ttl) override {
    return lock::lease(conn_, keys_, taken, ttl);
  }

 private:
  Connection& conn_;
  const Keys& keys_;
};

// A Redlock: its quorum calls, their votes put in the results.
class RedlockTarget final : public Target {
 public:
  RedlockTarget(const Settings& settings, const Keys& keys, Millis ttl)
      : nodes_(settings.endpoints, redlock::node_timeout(settings.timeout, ttl), keys) {}

  Acquired acquire(std::string_view name, const AcquireOptions& opts) override {
    auto r = nodes_.acquire(name, opts);
    r.lock.votes = r.votes;
    return r.lock;
  }
  Released release(std::string_view name, std::string_view token) override {
    auto r = nodes_.release(name, token);
    return {r.released, r.name, Votes{r.nodes, r.quorum, r.released_on, 0}};
  }
  Extended extend(std::string_view name, std::string_view token, Millis ttl) override {
    auto r = nodes_.extend(name, token, ttl);
    r.lock.votes = r.votes;
    return r.lock;
  }
  Status status(std::string_view name) override {
    auto r = nodes_.status(name);
    r.lock.votes = r.votes;
    return r.lock;
  }
  Freed wait_free(std::string_view, std::optional<Millis>) override {
    throw Error(kUsage, "lock wait is not available on a Redlock (three or more --url)",
                "wait with lock acquire --wait and release at once, or name one server");
  }
  // A Redlock's nodes record a break without who broke it.
  Broken break_lock(std::string_view name, const std::string&) override {
    auto r = nodes_.break_lock(name);
    r.lock.votes = Votes{r.nodes, nodes_.quorum(), r.broken_on, 0};
    return r.lock;
  }
  Millis lease_length(Millis ttl) const override { return ttl - redlock::drift(ttl); }
  Lease lease(const Acquired& taken, Millis ttl) override {
    return nodes_.lease({taken, taken.votes.value_or(Votes{})}, ttl);
  }

 private:
  redlock::Redlock nodes_;
};

}  // namespace

bool on_redlock(const Settings& settings) { return settings.endpoints.size() >= 3; }

std::unique_ptr<Target> open_target(const Settings& settings, const Keys& keys, Millis ttl,
                                    const std::function<Connection&()>& conn) {
  if (on_redlock(settings)) return std::make_unique<RedlockTarget>(settings, keys, ttl);
  return std::make_unique<ServerTarget>(conn(), keys);
}

}  // namespace rcoord::lock
