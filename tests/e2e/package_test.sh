# Packaging: cmake --install puts the binary, man page and completions in the standard places;
# cpack builds a .deb that dpkg installs into an empty root, where the binary runs, and then
# on a clean Debian made by debootstrap.
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$RCOORD")" && pwd)
[ -f "$BUILD/CPackConfig.cmake" ] || fail "no CPackConfig.cmake next to the binary"

cmake --install "$BUILD" --prefix "$TEST_TMP/prefix" >/dev/null
for f in bin/rcoord share/man/man1/rcoord.1.gz share/bash-completion/completions/rcoord \
  share/zsh/vendor-completions/_rcoord share/fish/vendor_completions.d/rcoord.fish; do
  [ -f "$TEST_TMP/prefix/$f" ] || fail "cmake --install did not place $f"
done
"$TEST_TMP/prefix/bin/rcoord" --version | grep -q '^rcoord ' || fail "installed binary does not run"
gzip -dc "$TEST_TMP/prefix/share/man/man1/rcoord.1.gz" | cmp -s - "$RCOORD_SOURCE_DIR/man/rcoord.1" ||
  fail "the installed man page is not man/rcoord.1"
pass "cmake --install: binary, man page, bash/zsh/fish completions"

if ! command -v dpkg-deb >/dev/null; then
  echo "dpkg-deb not available: skipping the .deb checks"
  exit 0
fi
(cd "$TEST_TMP" && cpack --config "$BUILD/CPackConfig.cmake" -B "$TEST_TMP/pkg" >/dev/null) ||
  fail "cpack failed"
deb=$(ls "$TEST_TMP"/pkg/rcoord_*.deb)
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/rcoord ./usr/share/man/man1/rcoord.1.gz ./usr/share/bash-completion/completions/rcoord; do
  assert_contains "$contents" "$f" "the package holds $f"
done
assert_eq "$(dpkg-deb -f "$deb" Package)" rcoord
assert_contains "$(dpkg-deb -f "$deb" Depends)" libc6

# An empty root with a fresh dpkg database: the package's own files, nothing else.
root="$TEST_TMP/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-not-root -i "$deb" >/dev/null 2>"$TEST_TMP/dpkg.err" ||
  fail "dpkg could not install the package: $(cat "$TEST_TMP/dpkg.err")"
"$root/usr/bin/rcoord" --version | grep -q '^rcoord ' || fail "the packaged binary does not run"
pass "cpack .deb installs with dpkg into an empty root, and rcoord --version runs"

# A clean Debian: a minimal system made by debootstrap from the machine's own Debian mirror
# (as apt is configured), kept next to the build so later runs reuse it (about 200 MB). The
# package installs with plain dpkg (its Depends are met by a bare system) and the binary
# talks to a server.
clean_debian_unavailable() {
  if grep -q '^RCOORD_SANITIZE:STRING=.' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    echo "sanitized build: its binary needs the compiler's runtime; the release pass checks"
    return 0
  fi
  local why=""
  [ "$(id -u)" = 0 ] || why="not root (chroot)"
  command -v debootstrap >/dev/null || why="no debootstrap"
  [ -n "$codename" ] && [ -n "$mirror" ] || why="no Debian mirror in apt's sources"
  [ -z "$why" ] && return 1
  [ "${RCOORD_REQUIRE_CLEAN_DEBIAN:-0}" != 1 ] || fail "cannot test on a clean Debian: $why"
  echo "skipping the clean-Debian check: $why"
}
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT)' 2>/dev/null |
  awk -v suite="$codename" '$2 == suite && $3 == "main" { print $1; exit }')
if clean_debian_unavailable; then exit 0; fi

base="$BUILD/clean-debian-$codename"
if [ ! -f "$base/.complete" ]; then
  rm -rf "$base" "$base.partial"
  # debootstrap downloads with wget: give it apt's proxy, if apt has one
  apt_proxy=""
  eval "$(apt-config shell apt_proxy Acquire::http::Proxy 2>/dev/null)"
  [ -z "$apt_proxy" ] || export http_proxy=$apt_proxy
  # a second try for a download cut short by the network
  for try in 1 2; do
    rm -rf "$base.partial"
    if debootstrap --variant=minbase "$codename" "$base.partial" "$mirror" \
      >"$TEST_TMP/debootstrap.log" 2>&1; then break; fi
    [ "$try" = 1 ] || fail "debootstrap failed: $(tail -n 3 "$TEST_TMP/debootstrap.log" | tr '\n' ' ')"
  done
  mv "$base.partial" "$base"
  touch "$base/.complete"
fi
# The package is purged before and after, so the kept system stays clean between runs.
system=$base
chroot "$system" dpkg --purge rcoord >/dev/null 2>&1 || true
trap 'chroot "$system" dpkg --purge rcoord >/dev/null 2>&1 || true; _cleanup' EXIT
cp "$deb" "$system/tmp/rcoord.deb"
chroot "$system" dpkg -i /tmp/rcoord.deb >"$TEST_TMP/dpkg.log" 2>&1 ||
  fail "dpkg -i on a clean Debian failed: $(tail -n 3 "$TEST_TMP/dpkg.log" | tr '\n' ' ')"
expect 0 chroot "$system" rcoord --version
assert_contains "$OUT" "rcoord "
for f in /usr/share/man/man1/rcoord.1.gz /usr/share/bash-completion/completions/rcoord; do
  [ -f "$system$f" ] || fail "the package did not install $f"
done
start_redis R
expect 0 chroot "$system" rcoord --url "$R_URL" lock acquire from-debian --ttl 60s
assert_eq "$(redis-cli -p "$R_PORT" exists 'rcoord:{lock:from-debian}')" 1 "the lock is on the server"
pass "the .deb installs on a clean $codename (debootstrap, plain dpkg -i): rcoord runs and locks"
