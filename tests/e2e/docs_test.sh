# The documentation keeps up with the code: every command, verb and option that --help shows
# appears in the man pages (the global options in rcoord(1), a group's verbs and options in
# rcoord-GROUP(1)) and in each completion file, and every option the pages and the man
# page show is one --help shows; bash completion really completes. And it stays one piece
# (docs_rules.py): the exit codes defined in rcoord(1) alone, the guarantees stated in
# docs/guarantees.md alone, no broken link or #anchor between the pages. That the examples of
# the pages work is docs_examples_test's job.
source "$(dirname "$0")/lib.sh"
SRC=${RCOORD_SOURCE_DIR:?}
MAN=$SRC/man/rcoord.1
COMPLETIONS=("$SRC/completions/rcoord.bash" "$SRC/completions/_rcoord" "$SRC/completions/rcoord.fish")

# the subcommands listed in a --help text (under any group heading of the root help)
subcommands() {
  awk '/^(Subcommands|Primitives|Operator commands):$/ { on = 1; next }
       /^[^ ]/ { on = 0 } on && NF { print $1 }'
}
# long options of a --help text (--help itself excluded)
long_options() { grep -oE -- '--[a-z][a-z0-9-]+' | grep -vx -- '--help' | sort -u; }
# short options of a --help text
short_options() { grep -oE -- '^ +-[a-zA-Z][ ,]' | tr -d ' ,' | sort -u; }

# example_paths NAMES...: for each rcoord command in the examples of a --help text (from its
# first "Example" line on), the words from the first one that names a command in NAMES to
# the end of that command (global options before the group, e.g. --json, are passed over).
example_paths() {
  awk -v groups="$*" '
    BEGIN { n = split(groups, g, " "); for (i = 1; i <= n; i++) is_group[g[i]] = 1 }
    /^Examples?( |:)/ { on = 1 }
    !on { next }
    { for (i = 1; i <= NF; i++) {
        if ($i !~ /(^|[(])rcoord$/) continue
        path = ""
        for (j = i + 1; j <= NF; j++) {
          if ($j ~ /^[|;&)]/ || $j == "&&" || $j == "||") break
          if (path == "" && !($j in is_group)) continue
          if (path != "" && $j !~ /^[a-z]+$/) break
          path = path (path == "" ? "" : " ") $j
        }
        print (path == "" ? "?" : path)
      } }'
}

# check_examples PATH HELP: the --help text of `rcoord PATH` shows an example of PATH itself,
# and every example it shows runs a verb of the same group (a group showing another group's
# examples misleads; a verb may point on to another verb of its group).
check_examples() {
  local path=$1 help=$2 example own=0
  while IFS= read -r example; do
    case "$example " in "$path "*) own=1 ;; esac
    case "$example " in
      "${path%% *} "*) ;;
      *) fail "rcoord $path --help shows an example of another command: rcoord $example" ;;
    esac
  done < <(echo "$help" | example_paths "$COMMANDS")
  [ "$own" = 1 ] || fail "rcoord $path --help shows no example of its own"
}

# check_in_docs WORD WHERE [PAGE]: WORD is in the man page PAGE (default rcoord(1)) and in every
# completion file
check_in_docs() {
  local word=$1 where=$2 page=${3:-$MAN} file
  # the man pages escape dashes as \-
  grep -qF -- "${word//-/\\-}" "$page" || fail "'$word' ($where) is not in $(basename "$page")"
  for file in "${COMPLETIONS[@]}"; do
    if [[ $word =~ ^-[a-zA-Z]$ && $file == *.fish ]]; then
      grep -qE -- "-s ${word#-}( |$)" "$file" || fail "'$word' ($where) is not in $(basename "$file")"
      continue
    fi
    grep -qF -- "$word" "$file" || grep -qF -- "${word#--}" "$file" ||
      fail "'$word' ($where) is not in $(basename "$file")"
  done
}

# the generated tables of the completion files are current
python3 "$SRC/scripts/gen-completions" --check "$RCOORD" || fail "run scripts/gen-completions"
pass "completion tables are generated from the current --help"

# the pages of the groups, written at build time from --help (scripts/gen-man)
build=$(dirname "$RCOORD")
[ -f "$build/CMakeCache.txt" ] || build=$(dirname "$build")  # a cross build's wrapper is in tests/
PAGES=$build/man/man1

checked=0
root_help=$("$RCOORD" --help)
echo "$root_help" | long_options >"$TEST_TMP/help-options"
for opt in $(echo "$root_help" | long_options) $(echo "$root_help" | short_options); do
  check_in_docs "$opt" "global option"
  checked=$((checked + 1))
done
COMMANDS=$(echo "$root_help" | subcommands | tr '\n' ' ')
# check_command WORDS...: the command `rcoord WORDS` (a group, a verb, or a group within a
# group such as `complete recent`) and everything under it.
check_command() {
  local help sub opt named_in=$MAN page=$PAGES/rcoord-$1.1
  case $1 in version | help) page=$MAN ;; esac
  [ "$#" -eq 1 ] || named_in=$page  # a group is named in rcoord(1), a verb in its group's page
  check_in_docs "${*: -1}" "command of rcoord $*" "$named_in"
  help=$("$RCOORD" "$@" --help)
  echo "$help" | long_options | sed "s/^/$1 /" >>"$TEST_TMP/group-options" || true  # or none
  check_examples "$*" "$help"
  for sub in $(echo "$help" | subcommands); do check_command "$@" "$sub"; done
  for opt in $(echo "$help" | long_options) $(echo "$help" | short_options); do
    check_in_docs "$opt" "$* option" "$page"
    checked=$((checked + 1))
  done
}
for group in $COMMANDS; do check_command "$group"; done
[ "$checked" -gt 20 ] || fail "found only $checked options in --help: the parsing broke"
pass "$checked options of --help appear in the man pages and every completion file"
assert_contains "$root_help" "Primitives:"
assert_contains "$root_help" "Operator commands:"
pass "every command and verb shows examples of its own; rcoord --help groups the commands"

cut -d' ' -f2 "$TEST_TMP/group-options" >>"$TEST_TMP/help-options"
python3 "$SRC/tests/e2e/docs_rules.py" "$SRC" "$TEST_TMP/help-options" >"$TEST_TMP/rules.out" ||
  fail "the documentation breaks its rules (see above)"
pass "one home for the exit codes and for the guarantees, links and anchors whole, every option shown in --help: $(cat "$TEST_TMP/rules.out")"

command -v mandoc >/dev/null || fail "mandoc not found: install it (scripts/test does)"
command -v man >/dev/null || fail "man not found: install man-db (scripts/test does)"
assert_eq "$(mandoc -Tlint "$MAN" 2>&1 || true)" "" "mandoc -Tlint rcoord.1"
assert_eq "$(groff -man -ww -z "$MAN" 2>&1 || true)" "" "groff warnings of rcoord.1"
# rcoord(1) keeps what every command shares; what a group does is on the group's page
lines=$(MANWIDTH=80 man -l "$MAN" 2>/dev/null | wc -l)
[ "$lines" -le 400 ] || fail "rcoord(1) is $lines lines at 80 columns (at most 400: move a group's matters to its page)"
pass "rcoord(1) is lint-clean and $lines lines at 80 columns"

# --- a man page per group, written at build time from --help (scripts/gen-man) --------------
pages=0
for group in $COMMANDS; do
  case $group in version | help) continue ;; esac
  page=$PAGES/rcoord-$group.1
  [ -f "$page" ] || fail "no man page rcoord-$group(1) in $PAGES: build the target rcoord_group_man"
  while read -r opt; do
    grep -qF -- "${opt//-/\\-}" "$page" || fail "'$opt' (rcoord $group) is not in rcoord-$group(1)"
  done < <(awk -v g="$group" '$1 == g { print $2 }' "$TEST_TMP/group-options")
  # the prose of a verb (`.SS GROUP VERB` in man/rcoord-GROUP.1.in) joins that verb's options
  while read -r title; do
    assert_eq "$(grep -cxF ".SS $title" "$page")" 1 "one section for $title in rcoord-$group(1)"
  done < <(sed -n 's/^\.SS //p' "$SRC/man/rcoord-$group.1.in")
  lint=$(mandoc -Tlint "$page" 2>&1 || true)
  assert_eq "$lint" "" "mandoc -Tlint rcoord-$group.1"
  assert_eq "$(groff -man -ww -z "$page" 2>&1 || true)" "" "groff warnings of rcoord-$group.1"
  lines=$(MANWIDTH=80 man -l "$page" 2>/dev/null | wc -l)
  [ "$lines" -le 400 ] || fail "rcoord-$group(1) is $lines lines at 80 columns (at most 400)"
  pages=$((pages + 1))
done
[ "$pages" -ge 15 ] || fail "only $pages group pages checked: the group list broke"
assert_eq "$(find "$PAGES" -name 'rcoord-*.1' | wc -l)" "$pages" "a page for each group, and no other"
pass "$pages group pages: every option of their verbs' --help, lint-clean, at most 400 lines"

out=$(MANPATH=$build/man MANPAGER=cat PAGER=cat MANWIDTH=80 "$RCOORD" help lock) ||
  fail "rcoord help lock failed"
assert_contains "$out" "rcoord-lock - mutual exclusion" "rcoord help lock shows rcoord-lock(1)"
assert_contains "$out" "--conflict-exit-code" "rcoord help lock shows the options"
mkdir -p "$TEST_TMP/no-pages"
expect 2 env MANPATH="$TEST_TMP/no-pages" "$RCOORD" help lock
assert_lines "$ERR" 1 "one line when the page is missing"
assert_contains "$ERR" "use 'rcoord lock --help'"
expect 2 env PATH="$TEST_TMP/no-pages" "$RCOORD" help sem
assert_contains "$ERR" "use 'rcoord sem --help'" "without man"
expect 2 "$RCOORD" help lokc
pass "rcoord help GROUP opens rcoord-GROUP(1); without the page or man: exit 2, pointing to --help"

# --help --man: the same pages through the same code, with the same exit codes and hints
out=$(MANPATH=$build/man MANPAGER=cat PAGER=cat MANWIDTH=80 "$RCOORD" lock --help --man) ||
  fail "rcoord lock --help --man failed"
assert_contains "$out" "rcoord-lock - mutual exclusion" "rcoord lock --help --man shows rcoord-lock(1)"
assert_contains "$out" "--conflict-exit-code" "rcoord lock --help --man shows the options"
out=$(MANPATH=$build/man MANPAGER=cat PAGER=cat MANWIDTH=80 "$RCOORD" -q sem take --man --help) ||
  fail "rcoord -q sem take --man --help failed"
assert_contains "$out" "rcoord-sem - counting semaphores" "a verb's --help --man shows its group's page"
mkdir -p "$TEST_TMP/root-page/man1"
ln -s "$MAN" "$TEST_TMP/root-page/man1/rcoord.1"
out=$(MANPATH=$TEST_TMP/root-page MANPAGER=cat PAGER=cat MANWIDTH=80 "$RCOORD" --help --man) ||
  fail "rcoord --help --man failed"
assert_contains "$out" "rcoord - locks" "rcoord --help --man shows rcoord(1)"
expect 2 env MANPATH="$TEST_TMP/no-pages" "$RCOORD" lock --help --man
assert_lines "$ERR" 1 "one line when the page is missing (--help --man)"
assert_contains "$ERR" "the man page rcoord-lock(1) is not installed here"
assert_contains "$ERR" "use 'rcoord lock --help'"
expect 2 env PATH="$TEST_TMP/no-pages" "$RCOORD" sem --help --man
assert_contains "$ERR" "use 'rcoord sem --help'" "--help --man without man"
expect 2 env MANPATH="$TEST_TMP/no-pages" "$RCOORD" --help --man
assert_contains "$ERR" "the man page rcoord(1) is not installed here"
assert_contains "$ERR" "use 'rcoord --help'"
expect 2 "$RCOORD" ping --man
assert_contains "$ERR" "--man goes with --help"
pass "rcoord GROUP --help --man opens rcoord-GROUP(1), rcoord --help --man rcoord(1); exit 2 as for rcoord help"

# bash completion, driven the way bash drives it
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
           COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _rcoord; echo "${COMPREPLY[*]}"' \
    _ "${COMPLETIONS[0]}" "$@"
}
assert_contains "$(complete_words rcoord lo)" lock "rcoord lo<TAB>"
assert_contains "$(complete_words rcoord lock ac)" acquire "rcoord lock ac<TAB>"
assert_contains "$(complete_words rcoord lock run x --ki)" --kill-grace "rcoord lock run x --ki<TAB>"
pass "bash completion completes commands, verbs and options"
