#include "redlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "errors.hpp"
#include "pubsub.hpp"
#include "redlock_nodes.hpp"
#include "signals.hpp"
#include "token.hpp"
#include "waiting.hpp"

namespace rcoord::redlock {
namespace {

using Clock = std::chrono::steady_clock;
using waiting::since;

// The delay before the next attempt: a random point in [base/2, base] with a base that
// doubles from 5 ms to 100 ms, and no longer than the holder's lease, so that contenders
// spread out instead of splitting the nodes between them again.
Millis retry_delay(int attempt, Millis holder_left) {
  static thread_local std::minstd_rand rng{random_seed()};
  Millis base = std::min(Millis(5) * (1 << std::min(attempt, 5)), Millis(100));
  if (holder_left.count() > 0) base = std::min(base, holder_left + Millis(2));
  std::uniform_int_distribution<std::int64_t> spread(base.count() / 2, base.count());
  return Millis(std::max<std::int64_t>(1, spread(rng)));
}

}  // namespace

// What a waiting acquire hears from the nodes: each node's holder announces its give-back
// on the lock's channel (lock::release's `announce_on`), naming the waiter to go first, and
// that waiter tries again once a quorum of nodes did, instead of retrying on a timer; the
// others let it go first (they try again on their timers, as a waiter on one server whose
// wake-up went to another does). A node whose subscription fails (down, or an ACL without the
// channel) is left out; the waiter then needs fewer announcements, and with fewer than a
// quorum of nodes listened to it falls back on its timers.
class Redlock::Listeners {
 public:
  Listeners(const std::vector<Connection>& conns, const std::string& channel, std::string token)
      : subs_(conns.size()),
        heard_(conns.size(), false),
        called_(conns.size(), false),
        token_(std::move(token)) {
    signals::Uninterruptible quiet;  // the per-node timeout bounds each subscription
    in_parallel(conns.size(), [&](std::size_t i) {
      try {
        Subscriber s(conns[i].endpoint(), conns[i].timeout());
        s.subscribe({channel});
        subs_[i].emplace(std::move(s));
      } catch (const Error&) {
        // left out: see above
      }
    });
  }

  int live() const {
    return static_cast<int>(
        std::count_if(subs_.begin(), subs_.end(), [](const auto& s) { return s.has_value(); }));
  }

  // Forgets what was heard: called before each attempt, which sees the nodes as they are.
  void forget() {
    hear_buffered();
    std::fill(heard_.begin(), heard_.end(), false);
    std::fill(called_.begin(), called_.end(), false);
  }

  // Waits up to `block` until `needed` nodes announced a give-back since forget(), one of
  // them naming this waiter (or none); either way the waiter then tries again. Throws
  // Error(kInterrupted) on a managed signal.
  void wait(int needed, Millis block) {
    auto deadline = deadline_after(block);
    for (;;) {
      hear_buffered();
      if (count(heard_) >= needed && count(called_) > 0) return;
      auto now = Clock::now();
      if (now >= deadline) return;
      std::vector<Subscriber*> open;
      for (auto& s : subs_) {
        if (s) open.push_back(&*s);
      }
      if (open.empty()) {
        if (!signals::sleep_until(deadline)) interrupted();
        return;
      }
      Millis left = deadline == Clock::time_point::max()
                        ? Millis::max()
                        : std::chrono::duration_cast<Millis>(deadline - now) + Millis(1);
      await_readable(open, left);
    }
  }

 private:
  [[noreturn]] static void interrupted() {
    throw Error(kInterrupted, fmt::format("interrupted by signal {}", signals::pending()));
  }

  static int count(const std::vector<bool>& nodes) {
    return static_cast<int>(std::count(nodes.begin(), nodes.end(), true));
  }

  // Takes in what every subscription has received; one that fails is left out from then on.
  void hear_buffered() {
    for (std::size_t i = 0; i < subs_.size(); ++i) {
      if (!subs_[i]) continue;
      try {
        for (const Message& m : subs_[i]->drain()) hear(i, m.data);
      } catch (const Error& e) {
        if (e.code() == kInterrupted) throw;
        subs_[i].reset();
      }
    }
  }

  // "released", then " TOKEN" of the waiter the node lets go first, if it has waiters.
  void hear(std::size_t node, std::string_view announced) {
    constexpr std::string_view kNaming = "released ";
    heard_[node] = true;
    if (!announced.starts_with(kNaming) || announced.substr(kNaming.size()) == token_) {
      called_[node] = true;
    }
  }

  std::vector<std::optional<Subscriber>> subs_;
  std::vector<bool> heard_;   ///< the node announced a give-back since forget()
  std::vector<bool> called_;  ///< ... naming this waiter, or none
  std::string token_;
};

Millis drift(Millis ttl) { return ttl / 100 + Millis(2); }

// The fence a take proposes to every node (src/lua/lib/fence.lua): this machine's clock in
// µs, a quarter of a second ahead, so that it is above each node's own clock (servers kept
// in time by NTP differ by milliseconds) and every granting node hands out the same number.
// A node whose clock or counter is further ahead answers its own, and the fences are then
// raised to the highest (try_once): slower, never wrong.
std::int64_t proposed_fence() {
  using namespace std::chrono;
  constexpr microseconds kAhead = milliseconds(250);
  return duration_cast<microseconds>(system_clock::now().time_since_epoch() + kAhead).count();
}

Millis node_timeout(Millis io_timeout, Millis ttl) {
  return std::min(io_timeout, std::max(ttl / 10, Millis(100)));
}

// The outcome of one round over all nodes.
struct Redlock::Attempt {
  bool acquired = false;
  std::int64_t fence = 0;
  int granted = 0;            ///< nodes that granted it (and, when acquired, kept its fence)
  int refreshed = 0;          ///< of the nodes that granted it, those where the token held it
  Clock::time_point started;  ///< when its requests were sent: the validity counts from there
  Millis validity{0};
  Millis holder_left{0};         ///< until a quorum of nodes is free of the current holder
  std::optional<Error> failure;  ///< no quorum answered, or a server error
};

Redlock::Attempt Redlock::try_once(std::string_view name, const std::string& token, Millis ttl,
                                   const std::string& who, bool last,
                                   std::vector<std::int64_t>& busy_since) {
  Attempt a;
  auto start = Clock::now();
  a.started = start;
  lock::AcquireOptions once{ttl, std::nullopt, token, false, who, last};
  once.enlist = !last;  // a waiter: the nodes' give-backs may name it to go first
  once.fence_floor = proposed_fence();
  auto grants = on_all(conns_, [&](std::size_t i, Connection& c) {
    lock::AcquireOptions on_node = once;
    on_node.busy_since = busy_since[i];
    return lock::acquire(c, keys_, name, on_node);
  });
  for (std::size_t i = 0; i < grants.size(); ++i) {
    if (grants[i].answered()) busy_since[i] = grants[i].value->busy_since;
  }
  std::int64_t top_fence = 0;
  bool fences_differ = false;
  for (const auto& g : grants) {
    if (g.answered() && g.value->acquired) {
      ++a.granted;
      if (g.value->refreshed) ++a.refreshed;
      fences_differ = fences_differ || (top_fence != 0 && g.value->fence != top_fence);
      top_fence = std::max(top_fence, g.value->fence);
    }
  }
  if (a.granted >= quorum()) {
    if (fences_differ) {
      // Write the highest fence back to every granting node, so whoever takes the lock next
      // (on a majority sharing a node with ours) counts on from there. (When they agree,
      // that write would change nothing: the hand-off saves its round trip. They agree when
      // every node took the proposed fence, as they do unless a node's clock or counter is
      // ahead of it.)
      auto raised = on_all(conns_, [&](std::size_t i, Connection& c) {
        return grants[i].answered() && grants[i].value->acquired &&
               lock::raise_fence(c, keys_, name, token, top_fence);
      });
      a.granted = static_cast<int>(std::count_if(
          raised.begin(), raised.end(), [](const auto& r) { return r.answered() && *r.value; }));
    }
    a.validity = ttl - since(start) - drift(ttl);
    if (a.granted >= quorum() && a.validity.count() > 0) {
      a.acquired = true;
      a.fence = top_fence;
      return a;
    }
  }
  // Not ours: give back what we got, and wherever the answer did not come (a node that timed
  // out may have granted it). A node that answered busy has nothing of ours.
  std::vector<bool> may_hold(grants.size());
  for (std::size_t i = 0; i < grants.size(); ++i) {
    may_hold[i] = !grants[i].answered() || grants[i].value->acquired;
  }
  release_where(name, token, may_hold);
  if (count_answered(grants) < quorum()) {
    try {
      require_quorum(conns_, grants);
    } catch (const Error& e) {
      a.failure = e;
    }
    return a;
  }
  // The lock is free again for us once a quorum of nodes is free: the quorum-th shortest
  // remaining lease among the nodes (0 for free ones, unknown ones last).
  std::vector<std::int64_t> left;
  for (const auto& g : grants) {
    if (!g.answered()) continue;
    left.push_back(g.value->acquired ? 0 : std::max<std::int64_t>(0, g.value->ttl_ms));
  }
  std::sort(left.begin(), left.end());
  a.holder_left = Millis(left[static_cast<std::size_t>(quorum() - 1)]);
  return a;
}

void Redlock::release_where(std::string_view name, const std::string& token,
                            const std::vector<bool>& nodes) {
  if (std::find(nodes.begin(), nodes.end(), true) == nodes.end()) return;
  std::string channel = lock::released_channel(keys_, name);
  on_all(conns_, [&](std::size_t i, Connection& c) {
    return nodes[i] && lock::release(c, keys_, name, token, {}, channel);
  });
}

Acquired Redlock::acquire(std::string_view name, const lock::AcquireOptions& opts) {
  check_name("lock", name);
  check_servers();
  if (opts.shared) {
    throw Error(kUsage, "--shared is not supported with several --url (Redlock)",
                "give one --url for a reader lock");
  }
  Acquired result;
  result.lock.name = std::string(name);
  result.lock.who = opts.who;
  result.votes.nodes = nodes();
  result.votes.quorum = quorum();
  std::string token = opts.token.empty() ? random_token() : opts.token;
  auto start = Clock::now();
  std::optional<Listeners> listeners;
  // Each node's first busy answer, from which its counters reckon the wait.
  std::vector<std::int64_t> busy_since(conns_.size(), 0);
  for (int attempt = 0;; ++attempt) {
    if (listeners) listeners->forget();
    // Only a try without --wait is the last: a wait that runs out records its `busy` below.
    Attempt a = try_once(name, token, opts.ttl, opts.who, !opts.wait, busy_since);
    result.lock.waited_ms = since(start).count();
    result.votes.acquired_on = a.granted;
    if (a.failure) rethrow(*a.failure);
    if (a.acquired) {
      result.lock.acquired = true;
      result.lock.token = token;
      result.lock.ttl_ms = opts.ttl.count();
      result.lock.fence = a.fence;
      result.lock.sent = a.started;
      // The token held it on a quorum before this call: the Redlock was already its holder's.
      result.lock.refreshed = a.refreshed >= quorum();
      result.votes.validity_ms = a.validity.count();
      return result;
    }
    result.votes.acquired_on = 0;  // what it got was given back
    result.lock.ttl_ms = a.holder_left.count();
    if (!opts.wait) {
      if (a.granted >= quorum()) {  // granted, but too slowly to be safe
        throw Error(kConnection,
                    fmt::format("a quorum granted lock '{}' only after its validity ({} TTL "
                                "less drift) had passed",
                                name, opts.ttl.count()),
                    "use a longer --ttl, or find what makes the nodes slow");
      }
      return result;
    }
    Millis left = *opts.wait == Millis::max() ? Millis::max() : *opts.wait - since(start);
    if (left.count() <= 0) {
      Ending gave_up{
          .how = Ending::How::kWithdrawn, .who = opts.who, .waited_ms = result.lock.waited_ms};
      std::string channel = lock::released_channel(keys_, name);
      on_all(conns_, [&](std::size_t, Connection& c) {
        return lock::release(c, keys_, name, token, gave_up, channel);
      });
      return result;
    }
    if (!listeners) {
      // Listen before the next attempt, so that a give-back after it is heard; then try
      // again at once (a give-back before the subscriptions was not).
      listeners.emplace(conns_, lock::released_channel(keys_, name), token);
      continue;
    }
    if (!wait_for_turn(*listeners, attempt, a.holder_left, left)) {
      throw Error(kInterrupted, fmt::format("interrupted while waiting for lock '{}'", name),
                  "nothing is held");
    }
  }
}

bool Redlock::wait_for_turn(Listeners& listeners, int attempt, Millis holder_left,
                            Millis left) const {
  int unheard = nodes() - listeners.live();
  if (listeners.live() < quorum() || holder_left.count() == 0) {
    // Nothing to wait for from enough nodes, or no holder to wait for (a quorum granted it
    // to us too slowly): the timer alone.
    return signals::sleep_until(Clock::now() + std::min(retry_delay(attempt, holder_left), left));
  }
  // A holder gives back on at least a quorum of nodes; of those, the unheard ones are not
  // counted on. Its lease running out announces nothing: that is the timer's (with a few ms
  // of spread, so that waiters do not all come at once), and a heartbeat covers an
  // announcement lost with a subscription.
  Millis timer = std::min({holder_left + retry_delay(0, Millis(0)), lock::kWaiterHeartbeat, left});
  try {
    listeners.wait(std::max(1, quorum() - unheard), timer);
  } catch (const Error& e) {
    if (e.code() == kInterrupted) return false;
    throw;
  }
  return true;
}

Released Redlock::release(std::string_view name, std::string_view token, const Ending& ending) {
  check_name("lock", name);
  check_servers();
  std::string channel = lock::released_channel(keys_, name);
  auto results = on_all(conns_, [&](std::size_t, Connection& c) {
    return lock::release_waking(c, keys_, name, token, ending, channel);
  });
  Released r{false, std::string(name), nodes(), quorum(), 0};
  for (const auto& one : results) {
    if (!one.answered()) continue;
    r.released_on += one.value->released ? 1 : 0;
    r.woke = r.woke || one.value->woke;
  }
  require_quorum(conns_, results);
  r.released = r.released_on > 0;
  return r;
}

void Redlock::keep(std::string_view name, std::string_view token, const Ending& ending, Millis rest,
                   Clock::time_point deadline) {
  check_name("lock", name);
  auto results = on_all(conns_, [&](std::size_t, Connection& c) {
    DeadlineCap cap(c, deadline);
    return lock::keep(c, keys_, name, token, ending, rest);
  });
  require_quorum(conns_, results);
}

Extended Redlock::extend(std::string_view name, std::string_view token, Millis ttl,
                         Clock::time_point deadline) {
  check_name("lock", name);
  check_servers();
  auto start = Clock::now();
  auto results = on_all(conns_, [&](std::size_t, Connection& c) {
    DeadlineCap cap(c, deadline);
    return lock::extend(c, keys_, name, token, ttl);
  });
  Extended e;
  e.lock.name = std::string(name);
  e.votes.nodes = nodes();
  e.votes.quorum = quorum();
  int unanswered = 0;
  for (const auto& one : results) {
    if (!one.answered()) {
      ++unanswered;
    } else if (one.value->extended) {
      ++e.votes.acquired_on;
      e.lock.fence = std::max(e.lock.fence, one.value->fence);
    }
  }
  if (e.votes.acquired_on < quorum()) {
    // Lost for sure only when even the silent nodes could not make up a quorum.
    if (e.votes.acquired_on + unanswered < quorum()) {
      e.lock.fence = 0;
      return e;
    }
    require_quorum(conns_, results);
    rethrow_hard_error(results);
    throw Error(kConnection,
                fmt::format("lock '{}' was extended on {} of {} Redis nodes and {} did not "
                            "answer; Redlock needs {}",
                            name, e.votes.acquired_on, nodes(), unanswered, quorum()),
                "bring the nodes back or check --url");
  }
  Millis validity = ttl - since(start) - drift(ttl);
  if (validity.count() <= 0) {
    throw Error(kConnection,
                fmt::format("extending lock '{}' on a quorum took longer than its new TTL", name),
                "use a longer --ttl, or find what makes the nodes slow");
  }
  e.lock.extended = true;
  e.lock.ttl_ms = ttl.count();
  e.votes.validity_ms = validity.count();
  return e;
}

Status Redlock::status(std::string_view name) {
  check_name("lock", name);
  check_servers();
  auto results =
      on_all(conns_, [&](std::size_t, Connection& c) { return lock::status(c, keys_, name); });
  require_quorum(conns_, results);
  Status s;
  s.lock.name = std::string(name);
  s.votes.nodes = nodes();
  s.votes.quorum = quorum();
  // The token that holds it on the most nodes, and how long each of those nodes keeps it.
  std::map<std::string, std::vector<std::int64_t>> ttls_by_token;
  std::int64_t last_fence = 0;
  for (const auto& one : results) {
    if (!one.answered()) continue;
    last_fence = std::max(last_fence, one.value->fence);
    if (one.value->mode == "exclusive")
      ttls_by_token[one.value->token].push_back(one.value->ttl_ms);
  }
  std::string top;
  for (const auto& [token, ttls] : ttls_by_token) {
    if (top.empty() || ttls.size() > ttls_by_token[top].size()) top = token;
  }
  s.lock.fence = last_fence;
  if (top.empty()) return s;
  auto& ttls = ttls_by_token[top];
  s.votes.acquired_on = static_cast<int>(ttls.size());
  if (s.votes.acquired_on < quorum()) return s;
  // Held while a quorum of nodes still keeps it: the quorum-th longest remaining lease.
  std::sort(ttls.rbegin(), ttls.rend());
  s.lock.held = true;
  s.lock.token = top;
  s.lock.mode = "exclusive";
  s.lock.ttl_ms = ttls[static_cast<std::size_t>(quorum() - 1)];
  s.votes.validity_ms =
      std::max<std::int64_t>(0, s.lock.ttl_ms - drift(Millis(s.lock.ttl_ms)).count());
  s.lock.fence = 0;
  for (const auto& one : results) {
    if (one.answered() && one.value->token == top) {
      s.lock.fence = std::max(s.lock.fence, one.value->fence);
      // Every node recorded the same taker; the longest hold is since the first grant.
      const Holder& h = one.value->holder;
      if (h.held_ms > s.lock.holder.held_ms) s.lock.holder = h;
      s.lock.held_ms = s.lock.holder.held_ms;
      // Kept by --min-hold: every node was told at once; any that says so tells when.
      if (one.value->kept.kept() && !s.lock.kept.kept()) s.lock.kept = one.value->kept;
    }
  }
  return s;
}

Broken Redlock::break_lock(std::string_view name) {
  check_name("lock", name);
  check_servers();
  auto results =
      on_all(conns_, [&](std::size_t, Connection& c) { return lock::break_lock(c, keys_, name); });
  Broken b;
  b.lock.name = std::string(name);
  b.nodes = nodes();
  for (const auto& one : results) {
    if (!one.answered() || !one.value->broken) continue;
    ++b.broken_on;
    b.lock.broken = true;
    if (b.lock.token.empty()) b.lock.token = one.value->token;
    b.lock.readers = std::max(b.lock.readers, one.value->readers);
  }
  require_quorum(conns_, results);
  return b;
}

std::vector<history::Event> Redlock::history(std::string_view name,
                                             std::optional<std::int64_t> since_ms,
                                             std::optional<std::int64_t> limit) {
  check_name("lock", name);
  check_servers();
  std::string key = keys_.history("lock", name);
  auto pages = on_all(conns_, [&](std::size_t, Connection& c) {
    return history::read(c, key, since_ms, std::nullopt).events;
  });
  require_quorum(conns_, pages);
  // One event, as each node that recorded it has it.
  struct Copies {
    history::Event event;
    std::vector<std::int64_t> at;
  };
  std::map<std::pair<std::string, std::string>, Copies> seen;
  for (const auto& page : pages) {
    if (!page.answered()) continue;
    for (const auto& e : *page.value) {
      auto& copies = seen[{e.event, e.token}];
      if (copies.at.empty()) copies.event = e;
      copies.at.push_back(e.at);
    }
  }
  std::vector<history::Event> out;
  for (auto& [what, copies] : seen) {
    if (static_cast<int>(copies.at.size()) < quorum()) continue;
    std::sort(copies.at.begin(), copies.at.end());
    copies.event.at = copies.at[static_cast<std::size_t>(quorum() - 1)];
    out.push_back(std::move(copies.event));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.at < b.at; });
  if (limit && out.size() > static_cast<std::size_t>(*limit)) {
    out.erase(out.begin(), out.end() - *limit);
  }
  return out;
}

Lease Redlock::lease(const Acquired& taken, Millis ttl) {
  std::string name = taken.lock.name;
  std::string token = taken.lock.token;
  Lease held{ttl - drift(ttl), taken.lock.sent, nullptr, nullptr, nullptr, {}};
  held.renew = [this, name, token, ttl](Lease::Clock::time_point deadline) {
    return extend(name, token, ttl, deadline).lock.extended;
  };
  // Every node has a short timeout of its own: a give-back never waits long.
  held.give_back = [this, name, token, who = taken.lock.who, waited = taken.lock.waited_ms](
                       const Ending& ending, Lease::Clock::time_point) {
    return release(name, token, ending.of_taker(who, waited)).woke;
  };
  held.keep = [this, name, token, who = taken.lock.who, waited = taken.lock.waited_ms](
                  const Ending& ending, Millis rest, Lease::Clock::time_point deadline) {
    keep(name, token, ending.of_taker(who, waited), rest, deadline);
  };
  // Each node's keys are watched on that node: a change on any makes the supervisor renew at
  // once, and the renewal tells whether a quorum still holds it.
  for (auto& conn : conns_) {
    held.watched.push_back(
        {&conn, {keys_.object("lock", name), keys_.aux("lock", name, "readers")}});
  }
  return held;
}

}  // namespace rcoord::redlock
