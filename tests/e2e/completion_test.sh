# Shell completion of object names (bash, zsh, fish), driven as each shell drives it: the
# names of the verb's type on the server the command line (or the environment) names, from
# `rcoord ls --names`; never stalled by a dead or paused server.
source "$(dirname "$0")/lib.sh"
SRC=${RCOORD_SOURCE_DIR:?}
for shell in zsh fish; do
  command -v "$shell" >/dev/null || fail "$shell not found: install it (scripts/test does)"
done
# The completions run `rcoord` from PATH, as an installed one would be.
mkdir -p "$TEST_TMP/bin"
ln -s "$RCOORD" "$TEST_TMP/bin/rcoord"
export PATH=$TEST_TMP/bin:$PATH
unset RCOORD_URL REDIS_URL
# The completions give up on the server after RCOORD_COMPLETION_TIMEOUT_MS (default 1000). A
# loaded machine running a sanitized binary can take longer than that just to start rcoord, so
# the limit is scaled like every other time bound here; the paused-server checks below then
# prove the shell gets its prompt back within (scaled) bounds above that limit.
export RCOORD_COMPLETION_TIMEOUT_MS=$(scaled 1000)
start_redis R
P=$R_PORT

# An hour: every check below still finds them held, however slow the machine.
"$RCOORD" -p "$P" lock acquire deploy-web --ttl 1h >/dev/null
"$RCOORD" -p "$P" lock acquire deploy-db --ttl 1h >/dev/null
"$RCOORD" -p "$P" lock acquire backup --ttl 1h >/dev/null
"$RCOORD" -p "$P" lock acquire 'a*b' --ttl 1h >/dev/null
"$RCOORD" -p "$P" lock acquire axb --ttl 1h >/dev/null
"$RCOORD" -p "$P" lock acquire 'with space' --ttl 1h >/dev/null
"$RCOORD" -p "$P" queue push deploy-queue m >/dev/null
"$RCOORD" -p "$P" pf add visitors-mon x >/dev/null
"$RCOORD" -p "$P" pf add visitors-tue x >/dev/null
"$RCOORD" -p "$P" complete recent push contacts item >/dev/null
"$RCOORD" -p "$P" --prefix other: lock acquire elsewhere >/dev/null

# --- bash: COMP_WORDS and COMP_CWORD set as bash sets them, then the function ----------------
bash_complete() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
           COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _rcoord
           printf "%s\n" "${COMPREPLY[@]}"' _ "$SRC/completions/rcoord.bash" "$@" | sort
}
lines() { printf '%s\n' "$@" | sort; }
assert_eq "$(bash_complete rcoord -p "$P" lock status '')" \
  "$(lines 'a\*b' axb backup deploy-db deploy-web 'with\ space')" "bash: lock status <TAB>"
assert_eq "$(bash_complete rcoord -p "$P" lock status de)" "$(lines deploy-db deploy-web)"
assert_eq "$(bash_complete rcoord lock release -p "$P" 'a*')" 'a\*b' "glob characters typed match themselves"
assert_eq "$(bash_complete rcoord --url "redis://127.0.0.1:$P" queue pop de)" deploy-queue
assert_eq "$(RCOORD_URL=redis://127.0.0.1:$P bash_complete rcoord queue stats '')" deploy-queue \
  "the server from the environment"
assert_eq "$(bash_complete rcoord -p "$P" --prefix other: lock break '')" elsewhere "--prefix"
assert_eq "$(bash_complete rcoord -p "$P" pf count visitors-mon vis)" \
  "$(lines visitors-mon visitors-tue)" "every argument of pf count is a name"
assert_eq "$(bash_complete rcoord -p "$P" lock acquire backup '')" "" "a second argument"
assert_eq "$(bash_complete rcoord -p "$P" complete recent push '')" contacts "complete recent push"
assert_eq "$(bash_complete rcoord -p "$P" ls --type pf '')" "$(lines visitors-mon visitors-tue)"
assert_contains "$(bash_complete rcoord -p "$P" -o json ls 'dep')" deploy-queue "-o json is not passed on"
# rm takes names of its --type, every argument (as any verb whose first positional is names).
assert_eq "$(bash_complete rcoord -p "$P" rm --type lock de)" "$(lines deploy-db deploy-web)" "bash: rm"
assert_eq "$(bash_complete rcoord -p "$P" rm --type pf visitors-mon vis)" \
  "$(lines visitors-mon visitors-tue)" "every argument of rm is a name"
assert_eq "$(bash_complete rcoord -p "$P" lock st)" status "verbs still complete"
assert_eq "$(bash_complete rcoord lock --ma)" --man "bash: --man after a group (with --help)"
assert_eq "$(bash_complete rcoord -p "$P" --man lock status de)" "$(lines deploy-db deploy-web)" \
  "--man is not passed on"
pass "bash completes object names of the verb's type, from the server on the command line"

# --- zsh: its completion system in an interactive zsh on a pseudo-terminal (zpty) ----------
cat >"$TEST_TMP/capture.zsh" <<'ZSH'
# capture.zsh DIR OUT LINE: types LINE and Tab in an interactive zsh whose completion is set
# up from DIR, and writes every match the completion functions add to OUT.
zmodload zsh/zpty
dir=$1 out=$2 line=$3
zpty z zsh -f -i
zpty -w z "PS1=''; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() { local -a hits; builtin compadd -A hits "$@"; (( $#hits )) && print -rl -- $hits >>'${(q)out}'; builtin compadd "$@"; }'
# Keys typed while the line editor is not running go through the terminal's line discipline,
# where Ctrl-U erases them before zle sees them: wait until zle runs (zle-line-init) after the
# marker's output. Markers are spelt so that their echo cannot match.
zpty -w z "zle-line-init() { print -rn -- ZLE'IS'READY }; zle -N zle-line-init"
zpty -w z 'print -r -- $(( 6 * 7 ))READY'
zpty -r z reply '*42READY*ZLEISREADY*'
# Tab, then (once completion has run: keys are handled in order) clear the line and print
# a marker whose output differs from its echo.
zpty -w -n z "$line"$'\t'$'\C-u'
zpty -w z 'print -r -- $(( 6 * 9 ))DONE'
zpty -r z reply '*54DONE*'
zpty -d z
ZSH
zsh_complete() {
  rm -f "$TEST_TMP/zsh.out"
  timeout 60 zsh -f "$TEST_TMP/capture.zsh" "$SRC/completions" "$TEST_TMP/zsh.out" "$1" >/dev/null ||
    fail "zsh completion of '$1' did not finish"
  sort -u "$TEST_TMP/zsh.out" 2>/dev/null || true
}
# (as zsh will insert them: quoted for the shell)
assert_eq "$(zsh_complete "rcoord -p $P lock status ")" \
  "$(lines 'a\*b' axb backup deploy-db deploy-web 'with\ space')" "zsh: lock status <TAB>"
assert_eq "$(zsh_complete "rcoord -p $P lock status de")" "$(lines deploy-db deploy-web)"
assert_eq "$(zsh_complete "rcoord -p $P complete recent push ")" contacts
assert_eq "$(zsh_complete "rcoord -p $P pf count visitors-mon vis")" "$(lines visitors-mon visitors-tue)"
assert_eq "$(zsh_complete "rcoord -p $P ls --type queue ")" deploy-queue
assert_eq "$(zsh_complete "rcoord -p $P rm --type queue ")" deploy-queue "zsh: rm"
assert_contains "$(zsh_complete "rcoord --ma")" --man "zsh: --man"
pass "zsh completes object names of the verb's type"

# --- fish: its own completion machinery, non-interactively ----------------------------------
fish_complete() {
  fish --no-config -c "source $SRC/completions/rcoord.fish; complete -C '$1'" | cut -f1 | sort
}
assert_eq "$(fish_complete "rcoord -p $P lock status ")" \
  "$(lines 'a*b' axb backup deploy-db deploy-web 'with space')" "fish: lock status <TAB>"
assert_eq "$(fish_complete "rcoord -p $P lock status de")" "$(lines deploy-db deploy-web)"
assert_eq "$(fish_complete "rcoord -p $P complete recent push ")" contacts
assert_eq "$(fish_complete "rcoord -p $P signal wait a b ")" "" "no signal channels"
assert_eq "$(fish_complete "rcoord -p $P pf merge visitors-mon vis")" "$(lines visitors-mon visitors-tue)"
assert_eq "$(fish_complete "rcoord -p $P rm --type pf visitors-mon vis")" \
  "$(lines visitors-mon visitors-tue)" "fish: rm"
assert_eq "$(fish_complete "rcoord lock --ma")" --man "fish: --man after a group"
assert_eq "$(fish_complete "rcoord -u redis://127.0.0.1:$P top ")" \
  "$(lines 'a*b' axb backup contacts deploy-db deploy-queue deploy-web visitors-mon visitors-tue 'with space')"
pass "fish completes object names of the verb's type"

# --- a dead or paused server never stalls the shell -------------------------------------------
dead=$(free_port)
# timed SECONDS_BOUND CMD...: runs CMD and fails if it took longer than the bound (ms, scaled).
timed() {
  local bound=$1 start took
  shift
  start=$(now_ms)
  "$@" >/dev/null
  took=$(($(now_ms) - start))
  [ "$took" -le "$(scaled "$bound")" ] || fail "completion took ${took}ms: $*"
}
timed 1500 bash_complete rcoord -p "$dead" lock status ''
kill -STOP "$R_PID"
timed 2500 bash_complete rcoord -p "$P" lock status ''
timed 2500 fish_complete "rcoord -p $P lock status "
timed 4000 zsh_complete "rcoord -p $P lock status "
kill -CONT "$R_PID"
# Completion works again once the server does. On a busy machine (a CI run beside another) the
# first completions after the pause can still outlast their time limit, so it is asked until it
# answers: what is proved is that nothing stays broken, within 10 s (scaled).
completes_backup() { [ "$(bash_complete rcoord -p "$P" lock status back)" = backup ]; }
wait_until 10 completes_backup || fail "the server answers again, but completion does not"
pass "a dead or paused server: no names, and the shell gets its prompt back within the time limit"

# The limit is the one given: each shell runs `timeout LIMIT rcoord ... --timeout 30%ms`. A
# `timeout` first on PATH records its arguments and runs the real one.
real_timeout=$(command -v timeout)
printf '#!/bin/sh\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$TEST_TMP/timeout.args" "$real_timeout" \
  >"$TEST_TMP/bin/timeout"
chmod +x "$TEST_TMP/bin/timeout"
export RCOORD_COMPLETION_TIMEOUT_MS=2500
bash_complete rcoord -p "$P" lock status '' >/dev/null
fish_complete "rcoord -p $P lock status " >/dev/null
zsh_complete "rcoord -p $P lock status " >/dev/null
args="rcoord -p $P --timeout 750ms ls --names --type lock -- *"
assert_eq "$(cat "$TEST_TMP/timeout.args")" "$(printf '%s\n' "2.500 $args" "2.5 $args" "2.500 $args")" \
  "bash, fish and zsh run rcoord within RCOORD_COMPLETION_TIMEOUT_MS"
pass "RCOORD_COMPLETION_TIMEOUT_MS sets the time limit"
