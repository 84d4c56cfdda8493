#include "consume.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "errors.hpp"
#include "fd_io.hpp"
#include "signals.hpp"

namespace rcoord::queue {
namespace {

using Clock = std::chrono::steady_clock;

// The message, as the command's standard input: an anonymous in-memory file, so the command
// can read it at its own pace (or seek in it), and any size fits.
class MessageFile {
 public:
  explicit MessageFile(std::string_view bytes) : fd_(memfd_create("rcoord-message", MFD_CLOEXEC)) {
    if (fd_ < 0 || !write_fully(fd_, bytes)) fail();
    if (::lseek(fd_, 0, SEEK_SET) < 0) fail();
  }
  ~MessageFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MessageFile(const MessageFile&) = delete;
  MessageFile& operator=(const MessageFile&) = delete;
  int fd() const { return fd_; }

 private:
  [[noreturn]] void fail() {
    int err = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw Error(kServer,
                fmt::format("cannot hand the message to the command: {}", std::strerror(err)),
                "check the memory limits of this process");
  }
  int fd_;
};

// A termination signal arrived: recorded by a handler or by supervise, or still pending
// (blocked) in the kernel because it came while no wait was under way.
bool stop_requested() {
  if (signals::pending() != 0) return true;
  sigset_t waiting;
  sigset_t managed = signals::managed_set();
  sigpending(&waiting);
  return std::ranges::any_of(std::array{SIGINT, SIGTERM, SIGHUP}, [&](int s) {
    return sigismember(&managed, s) == 1 && sigismember(&waiting, s) == 1;
  });
}

// One consumer: the queue, the options, and what happened so far.
class Consumer {
 public:
  Consumer(Connection& conn, const Keys& keys, std::string_view name, const ConsumeOptions& opts,
           const ConsumeObserver& on_event)
      : conn_(conn), keys_(keys), name_(name), opts_(opts), on_event_(on_event) {}

  Consumed run() {
    signals::install();
    for (;;) {
      if (stop_requested()) return done(kYes);
      if (opts_.max_messages > 0 && result_.handled >= opts_.max_messages) {
        return done(last_code_);
      }
      std::optional<Popped> popped = next();
      if (!popped) return done(kYes);  // stopped while idle, or --idle-exit
      const Message& m = popped->messages.front();
      if (stop_requested()) {
        give_back_unstarted(m);
        return done(kYes);
      }
      if (auto code = handle(m, popped->sent)) return done(*code);
    }
  }

 private:
  Consumed done(int exit_code) {
    result_.exit_code = exit_code;
    return result_;
  }

  // The next message, waiting for it as opts.pop.wait says; nullopt when none came or a
  // signal ended the wait (nothing is held then).
  std::optional<Popped> next() {
    Popped r;
    try {
      r = pop(conn_, keys_, name_, opts_.pop);
    } catch (const Error& e) {
      if (e.code() == kInterrupted) return std::nullopt;
      throw;
    }
    if (r.messages.empty()) return std::nullopt;
    return r;
  }

  // Taken as the signal came: not started, so it goes back as if never delivered.
  void give_back_unstarted(const Message& m) {
    signals::Uninterruptible quiet;
    nack(conn_, keys_, name_, m.id, {Millis(0), m.attempt, true});
  }

  // The lease of message `m`, renewed while the command runs; settle() acks or nacks it.
  Lease lease_of(const Message& m, Clock::time_point sent) {
    Millis ttl = *opts_.pop.ack_timeout;
    Lease lease{ttl, sent, nullptr, nullptr, nullptr, {}};
    lease.renew = [this, &m, ttl](Clock::time_point deadline) {
      DeadlineCap bounded(conn_, deadline);
      bool ours = extend(conn_, keys_, name_, m.id, m.attempt, ttl);
      if (ours && opts_.pop.on_alive) opts_.pop.on_alive();
      return ours;
    };
    return lease;
  }

  // Runs the command for `m`. Returns the exit code to stop with, or nullopt to go on.
  std::optional<int> handle(const Message& m, Clock::time_point sent) {
    MessageFile input(m.message);
    Lease lease = lease_of(m, sent);
    SuperviseOptions sup = opts_.supervise;
    sup.env = {{"RCOORD_QUEUE", name_},
               {"RCOORD_MESSAGE_ID", m.id},
               {"RCOORD_ATTEMPT", std::to_string(m.attempt)}};
    sup.stdin_fd = input.fd();
    sup.graceful = true;
    SuperviseResult result = supervise(sup, lease);
    ++result_.handled;
    last_code_ = result.exit_code;
    if (result.lost) {
      on_event_({result.started ? ConsumeEvent::Kind::kLost : ConsumeEvent::Kind::kLostUnstarted, m,
                 result.lost_reason, 0, NackState::kNotInFlight,
                 result.started ? fate_of(m) : Fate::kUnknown});
      // Never started: back at once, as if not delivered, instead of waiting out the rest of
      // its lease (a no-op when the lease was taken over meanwhile: the nack names the attempt).
      // Reported first: a server that cannot be reached now ends the consumer (exit 3) here.
      if (!result.started) give_back_unstarted(m);
      return std::nullopt;
    }
    if (result.timed_out) {
      // A hung message fails like any other (nacked, dead after --max-attempts); the consumer
      // goes on with the next one.
      on_event_({ConsumeEvent::Kind::kTimedOut, m});
      last_code_ = kTimedOut;
    }
    settle(m, last_code_);
    // A second signal was passed on to the command: it was cut short, and so are we.
    if (result.forwarded_signal != 0) return 128 + result.forwarded_signal;
    return std::nullopt;
  }

  // Where message `m` is after its lease was lost: whether it comes again (kUnknown when the
  // server cannot say).
  Fate fate_of(const Message& m) {
    signals::Uninterruptible quiet;
    try {
      return fate(conn_, keys_, name_, m.id);
    } catch (const Error&) {
      return Fate::kUnknown;
    }
  }

  // After the command: ack on 0, nack otherwise. Must finish even when a signal comes.
  void settle(const Message& m, int exit_code) {
    signals::Uninterruptible quiet;
    if (exit_code == 0) {
      if (!ack(conn_, keys_, name_, m.id, m.attempt)) {
        on_event_({ConsumeEvent::Kind::kAckLate, m, {}, 0, NackState::kNotInFlight, fate_of(m)});
      }
      return;
    }
    NackState state = nack(conn_, keys_, name_, m.id, {opts_.retry_delay, m.attempt, false});
    on_event_({ConsumeEvent::Kind::kFailed, m, {}, exit_code, state});
  }

  Connection& conn_;
  const Keys& keys_;
  std::string name_;
  const ConsumeOptions& opts_;
  const ConsumeObserver& on_event_;
  Consumed result_;
  int last_code_ = kYes;
};

}  // namespace

Consumed consume(Connection& conn, const Keys& keys, std::string_view name,
                 const ConsumeOptions& opts, const ConsumeObserver& on_event) {
  if (!opts.pop.ack_timeout) {
    throw Error(kUsage, "queue consume needs a lease per message", "give --ack-timeout");
  }
  ConsumeOptions one_by_one = opts;
  one_by_one.pop.count = 1;
  return Consumer(conn, keys, name, one_by_one, on_event).run();
}

}  // namespace rcoord::queue
