# The documentation keeps up with the code: every command, verb and option that --help shows
# appears in the man page and in each completion file; bash completion really completes.
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

check_in_docs() {
  local word=$1 where=$2 file
  # the man page escapes dashes as \-
  grep -qF -- "${word//-/\\-}" "$MAN" || fail "'$word' ($where) is not in the man page"
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

checked=0
root_help=$("$RCOORD" --help)
for opt in $(echo "$root_help" | long_options) $(echo "$root_help" | short_options); do
  check_in_docs "$opt" "global option"
  checked=$((checked + 1))
done
for group in $(echo "$root_help" | subcommands); do
  check_in_docs "$group" "command"
  group_help=$("$RCOORD" "$group" --help)
  assert_contains "$group_help" "Example" "rcoord $group --help has an example"
  verbs=$(echo "$group_help" | subcommands)
  for verb in $verbs; do
    check_in_docs "$verb" "$group verb"
    verb_help=$("$RCOORD" "$group" "$verb" --help)
    assert_contains "$verb_help" "Example" "rcoord $group $verb --help has an example"
    for opt in $(echo "$verb_help" | long_options) $(echo "$verb_help" | short_options); do
      check_in_docs "$opt" "$group $verb option"
      checked=$((checked + 1))
    done
  done
done
[ "$checked" -gt 20 ] || fail "found only $checked options in --help: the parsing broke"
pass "$checked options of --help appear in the man page and every completion file"
assert_contains "$root_help" "Primitives:"
assert_contains "$root_help" "Operator commands:"
pass "every command and verb has an example; rcoord --help groups the commands"

if command -v groff >/dev/null; then
  warnings=$(groff -man -ww -z "$MAN" 2>&1 || true)
  assert_eq "$warnings" "" "groff warnings"
  pass "man page renders without warnings"
fi

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
