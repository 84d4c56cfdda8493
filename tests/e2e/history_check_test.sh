# history_check.py, the checker of the proofs' histories: each model refuses a history with the
# anomaly it is there to find, and passes the same history without it. Real histories of real
# processes are checked by the proofs themselves (prove_mutual_exclusion, sem_test, elect_test);
# this shows the checker would notice when one of them went wrong.
source "$(dirname "$0")/lib.sh"
check="$(dirname "$0")/history_check.py"

# verdict MODEL LINES...: the checker's exit code on a history of LINES
verdict() {
  local model=$1 code=0
  shift
  printf '%s\n' "$@" >"$TEST_TMP/h.jsonl"
  python3 "$check" --model "$model" "$TEST_TMP/h.jsonl" >"$TEST_TMP/h.out" 2>&1 || code=$?
  echo "$code"
}
op() { # T P F [extra JSON fields]: one line
  echo "{\"t\":$1,\"p\":\"$2\",\"type\":\"ok\",\"f\":\"$3\",\"obj\":\"x\"${4:+,$4}}"
}

# lock: two holds that overlap; a later hold with a lower fence
assert_eq "$(verdict lock "$(op 10 a enter '"token":"a","fence":1')" "$(op 20 a exit '"token":"a","fence":1')" \
  "$(op 30 b enter '"token":"b","fence":2')" "$(op 40 b exit '"token":"b","fence":2')")" 0 "lock: good history"
assert_eq "$(verdict lock "$(op 10 a enter '"token":"a","fence":1')" "$(op 30 a exit '"token":"a","fence":1')" \
  "$(op 20 b enter '"token":"b","fence":2')" "$(op 40 b exit '"token":"b","fence":2')")" 1 "lock: overlap"
assert_contains "$(cat "$TEST_TMP/h.out")" "2 holds at once"
assert_eq "$(verdict lock "$(op 10 a enter '"token":"a","fence":5')" "$(op 20 a exit '"token":"a","fence":5')" \
  "$(op 30 b enter '"token":"b","fence":5')" "$(op 40 b exit '"token":"b","fence":5')")" 1 "lock: fence reused"
assert_contains "$(cat "$TEST_TMP/h.out")" "fence 5 of b"
# a hold never exited (its command was killed) lasts to the end of the history
assert_eq "$(verdict lock "$(op 10 a enter '"token":"a"')" "$(op 20 b enter '"token":"b"')" \
  "$(op 30 b exit '"token":"b"')")" 1 "lock: a hold never exited overlaps what came after"

# fence: overlapping holds are allowed, a fence below one that ended before is not
assert_eq "$(verdict fence "$(op 10 a enter '"token":"a","fence":1')" "$(op 30 a exit '"token":"a","fence":1')" \
  "$(op 20 b enter '"token":"b","fence":2')" "$(op 40 b exit '"token":"b","fence":2')")" 0 "fence: overlap allowed"
assert_eq "$(verdict fence "$(op 10 a enter '"token":"a","fence":3')" "$(op 20 a exit '"token":"a","fence":3')" \
  "$(op 30 b enter '"token":"b","fence":2')" "$(op 40 b exit '"token":"b","fence":2')")" 1 "fence: inversion"

# rwlock: readers together are fine, a writer with a reader is not (the extra "obj" wins)
r() { op "$1" "$2" "$3" "\"token\":\"$2\",\"fence\":$4,\"obj\":\"$5\""; }
assert_eq "$(verdict rwlock "$(r 10 a enter 1 reader)" "$(r 11 b enter 2 reader)" "$(r 20 a exit 1 reader)" \
  "$(r 21 b exit 2 reader)" "$(r 30 c enter 3 writer)" "$(r 40 c exit 3 writer)")" 0 "rwlock: readers together"
assert_eq "$(verdict rwlock "$(r 10 a enter 1 reader)" "$(r 15 c enter 3 writer)" "$(r 20 a exit 1 reader)" \
  "$(r 40 c exit 3 writer)")" 1 "rwlock: a writer with a reader"
assert_contains "$(cat "$TEST_TMP/h.out")" "writer c"

# sem:N: three at once is fine for 3, not for 2
three=("$(op 10 a enter '"token":"a"')" "$(op 11 b enter '"token":"b"')" "$(op 12 c enter '"token":"c"')"
  "$(op 20 a exit '"token":"a"')" "$(op 21 b exit '"token":"b"')" "$(op 22 c exit '"token":"c"')")
assert_eq "$(verdict sem:3 "${three[@]}")" 0 "sem:3: three at once"
assert_eq "$(verdict sem:2 "${three[@]}")" 1 "sem:2: three at once"

# elect: two leaders of one term; a later term not higher
assert_eq "$(verdict elect "$(op 10 a enter '"token":"a","term":7')" "$(op 20 a exit '"token":"a","term":7')" \
  "$(op 30 b enter '"token":"b","term":7')" "$(op 40 b exit '"token":"b","term":7')")" 1 "elect: one term, two leaders"
assert_contains "$(cat "$TEST_TMP/h.out")" "term 7 had two leaders"
assert_eq "$(verdict elect "$(op 10 a enter '"token":"a","term":7')" "$(op 20 a exit '"token":"a","term":7')" \
  "$(op 30 b enter '"token":"b","term":8')" "$(op 40 b exit '"token":"b","term":8')")" 0 "elect: good history"

# store: an accepted write below one accepted before
assert_eq "$(verdict store "$(op 10 a write '"fence":3')" "$(op 20 b write '"fence":2')")" 1 "store: stale write taken"
assert_eq "$(verdict store "$(op 10 a write '"fence":3')" "$(op 20 a write '"fence":3')" \
  "$(op 30 b write '"fence":4')")" 0 "store: good history"

# queue: an acknowledged push never completed; a completion never pushed
assert_eq "$(verdict queue "$(op 10 a push '"id":1')" "$(op 20 w complete '"id":1')" \
  "$(op 30 a push '"id":2')")" 1 "queue: a push lost"
assert_contains "$(cat "$TEST_TMP/h.out")" "message 2 was acknowledged as pushed and never completed"
assert_eq "$(verdict queue "$(op 10 w complete '"id":9')")" 1 "queue: completed, never pushed"
assert_eq "$(verdict queue "$(op 10 a push '"id":1')" "$(op 20 w complete '"id":1')" \
  "$(op 30 w complete '"id":1')")" 0 "queue: delivered twice is at least once"

# rate: 10/s with a burst of 2 allows 3 (+1) at once, not 5 within a few milliseconds; one
# each 100 ms keeps within the bound, one each 50 ms does not
allow() { op "$1" "$2" allow "\"start\":$(($1 - 100))"; }
ms=1000000
assert_eq "$(verdict rate:10:2 "$(allow $((1 * ms)) a)" "$(allow $((2 * ms)) b)" "$(allow $((3 * ms)) a)")" 0 \
  "rate: a burst within its bound"
assert_eq "$(verdict rate:10:2 "$(allow $((1 * ms)) a)" "$(allow $((2 * ms)) b)" "$(allow $((3 * ms)) a)" \
  "$(allow $((4 * ms)) b)" "$(allow $((5 * ms)) a)")" 1 "rate: 5 allowed within 4 ms"
assert_contains "$(cat "$TEST_TMP/h.out")" "4 allowed within 3.0 ms"
steady=() fast=()
for i in $(seq 0 13); do
  steady+=("$(allow $((i * 100 * ms + ms)) a)")
  fast+=("$(allow $((i * 50 * ms + ms)) a)")
done
assert_eq "$(verdict rate:10:2 "${steady[@]}")" 0 "rate: one each 100 ms"
assert_eq "$(verdict rate:10:2 "${fast[@]}")" 1 "rate: one each 50 ms"
denied=$(op $((5 * ms)) a allow "\"start\":$((5 * ms - 100))" | sed 's/"type":"ok"/"type":"fail"/')
assert_eq "$(verdict rate:10:2 "$(allow $((1 * ms)) a)" "$(allow $((2 * ms)) b)" "$(allow $((3 * ms)) a)" \
  "$denied" "$denied")" 0 "rate: denied decisions do not count"

# a history the checker cannot read is exit 2, not a pass
assert_eq "$(verdict lock 'not json')" 2 "an unreadable line"
assert_eq "$(verdict lock "$(op 10 a exit '"token":"a"')")" 2 "an exit without its enter"
assert_eq "$(verdict nosuch "$(op 10 a enter)")" 2 "an unknown model"
pass "history_check finds overlaps, a writer among readers, reused fences and terms, the semaphore bound, stale writes, lost messages and a rate exceeded"
