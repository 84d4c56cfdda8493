# Packaging: cmake --install puts the binary, man page, completions and licence in the standard
# places; cpack builds a .deb that lintian passes without an error or a warning, that dpkg
# installs into an empty root, where the binary runs, and that apt installs on a clean Debian
# made by debootstrap, fetching the libraries its Depends name.
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$RCOORD")" && pwd)
[ -f "$BUILD/CPackConfig.cmake" ] || fail "no CPackConfig.cmake next to the binary"

cmake --install "$BUILD" --prefix "$TEST_TMP/prefix" >/dev/null
for f in bin/rcoord share/man/man1/rcoord.1.gz share/bash-completion/completions/rcoord \
  share/zsh/site-functions/_rcoord share/fish/vendor_completions.d/rcoord.fish \
  share/doc/rcoord/copyright share/doc/rcoord/README.md share/doc/rcoord/docs/guarantees.md \
  share/man/man1/rcoord-lock.1.gz share/man/man1/rcoord-queue.1.gz; do
  [ -f "$TEST_TMP/prefix/$f" ] || fail "cmake --install did not place $f"
done
"$TEST_TMP/prefix/bin/rcoord" --version | grep -q '^rcoord ' || fail "installed binary does not run"
gzip -dc "$TEST_TMP/prefix/share/man/man1/rcoord.1.gz" | cmp -s - "$RCOORD_SOURCE_DIR/man/rcoord.1" ||
  fail "the installed man page is not man/rcoord.1"
pass "cmake --install: binary, man page, bash/zsh/fish completions, copyright, the docs"

if ! command -v dpkg-deb >/dev/null; then
  echo "dpkg-deb not available: skipping the .deb checks"
  exit 0
fi
command -v lintian >/dev/null || fail "lintian not found: install it (scripts/test does)"
# The maintainer is whoever builds the package: RCOORD_PACKAGE_MAINTAINER, else DEBFULLNAME and
# DEBEMAIL. Without either, cpack says what to set instead of making up an address.
maintainer=""
if ! grep -q '^RCOORD_PACKAGE_MAINTAINER:STRING=.' "$BUILD/CMakeCache.txt"; then
  cpack_without_maintainer() {
    (cd "$TEST_TMP" && env -u DEBEMAIL -u DEBFULLNAME cpack --config "$BUILD/CPackConfig.cmake" \
      -B "$TEST_TMP/nopkg" 2>&1)
  }
  if out=$(cpack_without_maintainer); then fail "cpack made a .deb with no maintainer"; fi
  assert_contains "$out" "RCOORD_PACKAGE_MAINTAINER" "cpack says how to name the maintainer"
  export DEBFULLNAME="rcoord package test" DEBEMAIL=package-test@example.org
  maintainer="$DEBFULLNAME <$DEBEMAIL>"
fi
(cd "$TEST_TMP" && cpack --config "$BUILD/CPackConfig.cmake" -B "$TEST_TMP/pkg" >"$TEST_TMP/cpack.log" 2>&1) ||
  fail "cpack failed: $(tail -n 5 "$TEST_TMP/cpack.log")"
deb=$(ls "$TEST_TMP"/pkg/rcoord_*.deb)
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/rcoord ./usr/share/man/man1/rcoord.1.gz ./usr/share/bash-completion/completions/rcoord \
  ./usr/share/doc/rcoord/copyright ./usr/share/doc/rcoord/changelog.gz; do
  assert_contains "$contents" "$f" "the package holds $f"
done
assert_eq "$(dpkg-deb -f "$deb" Package)" rcoord
[ -z "$maintainer" ] || assert_eq "$(dpkg-deb -f "$deb" Maintainer)" "$maintainer"
# dpkg-shlibdeps: every shared library the binary loads, each with a minimum version.
depends=$(dpkg-deb -f "$deb" Depends)
# The libraries linked in (RCOORD_BUNDLE_LIBS, the default) leave the C library alone.
libraries=(libc6)
grep -q '^RCOORD_BUNDLE_LIBS:BOOL=ON' "$BUILD/CMakeCache.txt" ||
  libraries+=('libstdc\+\+6' libssl3 libhiredis)
for lib in "${libraries[@]}"; do
  grep -qE "(^|, )$lib[^ ,]* \(>= [^)]+\)" <<<"$depends" || fail "Depends has no versioned $lib: $depends"
done
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/rcoord/changelog.gz | gzip -dc |
  head -n 1 | grep -q "^rcoord ($(dpkg-deb -f "$deb" Version)) " ||
  fail "the changelog's latest entry is not for the package's version"

# lintian at its default profile: no error, no warning. (An override is in the package, with
# its reason in a comment: packaging/lintian-overrides, for the bundled binary's fixed address.)
rc=0
lintian --fail-on error,warning "$deb" >"$TEST_TMP/lintian.log" 2>&1 || rc=$?
if grep -E '^[EW]: ' "$TEST_TMP/lintian.log"; then
  fail "lintian reports errors or warnings (above) on the .deb"
fi
[ "$rc" = 0 ] || fail "lintian failed (exit $rc): $(cat "$TEST_TMP/lintian.log")"
pass "the .deb: versioned Depends, copyright, changelog; lintian reports no error or warning"

# An empty root with a fresh dpkg database: the package's own files, nothing else.
root="$TEST_TMP/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-not-root -i "$deb" >/dev/null 2>"$TEST_TMP/dpkg.err" ||
  fail "dpkg could not install the package: $(cat "$TEST_TMP/dpkg.err")"
"$root/usr/bin/rcoord" --version | grep -q '^rcoord ' || fail "the packaged binary does not run"
pass "cpack .deb installs with dpkg into an empty root, and rcoord --version runs"

# A clean Debian: a minimal system made by debootstrap from the machine's own Debian mirror
# (as apt is configured), kept next to the build so later runs reuse it (about 200 MB). apt
# installs the package there, with the libraries its Depends name from that mirror (a bare
# system has not all of them: what dpkg-shlibdeps wrote must be enough), and the binary talks
# to a server.
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

# debootstrap downloads with wget, and apt inside the system must reach the mirror too: give
# both apt's proxy, if apt has one
apt_proxy=""
eval "$(apt-config shell apt_proxy Acquire::http::Proxy 2>/dev/null)"
[ -z "$apt_proxy" ] || export http_proxy=$apt_proxy
base="$BUILD/clean-debian-$codename"
if [ ! -f "$base/.complete" ]; then
  rm -rf "$base" "$base.partial"
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
# The package and the libraries it brought are purged before and after, so the kept system
# stays clean between runs.
system=$base
in_system() { chroot "$system" env DEBIAN_FRONTEND=noninteractive "$@"; }
purge() { in_system apt-get purge -y -qq --autoremove rcoord >/dev/null 2>&1 || true; }
purge
trap 'purge; _cleanup' EXIT
cp "$deb" "$system/tmp/rcoord.deb"
chmod 644 "$system/tmp/rcoord.deb"
{ in_system apt-get update -qq && in_system apt-get install -y -qq --no-install-recommends /tmp/rcoord.deb; } \
  >"$TEST_TMP/apt.log" 2>&1 ||
  fail "apt could not install the .deb on a clean Debian: $(tail -n 3 "$TEST_TMP/apt.log" | tr '\n' ' ')"
expect 0 chroot "$system" rcoord --version
assert_contains "$OUT" "rcoord "
for f in /usr/share/man/man1/rcoord.1.gz /usr/share/bash-completion/completions/rcoord \
  /usr/share/zsh/vendor-completions/_rcoord /usr/share/fish/vendor_completions.d/rcoord.fish \
  /usr/share/doc/rcoord/copyright /usr/share/doc/rcoord/changelog.gz; do
  [ -f "$system$f" ] || fail "the package did not install $f"
done
start_redis R
expect 0 chroot "$system" rcoord --url "$R_URL" lock acquire from-debian --ttl 60s
assert_eq "$(redis-cli -p "$R_PORT" exists 'rcoord:{lock:from-debian}')" 1 "the lock is on the server"
pass "the .deb installs on a clean $codename (debootstrap, apt with its Depends): rcoord runs and locks"
