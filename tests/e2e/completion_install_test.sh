# The completions as a user meets them after a real install: `cmake --install` into /usr/local
# (the default prefix, as the quickstart installs) and into /usr (as the .deb installs), then
# bash, zsh and fish started as on a fresh login, on a terminal: an empty HOME, no rc file but
# what the system installs, PATH as Debian gives root. Typing `rcoord lo<Tab>` must make it
# `rcoord lock` in each. Before the install, the same keys complete nothing: the completion
# comes from the files installed, found where each shell looks by itself.
#
# Nothing of the machine changes: the test runs in a mount namespace of its own, where /usr
# and /etc are overlays whose writes go to a throwaway layer. That needs root; without it the
# test is skipped (exit 77), or fails under RCOORD_REQUIRE_CLEAN_DEBIAN=1 (scripts/test). A
# sanitized build skips it too: it installs the same files as the release build.
#
# zsh has no completion at all until compinit runs, and Debian's /etc/zsh/zshrc runs it only on
# Ubuntu: the zsh user's ~/.zshrc is Debian's recommended one for new users
# (/etc/zsh/newuser.zshrc.recommended, which zsh-newuser-install offers), which runs compinit
# and leaves fpath as the system sets it.
if [ "${_RCOORD_MOUNT_NS:-}" != "$$" ]; then
  # What is installed where does not depend on the sanitizers: the release pass checks it.
  if grep -qE '^RCOORD_SANITIZE:[A-Z]+=.+' "$(dirname "${RCOORD_BIN:?}")/CMakeCache.txt" 2>/dev/null; then
    echo "SKIPPED: a sanitized build installs the same files as the release build"
    exit 77
  fi
  why=""
  [ "$(id -u)" = 0 ] || why="not root"
  [ -n "$why" ] || command -v unshare >/dev/null || why="no unshare"
  [ -n "$why" ] || unshare --mount --propagation private true 2>/dev/null ||
    why="cannot make a mount namespace"
  if [ -n "$why" ]; then
    if [ "${RCOORD_REQUIRE_CLEAN_DEBIAN:-0}" = 1 ]; then
      echo "FAIL: cannot install for real in a throwaway way: $why" >&2
      exit 1
    fi
    echo "SKIPPED: installing for real in a throwaway way needs a mount namespace: $why"
    exit 77
  fi
  # The same process goes on inside the new namespace (exec keeps the PID ctest waits for).
  _RCOORD_MOUNT_NS=$$ exec unshare --mount --propagation private -- bash "$0" "$@"
fi

source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$RCOORD")" && pwd)
for tool in bash zsh fish python3; do
  command -v "$tool" >/dev/null || fail "$tool not found: install it (scripts/test does)"
done
[ -f /usr/share/bash-completion/bash_completion ] ||
  fail "bash-completion is not installed: install it (scripts/test does)"
[ -d /etc/fish ] || fail "fish has no /etc/fish"

# Where the install would write, without writing: every file must be under /usr or /etc, the
# two directories the overlays below make throwaway.
for prefix in /usr/local /usr; do
  dest=$TEST_TMP/dest${prefix//\//-}
  DESTDIR="$dest" cmake --install "$BUILD" --prefix "$prefix" >/dev/null
  outside=$(cd "$dest" && find . -type f | grep -vE '^\./(usr|etc)/' || true)
  [ -z "$outside" ] || fail "an install into $prefix writes outside /usr and /etc: $outside"
done

# throwaway_system: /usr and /etc as they are, with every write from now on going to a fresh
# layer in memory; the layer of an earlier call is dropped.
layers=$TEST_TMP/layers
release_system() {
  if mountpoint -q "$layers"; then umount -l /etc /usr "$layers"; fi
}
throwaway_system() {
  local dir
  release_system
  mkdir -p "$layers"
  mount -t tmpfs -o mode=755 rcoord-throwaway "$layers"
  for dir in /etc /usr; do
    mkdir -p "$layers$dir/upper" "$layers$dir/work"
    mount -t overlay rcoord-throwaway -o \
      "lowerdir=$dir,upperdir=$layers$dir/upper,workdir=$layers$dir/work" "$dir"
  done
}
trap 'release_system; _cleanup' EXIT

# type_keys.py SHELL ARGS...: starts the shell on a pseudo-terminal, waits for its prompt, types
# `rcoord lo`, Tab, then (at the start of the line) `printf '<%s>' ` and Return, and prints
# what that printf printed: `<rcoord><lock>` once `lo` was completed to `lock`.
cat >"$TEST_TMP/type_keys.py" <<'PY'
import fcntl, os, pty, re, select, struct, sys, termios, time

pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
seen = b""

def read_until(pattern, timeout, quiet=0.0):
    """Reads until pattern is in the output and then nothing more came for `quiet` s."""
    global seen
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    while time.monotonic() < deadline:
        found = pattern is None or re.search(pattern, seen)
        if found and time.monotonic() - last >= quiet:
            return found
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            last = time.monotonic()
    return None

def fail(why):
    sys.stderr.write(why + "\n--- the terminal showed:\n" + seen.decode(errors="replace") + "\n")
    sys.exit(1)

timeout = float(os.environ.get("TTY_TIMEOUT", "20"))
# A first command proves the shell reads its input; the quiet time after its output lets it
# draw the prompt and start its line editor, so the keys below reach the editor.
os.write(fd, b"echo READY''42\r")
if not read_until(rb"READY42", timeout, quiet=0.5):
    fail("the shell never ran a first command")
os.write(fd, b"rcoord lo\t")
read_until(None, timeout, quiet=0.5)
os.write(fd, b"\x01printf '<%s>' \r")
match = read_until(rb"<rcoord>(<[^<>\r\n]*>)*", timeout, quiet=0.3)
if not match:
    fail("the printf after the Tab printed nothing")
print(match.group(0).decode())
os.write(fd, b"exit\r")
PY

# complete_in SHELL: what `rcoord lo<Tab>` became in SHELL, started as a login shell with a
# fresh HOME and nothing else of this process's environment.
complete_in() {
  local shell=$1 home
  home=$(mktemp -d "$TEST_TMP/home-$shell.XXXXXX")
  if [ "$shell" = zsh ]; then
    if [ -f /etc/zsh/newuser.zshrc.recommended ]; then
      cp /etc/zsh/newuser.zshrc.recommended "$home/.zshrc"
    else
      printf 'autoload -Uz compinit\ncompinit\n' >"$home/.zshrc"
    fi
  fi
  (cd "$home" && env -i HOME="$home" USER=root LOGNAME=root SHELL="$(command -v "$shell")" \
    TERM=xterm PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TTY_TIMEOUT="$(seconds "$(scaled 20000)")" python3 "$TEST_TMP/type_keys.py" "$shell" -l -i) ||
    fail "$shell: typing in it failed (above)"
}

throwaway_system
for shell in bash zsh fish; do
  assert_eq "$(complete_in "$shell")" "<rcoord><lo>" "$shell completes nothing before the install"
done
pass "before the install, no shell completes rcoord"

for prefix in /usr/local /usr; do
  throwaway_system
  cmake --install "$BUILD" --prefix "$prefix" >"$TEST_TMP/install.log" ||
    fail "cmake --install --prefix $prefix failed: $(cat "$TEST_TMP/install.log")"
  for shell in bash zsh fish; do
    assert_eq "$(complete_in "$shell")" "<rcoord><lock>" "$shell after an install into $prefix"
  done
  pass "after cmake --install --prefix $prefix, stock bash, zsh and fish complete rcoord lo<Tab> to lock"
done
