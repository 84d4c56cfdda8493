#pragma once
/// The systemd notification protocol (sd_notify(3)) without libsystemd: one datagram per
/// message to the AF_UNIX socket named by $NOTIFY_SOCKET (a path, or `@name` for an abstract
/// socket). Used by the run forms and `queue consume` (SPEC §6 "service managers and
/// traces"): READY=1 once the command has started, STATUS= while waiting, WATCHDOG=1 after
/// each renewal, STOPPING=1 when giving back. Outside systemd ($NOTIFY_SOCKET unset) every
/// call does nothing.

#include <string>
#include <string_view>

namespace rcoord::notify {

/// Takes the notification variables out of this process's environment ($NOTIFY_SOCKET,
/// $WATCHDOG_USEC, $WATCHDOG_PID), keeping them for the calls below, as sd_notify's
/// unset_environment does: rcoord is the unit's main process and speaks for it, so a command
/// it runs does not inherit them (it could otherwise report READY=1 or WATCHDOG=1 in
/// rcoord's stead, and NotifyAccess=main would refuse its messages anyway). Call it once,
/// first thing in main.
void adopt_environment();

/// Whether a socket to notify was found by adopt_environment().
bool active();

/// Whether the service manager expects WATCHDOG=1: $WATCHDOG_USEC was set (and
/// $WATCHDOG_PID, when set, was this process).
bool watchdog_wanted();

/// Sends `message` (newline-separated assignments, e.g. "READY=1\nSTATUS=…") as one
/// datagram. True when sent; false when not under systemd or the send failed (a
/// notification is a courtesy: its failure never stops the command).
bool send(std::string_view message);

/// A STATUS= line: `text` with any newline turned into a space, so it stays one assignment.
std::string status(std::string_view text);

}  // namespace rcoord::notify
