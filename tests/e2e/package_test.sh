# Packaging: cmake --install puts the binary, man page and completions in the standard places;
# cpack builds a .deb that dpkg installs into an empty root, where the binary runs.
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$RCOORD")" && pwd)
[ -f "$BUILD/CPackConfig.cmake" ] || fail "no CPackConfig.cmake next to the binary"

cmake --install "$BUILD" --prefix "$TEST_TMP/prefix" >/dev/null
for f in bin/rcoord share/man/man1/rcoord.1 share/bash-completion/completions/rcoord \
  share/zsh/vendor-completions/_rcoord share/fish/vendor_completions.d/rcoord.fish; do
  [ -f "$TEST_TMP/prefix/$f" ] || fail "cmake --install did not place $f"
done
"$TEST_TMP/prefix/bin/rcoord" --version | grep -q '^rcoord ' || fail "installed binary does not run"
pass "cmake --install: binary, man page, bash/zsh/fish completions"

if ! command -v dpkg-deb >/dev/null; then
  echo "dpkg-deb not available: skipping the .deb checks"
  exit 0
fi
(cd "$TEST_TMP" && cpack --config "$BUILD/CPackConfig.cmake" -B "$TEST_TMP/pkg" >/dev/null) ||
  fail "cpack failed"
deb=$(ls "$TEST_TMP"/pkg/rcoord_*.deb)
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/rcoord ./usr/share/man/man1/rcoord.1 ./usr/share/bash-completion/completions/rcoord; do
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
