#pragma once
/// `queue consume`: a command run for each message of a queue, with the message on its
/// standard input, under the message's lease, renewed while the command runs (supervise.hpp).
/// Exit 0 acks the message; any other code nacks it (ready again, or dead after its last
/// allowed delivery). Never prints: what the caller reports comes to it as ConsumeEvents, at
/// the moment it happens.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "duration.hpp"
#include "keys.hpp"
#include "queue.hpp"
#include "supervise.hpp"

namespace rcoord::queue {

struct ConsumeOptions {
  /// How messages are taken: ack_timeout is each message's lease (it must be set),
  /// max_attempts its deliveries, wait how long to wait for one before returning
  /// (Millis::max(): forever). One at a time, whatever `count` says.
  PopOptions pop;
  /// The command, kill_grace, margin and max_run. The message's environment (RCOORD_QUEUE,
  /// RCOORD_MESSAGE_ID, RCOORD_ATTEMPT), its standard input and graceful mode are added per
  /// message.
  SuperviseOptions supervise;
  Millis retry_delay{0};          ///< a failed message is ready again only after this long
  std::int64_t max_messages = 0;  ///< return after this many messages; 0: no limit
};

/// Something the caller may want to report about one message, as it happens.
struct ConsumeEvent {
  enum class Kind {
    kLost,           ///< its lease was lost while the command ran (terminated; see fate)
    kLostUnstarted,  ///< its lease was past its stop point at the start: command not run
    kTimedOut,       ///< the command ran past max_run and was stopped; it fails with kTimedOut
    kAckLate,        ///< the command succeeded, but the lease was gone before the ack (fate)
    kFailed,         ///< the command failed: the message was nacked
  };
  Kind kind;
  const Message& message;
  std::string lost_reason{};                  ///< kLost, kLostUnstarted: why
  int exit_code = 0;                          ///< kFailed: the command's code
  NackState state = NackState::kNotInFlight;  ///< kFailed: where the message is now
  /// kLost, kAckLate: where the message is now (whether it is delivered again).
  Fate fate = Fate::kUnknown;
};

using ConsumeObserver = std::function<void(const ConsumeEvent&)>;

struct Consumed {
  /// The exit code of `queue consume`: 0 when stopped by a signal between messages or when
  /// no message came within the wait; after max_messages, the last command's code
  /// (kTimedOut when it was stopped); 128+N when a second signal N cut a command short.
  int exit_code = 0;
  std::int64_t handled = 0;  ///< messages handed to the command
};

/// Takes the messages of queue `name` one at a time and runs the command for each, until a
/// termination signal (the first one lets the running command finish its message), the
/// wait runs out, or max_messages were handled. A message taken just as a signal came is
/// given back uncounted. Throws Error(kConnection/kServer) when Redis fails (a message then
/// comes back when its lease ends), and what supervise() throws.
Consumed consume(Connection& conn, const Keys& keys, std::string_view name,
                 const ConsumeOptions& opts, const ConsumeObserver& on_event);

}  // namespace rcoord::queue
