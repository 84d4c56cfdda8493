#pragma once
/// Signals: messages to the processes waiting on a channel at the moment they are sent
/// (pub/sub: nothing is kept for a waiter that comes later; see latch.hpp for that).
///
/// Channels and keys: a waiter subscribes to a pub/sub channel of its own,
/// `<prefix>{signal:CH}:<waiter id>`, then registers its id in the sorted set
/// `<prefix>{signal:CH}`. A send publishes to the registered waiters' own channels (all of
/// them, or one picked at random) and takes them out of the registry: a waiter takes one
/// message per channel. PUBLISH says whether the waiter's connection is still there, so a
/// waiter that died is never counted and never swallows a `--one` message.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"

namespace rcoord::signaling {

struct Sent {
  std::string channel;
  std::int64_t receivers = 0;  ///< how many waiters got it (0 or 1 with --one)
};

/// Delivers `data` to every waiter of `channel`, or with `one` to exactly one waiter chosen
/// at random (skipping, and dropping, waiters whose connection is gone).
Sent send(Connection& conn, const Keys& keys, std::string_view channel, std::string_view data,
          bool one);

struct WaitOptions {
  std::optional<Millis> timeout;  ///< nullopt: no limit
  bool all = false;               ///< one message on every channel, not just the first one
};

struct Received {
  bool received = false;
  std::string channel;
  std::string data;
};

struct Waited {
  bool complete = false;  ///< the first message came (with `all`: one on every channel)
  /// Without `all`: the message received, or when none came, one entry per channel.
  /// With `all`: one entry per channel, in the order given.
  std::vector<Received> messages;
  std::int64_t waited_ms = 0;
  /// Channels of `--one` messages that reached this waiter after it had what it wanted and
  /// that could not be handed on to another waiter (nobody else waited).
  std::vector<std::string> dropped;
};

/// Waits for a message on any of `channels` (with opts.all: on each of them). Duplicate
/// channels count once. A `--one` message that this waiter got but does not consume (a
/// second one, or one that came while it was leaving) is handed on to another waiter.
/// Throws Error(kInterrupted) on a signal, after leaving the registries.
Waited wait(Connection& conn, const Keys& keys, const std::vector<std::string>& channels,
            const WaitOptions& opts);

}  // namespace rcoord::signaling
