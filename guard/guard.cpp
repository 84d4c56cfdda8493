// rcoord's guard as a program of its own (see Guard in src/supervise.cpp): a process that
// outlives rcoord to kill the command's whole group when rcoord dies, or when the lease's kill
// point passes unrenewed. rcoord starts it with vfork and exec from a memory file, so that
// rcoord's pages are not shared with it (a forked guard made rcoord copy each page it wrote
// afterwards, some of them between a take and the command's start), and so that its start
// runs no C library set-up. Built freestanding for x86-64 Linux: no C library, system calls
// made directly.
//
// It is given: fd 3, the read end of a pipe whose other end only rcoord holds (its end of file
// means rcoord died); fd 4, the memory it shares with rcoord (Guard::Shared: the group to kill
// as an int32 at offset 0, 0 when none; the kill point as an int64 of CLOCK_MONOTONIC ns at
// offset 8, 0 when none; the last group killed for its kill point as an int32 at offset 16);
// argv[1], how often to look at that memory, in ns. Every signal but SIGKILL stays blocked
// (rcoord blocks them before the exec), and fds 0-2 are /dev/null.

namespace {

using i32 = int;
using i64 = long;

constexpr long kRead = 0;
constexpr long kMmap = 9;
constexpr long kKill = 62;
constexpr long kPrctl = 157;
constexpr long kClockGettime = 228;
constexpr long kExitGroup = 231;
constexpr long kPpoll = 271;

constexpr int kDeathPipe = 3;
constexpr int kSharedFd = 4;
constexpr i64 kNsPerSecond = 1'000'000'000;

long call(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  long result;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return result;
}

struct Shared {
  i32 group;
  i32 padding;
  i64 kill_by;
  i32 struck;
};

struct Timespec {
  i64 seconds;
  i64 nanoseconds;
};

struct PollFd {
  i32 fd;
  short events;
  short revents;
};

i64 now() {
  Timespec t{};
  call(kClockGettime, 1 /* CLOCK_MONOTONIC */, reinterpret_cast<long>(&t));
  return t.seconds * kNsPerSecond + t.nanoseconds;
}

i64 parse_ns(const char* text) {
  i64 value = 0;
  for (; text != nullptr && *text >= '0' && *text <= '9'; ++text)
    value = value * 10 + (*text - '0');
  return value > 0 ? value : kNsPerSecond;
}

void kill_group(i32 group) { call(kKill, -group, 9 /* SIGKILL */); }

// Waits up to `wait_ns` for the death notice; true when rcoord died (or the pipe failed).
bool rcoord_died(i64 wait_ns) {
  PollFd pipe{kDeathPipe, 1 /* POLLIN */, 0};
  Timespec timeout{wait_ns / kNsPerSecond, wait_ns % kNsPerSecond};
  long ready =
      call(kPpoll, reinterpret_cast<long>(&pipe), 1, reinterpret_cast<long>(&timeout), 0, 8);
  if (ready <= 0) return false;  // the time is up (or EINTR): look again
  char byte = 0;
  long n = call(kRead, kDeathPipe, reinterpret_cast<long>(&byte), 1);
  return n == 0 || (n < 0 && n != -4 /* EINTR */ && n != -11 /* EAGAIN */);
}

[[noreturn]] void serve(Shared* shared, i64 check_every) {
  for (;;) {
    i64 t = now();
    i32 group = __atomic_load_n(&shared->group, __ATOMIC_SEQ_CST);
    i64 kill_by = __atomic_load_n(&shared->kill_by, __ATOMIC_SEQ_CST);
    // A group killed for its kill point is not killed again (nor waited for).
    bool due =
        group > 0 && kill_by > 0 && group != __atomic_load_n(&shared->struck, __ATOMIC_SEQ_CST);
    if (due && t >= kill_by) {
      kill_group(group);
      __atomic_store_n(&shared->struck, group, __ATOMIC_SEQ_CST);
      due = false;
    }
    i64 wait = check_every;
    if (due && kill_by - t < wait) wait = kill_by - t;
    if (rcoord_died(wait)) break;
  }
  i32 last = __atomic_load_n(&shared->group, __ATOMIC_SEQ_CST);
  if (last > 0) kill_group(last);
  call(kExitGroup, 0);
  __builtin_unreachable();
}

}  // namespace

extern "C" [[noreturn]] void guard_main(long* stack) {
  auto argc = stack[0];
  auto** argv = reinterpret_cast<char**>(stack + 1);
  call(kPrctl, 15 /* PR_SET_NAME */, reinterpret_cast<long>("rcoord-guard"));
  long mapped =
      call(kMmap, 0, 4096, 3 /* PROT_READ | PROT_WRITE */, 1 /* MAP_SHARED */, kSharedFd, 0);
  if (mapped < 0 && mapped > -4096) {
    // Nothing to watch: still kill nothing, but outlive rcoord no longer than it lives.
    while (!rcoord_died(kNsPerSecond)) {
    }
    call(kExitGroup, 1);
  }
  serve(reinterpret_cast<Shared*>(mapped), parse_ns(argc > 1 ? argv[1] : nullptr));
}

// The entry point: the kernel leaves argc and argv on the stack; the stack is aligned for the
// call as the ABI wants.
asm(".globl _start\n"
    "_start:\n"
    "  mov %rsp, %rdi\n"
    "  and $-16, %rsp\n"
    "  call guard_main\n");
