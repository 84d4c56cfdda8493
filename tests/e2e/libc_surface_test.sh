# Any C library (SPEC §6 "where it runs"): rcoord calls no C library function that glibc 2.28
# lacks, so the same source builds on older glibc and on musl; system calls newer than that go
# through syscall() with a fallback. Read off the binary: every symbol it takes from glibc at a
# version above 2.28 must be one that glibc 2.28 already had under an older version (a
# function moved between libraries, or given a new ABI, keeps its name and gets a new version
# when the binary is linked against a newer glibc). A new wrapper (close_range, pidfd_open,
# execveat, closefrom, ...) fails this test.
#
# What counts is what rcoord's own code calls: the symbols its object files (the two libraries
# and main's object, beside the binary in the build directory) leave for the C library. The
# libraries linked into the binary (libstdc++, OpenSSL, hiredis: CMakeLists.txt's
# RCOORD_BUNDLE_LIBS) are the build machine's, made for its C library; on another C library
# they come from that system, built for it.
source "$(dirname "$0")/lib.sh"

build_dir=$(dirname "$RCOORD")
own_objects=("$build_dir/librcoord_core.a" "$build_dir/librcoord_cli.a"
  "$build_dir/CMakeFiles/rcoord.dir/commands/main.cpp.o")
for object in "${own_objects[@]}"; do
  [ -f "$object" ] || fail "$object not found: run this test from the build directory of $RCOORD"
done
own_undefined=$(nm -u "${own_objects[@]}" 2>/dev/null | awk 'NF >= 2 && $(NF-1) == "U" {print $NF}' | sort -u)
[ "$(wc -l <<<"$own_undefined")" -gt 50 ] || fail "too few undefined symbols read from rcoord's objects"
# only_own: keeps the lines whose first word is a symbol rcoord's objects call.
only_own() { awk 'NR == FNR {own[$1] = 1; next} ($1 in own)' <(echo "$own_undefined") -; }

command -v objdump >/dev/null || fail "objdump not found: install binutils"
file_type=$(od -An -tx1 -N4 "$RCOORD" | tr -d ' ')
[ "$file_type" = 7f454c46 ] || fail "$RCOORD is not an ELF binary"

# Present in glibc 2.28 under an older version: new versions from 2.29 on (libm's faster
# pow/log2/exp/log in 2.29, libpthread merged into libc in 2.32/2.34, stat family without
# __xstat in 2.33, __libc_start_main in 2.34) and __libc_single_threaded (2.32), which
# libstdc++'s headers use only when the glibc they are compiled against has it.
known_older='^(__libc_start_main|__libc_single_threaded|pthread_.*|stat|fstat|lstat|fstatat|stat64|fstat64|lstat64|fstatat64|mknod|mknodat|pow|log2|exp|exp2|log|dl(open|sym|close|error|addr|info)|sem_.*|thrd_.*|mtx_.*|cnd_.*|tss_.*|call_once)'

dynamic=$(objdump -T "$RCOORD" 2>&1) ||
  fail "rcoord has no dynamic symbols (linked statically?): $dynamic"
newer=$(awk '/GLIBC_2\./ {
  v = $0; sub(/.*GLIBC_2\./, "", v); sub(/[^0-9.].*/, "", v); split(v, part, ".")
  if (part[1] + 0 > 28) print $NF " (GLIBC_2." v ")" }' <<<"$dynamic" | only_own | sort -u)
unknown=$(grep -Ev "$known_older \(" <<<"$newer" | sed '/^$/d' || true)
[ -z "$unknown" ] ||
  fail "rcoord uses C library functions newer than glibc 2.28 (call them through syscall() with a fallback): $(tr '\n' ' ' <<<"$unknown")"
count=$(grep -c 'GLIBC_2\.' <<<"$dynamic" || true)
[ "$count" -gt 50 ] || fail "only $count glibc symbols read from $RCOORD: is it linked dynamically?"
pass "no C library function newer than glibc 2.28 among $count glibc symbols"

# musl (Alpine): every function rcoord takes from the C library is one musl's libc defines
# (Debian's musl-dev). Its own libstdc++ would be built for musl there; what the binary itself
# calls is what this checks.
musl_libc=""
for candidate in /usr/lib/*-linux-musl/libc.a /usr/lib/musl/lib/libc.a; do
  [ -f "$candidate" ] && musl_libc=$candidate && break
done
[ -n "$musl_libc" ] || fail "musl's libc.a not found: install musl-dev (scripts/test does)"
musl_defines=$(nm -g --defined-only "$musl_libc" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u)
[ "$(wc -l <<<"$musl_defines")" -gt 1000 ] || fail "too few symbols read from $musl_libc"
ours=$(awk '/GLIBC_/ && /[*]UND[*]/ {print $NF}' <<<"$dynamic" | only_own | sort -u)
missing=$(comm -23 <(echo "$ours") <(echo "$musl_defines") | sed '/^$/d')
[ -z "$missing" ] ||
  fail "rcoord calls C library functions musl lacks (use syscall() or a portable call): $(tr '\n' ' ' <<<"$missing")"
pass "every one of the $(wc -l <<<"$ours") C library functions rcoord calls is one musl defines"

# Not linked statically: a static glibc loads the machine's NSS modules into itself and
# crashes for users that only those modules know (SPEC §6).
needed=$(objdump -p "$RCOORD" | awk '$1 == "NEEDED" {print $2}')
grep -q '^libc\.so' <<<"$needed" || fail "rcoord does not load the C library: linked statically?"
pass "linked against the shared C library"
