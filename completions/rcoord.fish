# fish completion for rcoord. Install into a directory of $fish_complete_path
# (cmake --install puts it in share/fish/vendor_completions.d).

# The words after `rcoord` that are neither options nor option values, up to `--`.
function __rcoord_args
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        if test "$t" = --
            return
        else if contains -- $t $__rcoord_opts_with_arg
            set skip 1
        else if not string match -q -- '-*' $t
            echo $t
        end
    end
end

# True when no command has been given yet.
function __rcoord_needs_command
    test (count (__rcoord_args)) -eq 0
end

# __rcoord_needs_verb WORD...: the words so far are exactly WORD... (a command, or a group
# of verbs such as `complete recent`), and its verb has not been given yet.
function __rcoord_needs_verb
    set -l args (__rcoord_args)
    test (count $args) -eq (count $argv); or return 1
    for k in (seq (count $argv))
        test "$args[$k]" = "$argv[$k]"; or return 1
    end
end

# __rcoord_is WORD...: completing the options of the verb WORD... (`lock acquire`), before
# any `--`.
function __rcoord_is
    __rcoord_in_child_command; and return 1
    set -l args (__rcoord_args)
    test (count $args) -ge (count $argv); or return 1
    for k in (seq (count $argv))
        test "$args[$k]" = "$argv[$k]"; or return 1
    end
end

# __rcoord_wants_name WORD... MODE: the word being completed is an object name of the verb
# WORD... (MODE first: its first argument; all: any of them).
function __rcoord_wants_name
    set -l mode $argv[-1]
    set -l verb $argv[1..-2]
    __rcoord_is $verb; or return 1
    test $mode = all; or test (count (__rcoord_args)) -eq (count $verb)
end

# __rcoord_names TYPE: the names of objects of TYPE (any: of the --type on the command line,
# or of every type) that start with what is typed, as `rcoord ls --names` finds them on the
# server the command line names (its connection options, as typed; not those that change
# the output). A short timeout, so that a slow or absent server never stalls the shell;
# names holding a backslash (escaped control characters) are not offered.
function __rcoord_names
    set -l type $argv[1]
    set -l tokens (commandline -opc)
    set -l server
    set -l i 2
    while test $i -le (count $tokens)
        set -l t $tokens[$i]
        set -l next $tokens[(math $i + 1)]
        test "$t" = --; and break
        switch $t
            case -o --output --timeout --wait-replicas --note
                set i (math $i + 1)
            case --type
                test $type = any; and set type $next
                set i (math $i + 1)
            case '--type=*'
                test $type = any; and set type (string replace -- --type= '' $t)
            case --json -q --quiet --help --man --version '-o=*' '--output=*' '--timeout=*' '--wait-replicas=*' '--note=*'
            case '*'
                if contains -- $t $__rcoord_global_opts_with_arg
                    set -a server $t $next
                    set i (math $i + 1)
                else if contains -- $t $__rcoord_global_flags
                    set -a server $t
                else if string match -q -- '-*=*' $t
                    and contains -- (string split -m1 = -- $t)[1] $__rcoord_global_opts_with_arg
                    set -a server $t
                end
        end
        set i (math $i + 1)
    end
    set -l args --names
    test $type = any; or set -a args --type $type
    set -l glob (string replace -ra '[][*?\\\\]' '\\\\$0' -- (commandline -ct))
    # A short time limit (RCOORD_COMPLETION_TIMEOUT_MS, default 1000), so that a slow or
    # absent server never stalls the shell; rcoord's own timeout is 30% of it.
    set -l limit 1000
    string match -qr '^[1-9][0-9]{0,6}$' -- "$RCOORD_COMPLETION_TIMEOUT_MS"; and set limit $RCOORD_COMPLETION_TIMEOUT_MS
    set -l run rcoord
    command -q timeout; and set run timeout (math $limit / 1000) rcoord
    $run $server --timeout (math "floor(($limit * 3 + 9) / 10)")ms ls $args -- "$glob*" 2>/dev/null | string match -rv -- '\\\\'
end

# True when completing the command that a run-like verb will run (after `--`).
function __rcoord_in_child_command
    set -l tokens (commandline -opc)
    contains -- -- $tokens; or return 1
    set -l args (__rcoord_args)
    contains -- "$args[1] $args[2]" $__rcoord_runs_command
end

# Completes the child's command line as if it were typed on its own.
function __rcoord_complete_child
    set -l tokens (commandline -opc) (commandline -ct)
    set -l i (contains -i -- -- $tokens)
    set -l rest $tokens[(math $i + 1)..-1]
    complete -C (string join -- ' ' (string escape -- $rest))
end

complete -c rcoord -f
complete -c rcoord -n 'not __rcoord_in_child_command' -l help -d 'Print help and exit'
complete -c rcoord -n 'not __rcoord_in_child_command' -l version -d 'Print the version and exit'
complete -c rcoord -n 'not __rcoord_in_child_command' -l man -d 'With --help: open the manual page'
complete -c rcoord -n __rcoord_in_child_command -x -a '(__rcoord_complete_child)'

# BEGIN GENERATED by scripts/gen-completions from --help: do not edit by hand
set -g __rcoord_opts_with_arg --ack-timeout --algo --attempt --burst --by --cacert --capacity --cert --command --config --conflict-exit-code --cost --count --delay --error-rate --expansion --expire --file --history --id --idle-exit --interval --key --kill-grace --limit --lock --max --max-attempts --max-messages --max-run --min-hold --nonscaling --note --output --pass --password-file --permits --prefix --rate --retry-delay --score --sem --sentinel --sentinel-master --shared-lock --since --sni --textfile --timeout --tls-ca --tls-cert --tls-key --token --ttl --type --url --user --wait --wait-replicas --watch -E -a -c -h -n -o -p -s -u -w
set -g __rcoord_global_opts_with_arg -u --url --password-file --timeout --prefix -o --output --config -h -p -n -a --pass --user -s --tls-ca --cacert --tls-cert --cert --tls-key --key --sni --sentinel --sentinel-master --wait-replicas --note --history
set -g __rcoord_global_flags --json -q --quiet --no-auth-warning --tls --tls-insecure --insecure
set -g __rcoord_runs_command 'lock run' 'sem run' 'queue consume' 'elect run' 'gate run'
complete -c rcoord -n 'not __rcoord_in_child_command' -s u -l url -x -a 'redis:// unix:///' -d 'Redis URL: redis://[user[:pass]@]host[:port][/db], unix:///path.sock (default: $RCOORD_URL, $REDIS_URL, redis://127.0.0.1:6379); repeatable: 3 or more independent masters make `lock` a Redlock'
complete -c rcoord -n 'not __rcoord_in_child_command' -l password-file -r -F -d 'Read the password from FILE (or set $RCOORD_PASSWORD)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l timeout -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Connect and reply timeout (default 2s)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l prefix -x -d 'Namespace of every key rcoord creates (default rcoord:)'
complete -c rcoord -n 'not __rcoord_in_child_command' -s o -l output -x -a 'text json' -d 'Output format: text or json'
complete -c rcoord -n 'not __rcoord_in_child_command' -l json -d 'Same as -o json'
complete -c rcoord -n 'not __rcoord_in_child_command' -s q -l quiet -d 'Print nothing on stdout; the exit code says it'
complete -c rcoord -n 'not __rcoord_in_child_command' -l config -r -F -d 'TOML file of defaults (default: $RCOORD_CONFIG, then ~/.config/rcoord/config.toml)'
complete -c rcoord -n 'not __rcoord_in_child_command' -s h -x -a '(__fish_print_hostnames)' -d 'Server host (as redis-cli; overrides --url\'s host)'
complete -c rcoord -n 'not __rcoord_in_child_command' -s p -x -d 'Server port (as redis-cli)'
complete -c rcoord -n 'not __rcoord_in_child_command' -s n -x -d 'Database number (as redis-cli)'
complete -c rcoord -n 'not __rcoord_in_child_command' -s a -l pass -x -d 'Password (as redis-cli; visible in ps: prefer --password-file)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l no-auth-warning -d 'Do not warn about a password on the command line (as redis-cli)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l user -x -d 'ACL user name (as redis-cli)'
complete -c rcoord -n 'not __rcoord_in_child_command' -s s -r -F -d 'Unix socket path (as redis-cli)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l tls -d 'Use TLS, as a rediss:// URL does (as redis-cli)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l tls-ca -r -F -d 'CA certificate(s) that sign the server\'s (default: the system\'s)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l cacert -r -F -d 'CA certificate(s) that sign the server\'s (default: the system\'s)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l tls-cert -r -F -d 'Client certificate for mutual TLS, PEM'
complete -c rcoord -n 'not __rcoord_in_child_command' -l cert -r -F -d 'Client certificate for mutual TLS, PEM'
complete -c rcoord -n 'not __rcoord_in_child_command' -l tls-key -r -F -d 'Private key of the client certificate, PEM'
complete -c rcoord -n 'not __rcoord_in_child_command' -l key -r -F -d 'Private key of the client certificate, PEM'
complete -c rcoord -n 'not __rcoord_in_child_command' -l tls-insecure -d 'Do not verify the server\'s certificate and name (testing only)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l insecure -d 'Do not verify the server\'s certificate and name (testing only)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l sni -x -a '(__fish_print_hostnames)' -d 'Server name to send and verify in TLS'
complete -c rcoord -n 'not __rcoord_in_child_command' -l sentinel -x -d 'Find the master through this Sentinel (repeatable)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l sentinel-master -x -d 'Name of the master the sentinels monitor'
complete -c rcoord -n 'not __rcoord_in_child_command' -l wait-replicas -x -d 'After each write, wait for N replicas to acknowledge it (Redis WAIT); auto (default): every replica connected when the write is made; 0: none'
complete -c rcoord -n 'not __rcoord_in_child_command' -l note -x -d 'Recorded with what this command takes, for `status`, `ls` and `history` (default: $RCOORD_NOTE, else a link to the CI run when in CI)'
complete -c rcoord -n 'not __rcoord_in_child_command' -l history -x -d 'Events each lock, semaphore, election and queue keeps in its history, for `rcoord history` (0 records none)'
complete -c rcoord -n __rcoord_needs_command -a bloom -d 'Scalable Bloom filters: add and test items'
complete -c rcoord -n __rcoord_needs_command -a complete -d 'Autocomplete: prefix search and recent items'
complete -c rcoord -n __rcoord_needs_command -a lock -d 'Mutual exclusion with a TTL and fencing tokens'
complete -c rcoord -n __rcoord_needs_command -a limit -d 'Rate limits decided on the server\'s clock'
complete -c rcoord -n __rcoord_needs_command -a pf -d 'HyperLogLog: count distinct items in 12 KiB'
complete -c rcoord -n __rcoord_needs_command -a sem -d 'Counting semaphores: at most N holders at once'
complete -c rcoord -n __rcoord_needs_command -a queue -d 'Reliable queues: push, pop, ack, dead letters'
complete -c rcoord -n __rcoord_needs_command -a elect -d 'Leader election with a lease and fencing terms'
complete -c rcoord -n __rcoord_needs_command -a gate -d 'Several locks, permits and rate slots, all or nothing'
complete -c rcoord -n __rcoord_needs_command -a signal -d 'Send and wait for signals on named channels'
complete -c rcoord -n __rcoord_needs_command -a latch -d 'Count-down latches: wait until N parties are done'
complete -c rcoord -n __rcoord_needs_command -a doctor -d 'Check what makes coordination unsafe on this server, and how to fix it'
complete -c rcoord -n __rcoord_needs_command -a ls -d 'List the objects rcoord keeps, with type and state'
complete -c rcoord -n __rcoord_needs_command -a ping -d 'Check the server: version, mode, round-trip time'
complete -c rcoord -n __rcoord_needs_command -a top -d 'Watch the objects rcoord keeps, full screen, most recently changed first'
complete -c rcoord -n __rcoord_needs_command -a metrics -d 'Print the objects\' figures in the Prometheus text format'
complete -c rcoord -n __rcoord_needs_command -a rm -d 'Delete every key of objects (refuses what is in use)'
complete -c rcoord -n __rcoord_needs_command -a history -d 'Print what happened to a lock, semaphore, election or queue, oldest first'
complete -c rcoord -n __rcoord_needs_command -a version -d 'Print the version and exit (as --version)'
complete -c rcoord -n __rcoord_needs_command -a help -d 'Show the manual of a command group (man rcoord-GROUP)'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a reserve -d 'Create a filter sized for N items at error rate P'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a add -d 'Add items; print the ones that were new'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a test -d 'Test items; exit 1 if any is definitely absent'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a info -d 'Show size, items, layers and the real fill ratio'
complete -c rcoord -n '__rcoord_is bloom reserve' -l capacity -x -d 'Items the first layer holds at the error rate'
complete -c rcoord -n '__rcoord_is bloom reserve' -l error-rate -x -d 'False-positive rate, e.g. 0.01 for 1%'
complete -c rcoord -n '__rcoord_is bloom reserve' -l expansion -x -d 'When full, add a layer this many times larger (default 2)'
complete -c rcoord -n '__rcoord_is bloom reserve' -l nonscaling -x -d 'Never add a layer: refuse new items when full'
complete -c rcoord -n '__rcoord_is bloom reserve' -l expire -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete the filter (every layer, added later too) DUR after this write (each --expire sets it again)'
complete -c rcoord -n '__rcoord_wants_name bloom reserve first' -a '(__rcoord_names bloom)'
complete -c rcoord -n '__rcoord_is bloom add' -s 0 -l null -d 'Stdin items end with a NUL byte instead of a newline'
complete -c rcoord -n '__rcoord_is bloom add' -l summary -d 'Print only the totals at the end'
complete -c rcoord -n '__rcoord_is bloom add' -l expire -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete the filter (every layer) DUR after this write (each --expire sets it again)'
complete -c rcoord -n '__rcoord_wants_name bloom add first' -a '(__rcoord_names bloom)'
complete -c rcoord -n '__rcoord_is bloom test' -s 0 -l null -d 'Stdin items end with a NUL byte instead of a newline'
complete -c rcoord -n '__rcoord_is bloom test' -l summary -d 'Print only the totals at the end'
complete -c rcoord -n '__rcoord_wants_name bloom test first' -a '(__rcoord_names bloom)'
complete -c rcoord -n '__rcoord_is bloom info' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name bloom info first' -a '(__rcoord_names bloom)'
complete -c rcoord -n '__rcoord_needs_verb complete' -a add -d 'Add terms; print the ones that were new'
complete -c rcoord -n '__rcoord_needs_verb complete' -a suggest -d 'Terms that start with PREFIX, ignoring case'
complete -c rcoord -n '__rcoord_needs_verb complete' -a remove -d 'Remove terms (exactly as they were added)'
complete -c rcoord -n '__rcoord_needs_verb complete' -a recent -d 'Most-recent-first lists without duplicates'
complete -c rcoord -n '__rcoord_is complete add' -s 0 -l null -d 'Stdin terms end with a NUL byte instead of a newline'
complete -c rcoord -n '__rcoord_is complete add' -l score -x -d 'Set the terms\' score (with --incr: add it)'
complete -c rcoord -n '__rcoord_is complete add' -l incr -d 'Add 1 (or --score S) to the terms\' score'
complete -c rcoord -n '__rcoord_is complete add' -l summary -d 'Print only the totals at the end'
complete -c rcoord -n '__rcoord_is complete add' -l expire -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete the index DUR after this write (each --expire sets it again)'
complete -c rcoord -n '__rcoord_wants_name complete add first' -a '(__rcoord_names complete)'
complete -c rcoord -n '__rcoord_is complete suggest' -l limit -x -d 'At most N suggestions (default 10)'
complete -c rcoord -n '__rcoord_wants_name complete suggest first' -a '(__rcoord_names complete)'
complete -c rcoord -n '__rcoord_is complete remove' -s 0 -l null -d 'Stdin terms end with a NUL byte instead of a newline'
complete -c rcoord -n '__rcoord_wants_name complete remove first' -a '(__rcoord_names complete)'
complete -c rcoord -n '__rcoord_needs_verb complete recent' -a push -d 'Put ITEM first in LIST; print the list\'s length'
complete -c rcoord -n '__rcoord_needs_verb complete recent' -a suggest -d 'Items of LIST that start with PREFIX, newest first'
complete -c rcoord -n '__rcoord_is complete recent push' -l max -x -d 'Keep at most N items (default 100)'
complete -c rcoord -n '__rcoord_is complete recent push' -l expire -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete the list DUR after this write (each --expire sets it again)'
complete -c rcoord -n '__rcoord_wants_name complete recent push first' -a '(__rcoord_names recent)'
complete -c rcoord -n '__rcoord_is complete recent suggest' -l limit -x -d 'At most N suggestions (default 10)'
complete -c rcoord -n '__rcoord_wants_name complete recent suggest first' -a '(__rcoord_names recent)'
complete -c rcoord -n '__rcoord_needs_verb lock' -a acquire -d 'Take a lock and print its token'
complete -c rcoord -n '__rcoord_needs_verb lock' -a release -d 'Release a lock held by TOKEN'
complete -c rcoord -n '__rcoord_needs_verb lock' -a extend -d 'Give a held lock a new TTL'
complete -c rcoord -n '__rcoord_needs_verb lock' -a status -d 'Show the holder, remaining TTL and fence'
complete -c rcoord -n '__rcoord_needs_verb lock' -a wait -d 'Wait until a lock is free, without taking it'
complete -c rcoord -n '__rcoord_needs_verb lock' -a break -d 'Delete a lock whoever holds it (operator override)'
complete -c rcoord -n '__rcoord_needs_verb lock' -a run -d 'Run a command while holding the lock'
complete -c rcoord -n '__rcoord_is lock acquire' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease length (default 30s)'
complete -c rcoord -n '__rcoord_is lock acquire' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) for the lock; default: try once'
complete -c rcoord -n '__rcoord_is lock acquire' -l shared -d 'Take it as a reader: many readers at once, never with a writer'
complete -c rcoord -n '__rcoord_is lock acquire' -l token -x -d 'Use this token (re-acquiring with the holder\'s token refreshes the TTL)'
complete -c rcoord -n '__rcoord_wants_name lock acquire first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_is lock release' -l token -x -d 'The holder\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_wants_name lock release first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_is lock extend' -l token -x -d 'The holder\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_is lock extend' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'New lease length from now (default 30s)'
complete -c rcoord -n '__rcoord_wants_name lock extend first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_is lock status' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name lock status first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_is lock wait' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever), then exit 1 (default: forever; 0: look once)'
complete -c rcoord -n '__rcoord_wants_name lock wait first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_wants_name lock break first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_is lock run' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease length, renewed every TTL/3 (default 30s)'
complete -c rcoord -n '__rcoord_is lock run' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever); a bare number is seconds, as flock\'s -w; default: try once (flock\'s -n)'
complete -c rcoord -n '__rcoord_is lock run' -l token -x -d 'Use this token instead of a random one'
complete -c rcoord -n '__rcoord_is lock run' -l shared -d 'Hold it as a reader: many readers at once, never with a writer'
complete -c rcoord -n '__rcoord_is lock run' -s x -l exclusive -d 'Hold it as the only holder (the default)'
complete -c rcoord -n '__rcoord_is lock run' -s E -l conflict-exit-code -x -d 'Exit code when the lock is busy or --wait ran out (default 1); with -E, nothing is said on stderr then, unless --verbose'
complete -c rcoord -n '__rcoord_is lock run' -l verbose -d 'Say on stderr why the command did not run, even with -E, and when it starts'
complete -c rcoord -n '__rcoord_is lock run' -s c -l command -x -d 'Run CMD with $SHELL -c (/bin/sh when $SHELL is unset), as flock -c does, instead of a command after --'
complete -c rcoord -n '__rcoord_is lock run' -l kill-grace -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'On lock loss, SIGKILL the command this long after SIGTERM (default: 10s or TTL/3, whichever is shorter)'
complete -c rcoord -n '__rcoord_is lock run' -l max-run -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after --kill-grace), release the lock and exit 124'
complete -c rcoord -n '__rcoord_is lock run' -l min-hold -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Keep the lock until DUR after acquisition even if the command ends sooner'
complete -c rcoord -n '__rcoord_wants_name lock run first' -a '(__rcoord_names lock)'
complete -c rcoord -n '__rcoord_needs_verb limit' -a check -d 'Take one request\'s cost if the rate allows it now'
complete -c rcoord -n '__rcoord_needs_verb limit' -a wait -d 'Reserve the next allowed slot and sleep until it'
complete -c rcoord -n '__rcoord_needs_verb limit' -a status -d 'Show what is left now, without consuming'
complete -c rcoord -n '__rcoord_needs_verb limit' -a reset -d 'Delete a limit\'s state: everything is allowed again'
complete -c rcoord -n '__rcoord_is limit check' -l rate -x -d 'Allowed rate: N/s, N/m, N/h or N/DUR (e.g. 100/10s); repeat it for several rates at once, all of which must allow (e.g. --rate 10/s --rate 1000/h)'
complete -c rcoord -n '__rcoord_is limit check' -l burst -x -d 'Most cost allowed at once (default: N of the rate; one --rate only)'
complete -c rcoord -n '__rcoord_is limit check' -l cost -x -d 'Cost of this request (default 1)'
complete -c rcoord -n '__rcoord_is limit check' -l algo -x -d 'gcra (default), token-bucket, sliding-window or fixed-window'
complete -c rcoord -n '__rcoord_wants_name limit check first' -a '(__rcoord_names limit)'
complete -c rcoord -n '__rcoord_is limit wait' -l rate -x -d 'Allowed rate: N/s, N/m, N/h or N/DUR (e.g. 100/10s); repeat it for several rates at once, all of which must allow (e.g. --rate 10/s --rate 1000/h)'
complete -c rcoord -n '__rcoord_is limit wait' -l burst -x -d 'Most cost allowed at once (default: N of the rate; one --rate only)'
complete -c rcoord -n '__rcoord_is limit wait' -l cost -x -d 'Cost of this request (default 1)'
complete -c rcoord -n '__rcoord_is limit wait' -l algo -x -d 'gcra (default), token-bucket, sliding-window or fixed-window'
complete -c rcoord -n '__rcoord_is limit wait' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Give up at once (consuming nothing) if the slot is further away than DUR (default forever)'
complete -c rcoord -n '__rcoord_wants_name limit wait first' -a '(__rcoord_names limit)'
complete -c rcoord -n '__rcoord_is limit status' -l rate -x -d 'Allowed rate: N/s, N/m, N/h or N/DUR (e.g. 100/10s); repeat it for several rates at once, all of which must allow (e.g. --rate 10/s --rate 1000/h)'
complete -c rcoord -n '__rcoord_is limit status' -l burst -x -d 'Most cost allowed at once (default: N of the rate; one --rate only)'
complete -c rcoord -n '__rcoord_is limit status' -l cost -x -d 'Cost of this request (default 1)'
complete -c rcoord -n '__rcoord_is limit status' -l algo -x -d 'gcra (default), token-bucket, sliding-window or fixed-window'
complete -c rcoord -n '__rcoord_is limit status' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name limit status first' -a '(__rcoord_names limit)'
complete -c rcoord -n '__rcoord_wants_name limit reset first' -a '(__rcoord_names limit)'
complete -c rcoord -n '__rcoord_needs_verb pf' -a add -d 'Add items; print whether the estimate changed'
complete -c rcoord -n '__rcoord_needs_verb pf' -a count -d 'Estimate the distinct items of the union of KEYs'
complete -c rcoord -n '__rcoord_needs_verb pf' -a merge -d 'Merge KEYs into DEST (DEST\'s own items stay)'
complete -c rcoord -n '__rcoord_is pf add' -s 0 -l null -d 'Stdin items end with a NUL byte instead of a newline'
complete -c rcoord -n '__rcoord_is pf add' -l expire -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete the HyperLogLog DUR after this write (each --expire sets it again)'
complete -c rcoord -n '__rcoord_wants_name pf add first' -a '(__rcoord_names pf)'
complete -c rcoord -n '__rcoord_wants_name pf count all' -a '(__rcoord_names pf)'
complete -c rcoord -n '__rcoord_is pf merge' -l expire -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete DEST DUR after this write (each --expire sets it again)'
complete -c rcoord -n '__rcoord_wants_name pf merge all' -a '(__rcoord_names pf)'
complete -c rcoord -n '__rcoord_needs_verb sem' -a take -d 'Take permits and print the holder token'
complete -c rcoord -n '__rcoord_needs_verb sem' -a release -d 'Give back the permits held by TOKEN'
complete -c rcoord -n '__rcoord_needs_verb sem' -a refresh -d 'Extend the lease of the permits held by TOKEN'
complete -c rcoord -n '__rcoord_needs_verb sem' -a status -d 'Show the holders, their permits and leases'
complete -c rcoord -n '__rcoord_needs_verb sem' -a wait -d 'Wait until K permits are free, without taking any'
complete -c rcoord -n '__rcoord_needs_verb sem' -a run -d 'Run a command while holding permits'
complete -c rcoord -n '__rcoord_is sem take' -l limit -x -d 'How many permits exist (every user of NAME must agree)'
complete -c rcoord -n '__rcoord_is sem take' -l permits -x -d 'Take K permits at once, all or none (default 1)'
complete -c rcoord -n '__rcoord_is sem take' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease of the permits (default 30s)'
complete -c rcoord -n '__rcoord_is sem take' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever), in arrival order; default: try once'
complete -c rcoord -n '__rcoord_is sem take' -l token -x -d 'Use this token instead of a random one'
complete -c rcoord -n '__rcoord_wants_name sem take first' -a '(__rcoord_names sem)'
complete -c rcoord -n '__rcoord_is sem release' -l token -x -d 'The holder\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_wants_name sem release first' -a '(__rcoord_names sem)'
complete -c rcoord -n '__rcoord_is sem refresh' -l token -x -d 'The holder\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_is sem refresh' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'New lease from now (default 30s)'
complete -c rcoord -n '__rcoord_wants_name sem refresh first' -a '(__rcoord_names sem)'
complete -c rcoord -n '__rcoord_is sem status' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name sem status first' -a '(__rcoord_names sem)'
complete -c rcoord -n '__rcoord_is sem wait' -l limit -x -d 'How many permits exist (as its takers give it)'
complete -c rcoord -n '__rcoord_is sem wait' -l permits -x -d 'Wait until K permits are free (default 1)'
complete -c rcoord -n '__rcoord_is sem wait' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever), then exit 1 (default: forever; 0: look once)'
complete -c rcoord -n '__rcoord_wants_name sem wait first' -a '(__rcoord_names sem)'
complete -c rcoord -n '__rcoord_is sem run' -l limit -x -d 'How many permits exist (every user of NAME must agree)'
complete -c rcoord -n '__rcoord_is sem run' -l permits -x -d 'Take K permits at once, all or none (default 1)'
complete -c rcoord -n '__rcoord_is sem run' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease of the permits (default 30s)'
complete -c rcoord -n '__rcoord_is sem run' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever), in arrival order; default: try once'
complete -c rcoord -n '__rcoord_is sem run' -l token -x -d 'Use this token instead of a random one'
complete -c rcoord -n '__rcoord_is sem run' -s E -l conflict-exit-code -x -d 'Exit code when no permit is free (default 1); with -E, nothing is said on stderr then, unless --verbose'
complete -c rcoord -n '__rcoord_is sem run' -l verbose -d 'Say on stderr why the command did not run, even with -E, and when it starts'
complete -c rcoord -n '__rcoord_is sem run' -l kill-grace -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'On permit loss, SIGKILL the command this long after SIGTERM (default: 10s or TTL/3, whichever is shorter)'
complete -c rcoord -n '__rcoord_is sem run' -l max-run -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after --kill-grace), give the permits back and exit 124'
complete -c rcoord -n '__rcoord_wants_name sem run first' -a '(__rcoord_names sem)'
complete -c rcoord -n '__rcoord_needs_verb queue' -a push -d 'Push messages (arguments, or stdin one per line)'
complete -c rcoord -n '__rcoord_needs_verb queue' -a pop -d 'Take messages (plain: at most once; --ack-timeout: leased)'
complete -c rcoord -n '__rcoord_needs_verb queue' -a ack -d 'Confirm a leased message: it is deleted'
complete -c rcoord -n '__rcoord_needs_verb queue' -a nack -d 'Give a leased message back: ready again, or dead'
complete -c rcoord -n '__rcoord_needs_verb queue' -a consume -d 'Run a command for each message, with it on stdin'
complete -c rcoord -n '__rcoord_needs_verb queue' -a len -d 'Print how many messages wait (ready + delayed)'
complete -c rcoord -n '__rcoord_needs_verb queue' -a peek -d 'Show the next ready messages without taking them'
complete -c rcoord -n '__rcoord_needs_verb queue' -a stats -d 'Count ready, delayed, in-flight and dead messages'
complete -c rcoord -n '__rcoord_needs_verb queue' -a dead -d 'List dead messages (delivered --max-attempts times)'
complete -c rcoord -n '__rcoord_needs_verb queue' -a replay -d 'Put dead messages back on the queue'
complete -c rcoord -n '__rcoord_needs_verb queue' -a purge -d 'Delete waiting messages, or with --dead the dead ones'
complete -c rcoord -n '__rcoord_is queue push' -s 0 -l null -d 'Stdin messages end with NUL instead of newline'
complete -c rcoord -n '__rcoord_is queue push' -l file -r -F -d 'Push the whole of FILE as one message (\'-\': stdin), byte for byte; repeatable'
complete -c rcoord -n '__rcoord_is queue push' -l delay -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Make the messages ready only after DUR'
complete -c rcoord -n '__rcoord_wants_name queue push first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue pop' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) for a message; default: try once'
complete -c rcoord -n '__rcoord_is queue pop' -l count -x -d 'Take up to N messages (default 1)'
complete -c rcoord -n '__rcoord_is queue pop' -l lifo -d 'Newest first'
complete -c rcoord -n '__rcoord_is queue pop' -l ack-timeout -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease the messages for DUR: ack them in time, or they are delivered again'
complete -c rcoord -n '__rcoord_is queue pop' -l max-attempts -x -d 'Deliver a message at most N times, then it is dead (default 5)'
complete -c rcoord -n '__rcoord_is queue pop' -s 0 -l null -d 'End each message with NUL instead of newline'
complete -c rcoord -n '__rcoord_wants_name queue pop first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue ack' -l attempt -x -d 'Only if the lease is still that delivery\'s'
complete -c rcoord -n '__rcoord_wants_name queue ack first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue nack' -l delay -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Ready again only after DUR'
complete -c rcoord -n '__rcoord_is queue nack' -l attempt -x -d 'Only if the lease is still that delivery\'s'
complete -c rcoord -n '__rcoord_wants_name queue nack first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue consume' -l ack-timeout -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease per message, renewed every DUR/3 while the command runs (default 30s)'
complete -c rcoord -n '__rcoord_is queue consume' -l max-attempts -x -d 'Deliver a message at most N times, then it is dead (default 5)'
complete -c rcoord -n '__rcoord_is queue consume' -l max-messages -x -d 'Exit after N messages'
complete -c rcoord -n '__rcoord_is queue consume' -l idle-exit -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Exit 0 when no message came for DUR'
complete -c rcoord -n '__rcoord_is queue consume' -l retry-delay -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'A failed message is ready again only after DUR (default 0)'
complete -c rcoord -n '__rcoord_is queue consume' -l kill-grace -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'On lease loss, SIGKILL the command this long after SIGTERM (default: 10s or --ack-timeout/3, whichever is shorter)'
complete -c rcoord -n '__rcoord_is queue consume' -l max-run -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Stop the command if one message takes longer than DUR (SIGTERM, SIGKILL after --kill-grace) and nack it, as a failure with code 124; consume goes on with the next message (exit 124 only when it was the last under --max-messages)'
complete -c rcoord -n '__rcoord_wants_name queue consume first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_wants_name queue len first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue peek' -l count -x -d 'Show up to N messages (default 1)'
complete -c rcoord -n '__rcoord_is queue peek' -s 0 -l null -d 'End each message with NUL instead of newline'
complete -c rcoord -n '__rcoord_is queue peek' -l in-flight -d 'List the messages in flight instead, with who leased them and for how long'
complete -c rcoord -n '__rcoord_wants_name queue peek first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue stats' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name queue stats first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue dead' -l count -x -d 'List at most N (default all)'
complete -c rcoord -n '__rcoord_is queue dead' -s 0 -l null -d 'End each message with NUL instead of newline'
complete -c rcoord -n '__rcoord_wants_name queue dead first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_wants_name queue replay first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_is queue purge' -l dead -d 'Delete the dead messages instead'
complete -c rcoord -n '__rcoord_wants_name queue purge first' -a '(__rcoord_names queue)'
complete -c rcoord -n '__rcoord_needs_verb elect' -a campaign -d 'Become leader (or renew) and print the term'
complete -c rcoord -n '__rcoord_needs_verb elect' -a status -d 'Show the leader, its term and remaining lease'
complete -c rcoord -n '__rcoord_needs_verb elect' -a resign -d 'Step down if ID leads, and wake a candidate'
complete -c rcoord -n '__rcoord_needs_verb elect' -a observe -d 'Print the leader now and on every change'
complete -c rcoord -n '__rcoord_needs_verb elect' -a run -d 'Run a command while this candidate leads'
complete -c rcoord -n '__rcoord_is elect campaign' -l id -x -d 'This candidate\'s id (unique per process)'
complete -c rcoord -n '__rcoord_is elect campaign' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease length (default 10s); campaign again within it to stay leader'
complete -c rcoord -n '__rcoord_is elect campaign' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) to become leader; default: try once'
complete -c rcoord -n '__rcoord_wants_name elect campaign first' -a '(__rcoord_names elect)'
complete -c rcoord -n '__rcoord_is elect status' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name elect status first' -a '(__rcoord_names elect)'
complete -c rcoord -n '__rcoord_is elect resign' -l id -x -d 'The leader\'s id'
complete -c rcoord -n '__rcoord_wants_name elect resign first' -a '(__rcoord_names elect)'
complete -c rcoord -n '__rcoord_is elect observe' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Observe for DUR (or forever), then exit 0 (default: forever, until interrupted)'
complete -c rcoord -n '__rcoord_wants_name elect observe first' -a '(__rcoord_names elect)'
complete -c rcoord -n '__rcoord_is elect run' -l id -x -d 'This candidate\'s id (unique per process)'
complete -c rcoord -n '__rcoord_is elect run' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease length, renewed every TTL/3 (default 10s)'
complete -c rcoord -n '__rcoord_is elect run' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) to become leader; default: try once'
complete -c rcoord -n '__rcoord_is elect run' -s E -l conflict-exit-code -x -d 'Exit code when another candidate leads (default 1); with -E, nothing is said on stderr then, unless --verbose'
complete -c rcoord -n '__rcoord_is elect run' -l verbose -d 'Say on stderr why the command did not run, even with -E, and when it starts'
complete -c rcoord -n '__rcoord_is elect run' -l kill-grace -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'On loss of leadership, SIGKILL the command this long after SIGTERM (default: 10s or TTL/3, whichever is shorter)'
complete -c rcoord -n '__rcoord_is elect run' -l max-run -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after --kill-grace), step down and exit 124'
complete -c rcoord -n '__rcoord_wants_name elect run first' -a '(__rcoord_names elect)'
complete -c rcoord -n '__rcoord_needs_verb gate' -a acquire -d 'Take every part, or none, and print the token'
complete -c rcoord -n '__rcoord_needs_verb gate' -a release -d 'Give back every part held by TOKEN'
complete -c rcoord -n '__rcoord_needs_verb gate' -a extend -d 'Extend the lease of every part held by TOKEN'
complete -c rcoord -n '__rcoord_needs_verb gate' -a status -d 'Show the parts of TOKEN\'s gate and whether it holds them'
complete -c rcoord -n '__rcoord_needs_verb gate' -a run -d 'Run a command while holding every part'
complete -c rcoord -n '__rcoord_is gate acquire' -l lock -x -d 'Take exclusive lock NAME (repeatable)'
complete -c rcoord -n '__rcoord_is gate acquire' -l shared-lock -x -d 'Take lock NAME as a reader (repeatable)'
complete -c rcoord -n '__rcoord_is gate acquire' -l sem -x -d 'Take PERMITS (default 1) of LIMIT permits of semaphore NAME (repeatable)'
complete -c rcoord -n '__rcoord_is gate acquire' -l rate -x -d 'Consume one slot of rate limit NAME at RATE, e.g. api:10/s (repeatable)'
complete -c rcoord -n '__rcoord_is gate acquire' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease of every part (default 30s)'
complete -c rcoord -n '__rcoord_is gate acquire' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) for every part at once; default: try once'
complete -c rcoord -n '__rcoord_is gate acquire' -l token -x -d 'Use this token instead of a random one'
complete -c rcoord -n '__rcoord_is gate release' -l token -x -d 'The gate\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_is gate extend' -l token -x -d 'The gate\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_is gate extend' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'New lease from now (default 30s)'
complete -c rcoord -n '__rcoord_is gate status' -l token -x -d 'The gate\'s token (default $RCOORD_TOKEN)'
complete -c rcoord -n '__rcoord_is gate run' -l lock -x -d 'Take exclusive lock NAME (repeatable)'
complete -c rcoord -n '__rcoord_is gate run' -l shared-lock -x -d 'Take lock NAME as a reader (repeatable)'
complete -c rcoord -n '__rcoord_is gate run' -l sem -x -d 'Take PERMITS (default 1) of LIMIT permits of semaphore NAME (repeatable)'
complete -c rcoord -n '__rcoord_is gate run' -l rate -x -d 'Consume one slot of rate limit NAME at RATE, e.g. api:10/s (repeatable)'
complete -c rcoord -n '__rcoord_is gate run' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Lease of every part (default 30s)'
complete -c rcoord -n '__rcoord_is gate run' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) for every part at once; default: try once'
complete -c rcoord -n '__rcoord_is gate run' -l token -x -d 'Use this token instead of a random one'
complete -c rcoord -n '__rcoord_is gate run' -s E -l conflict-exit-code -x -d 'Exit code when some part is taken (default 1); with -E, nothing is said on stderr then, unless --verbose'
complete -c rcoord -n '__rcoord_is gate run' -l verbose -d 'Say on stderr why the command did not run, even with -E, and when it starts'
complete -c rcoord -n '__rcoord_is gate run' -l kill-grace -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'On the loss of a part, SIGKILL the command this long after SIGTERM (default: 10s or TTL/3, whichever is shorter)'
complete -c rcoord -n '__rcoord_is gate run' -l max-run -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Stop the command if it runs longer than DUR (SIGTERM, SIGKILL after --kill-grace), give every part back and exit 124'
complete -c rcoord -n '__rcoord_needs_verb signal' -a send -d 'Send DATA to the waiters of CHANNEL; print how many'
complete -c rcoord -n '__rcoord_needs_verb signal' -a wait -d 'Wait for a message on any CHANNEL; print its data'
complete -c rcoord -n '__rcoord_is signal send' -l one -d 'Deliver to exactly one waiting receiver, chosen at random'
complete -c rcoord -n '__rcoord_wants_name signal send first' -a '(__rcoord_names signal)'
complete -c rcoord -n '__rcoord_is signal wait' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) for the message, then exit 1 (default: forever)'
complete -c rcoord -n '__rcoord_is signal wait' -l all -d 'Wait for one message on every channel (one line each)'
complete -c rcoord -n '__rcoord_wants_name signal wait all' -a '(__rcoord_names signal)'
complete -c rcoord -n '__rcoord_needs_verb latch' -a init -d 'Create a latch with a count (an existing one is kept)'
complete -c rcoord -n '__rcoord_needs_verb latch' -a down -d 'Count a latch down; print the count left'
complete -c rcoord -n '__rcoord_needs_verb latch' -a wait -d 'Wait until the count is 0 (at once if it is)'
complete -c rcoord -n '__rcoord_needs_verb latch' -a status -d 'Show the count left'
complete -c rcoord -n '__rcoord_is latch init' -l count -x -d 'The count to start from (0 or more)'
complete -c rcoord -n '__rcoord_is latch init' -l ttl -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Delete the latch this long after init (default: never)'
complete -c rcoord -n '__rcoord_wants_name latch init first' -a '(__rcoord_names latch)'
complete -c rcoord -n '__rcoord_is latch down' -l by -x -d 'Count down by K (default 1)'
complete -c rcoord -n '__rcoord_wants_name latch down first' -a '(__rcoord_names latch)'
complete -c rcoord -n '__rcoord_is latch wait' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever), then exit 1 (default: forever)'
complete -c rcoord -n '__rcoord_wants_name latch wait first' -a '(__rcoord_names latch)'
complete -c rcoord -n '__rcoord_is latch status' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name latch status first' -a '(__rcoord_names latch)'
complete -c rcoord -n '__rcoord_is ls' -l type -x -a 'lock sem limit bloom pf complete recent elect queue signal latch gate' -d 'Only objects of this type'
complete -c rcoord -n '__rcoord_is ls' -l names -d 'Print only the names, one per line (escaped: \\n for a newline, \\\\ for a backslash); no state is read'
complete -c rcoord -n '__rcoord_is ls' -l watch -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Show it again every DUR (100ms or more) until interrupted (Ctrl-C)'
complete -c rcoord -n '__rcoord_wants_name ls first' -a '(__rcoord_names any)'
complete -c rcoord -n '__rcoord_is top' -l type -x -a 'lock sem limit bloom pf complete recent elect queue signal latch gate' -d 'Only objects of this type'
complete -c rcoord -n '__rcoord_is top' -l interval -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Refresh every DUR (default 1s, at least 100ms)'
complete -c rcoord -n '__rcoord_wants_name top first' -a '(__rcoord_names any)'
complete -c rcoord -n '__rcoord_is metrics' -l type -x -a 'lock sem limit bloom pf complete recent elect queue signal latch gate' -d 'Only objects of this type'
complete -c rcoord -n '__rcoord_is metrics' -l textfile -r -F -d 'Write them to FILE instead, atomically (for node_exporter\'s textfile collector: name it *.prom in its directory); - is stdout'
complete -c rcoord -n '__rcoord_wants_name metrics first' -a '(__rcoord_names any)'
complete -c rcoord -n '__rcoord_is rm' -l type -x -a 'lock sem limit bloom pf complete recent elect queue signal latch gate' -d 'The objects\' type'
complete -c rcoord -n '__rcoord_is rm' -l force -d 'Also remove a held lock, a semaphore with holders, an election with a leader, a queue with messages in flight'
complete -c rcoord -n '__rcoord_is rm' -l dry-run -d 'Print what would be removed; remove nothing'
complete -c rcoord -n '__rcoord_wants_name rm all' -a '(__rcoord_names any)'
complete -c rcoord -n '__rcoord_is history' -l type -x -a 'lock sem elect queue' -d ''
complete -c rcoord -n '__rcoord_is history' -l limit -x -d 'Only the N most recent events'
complete -c rcoord -n '__rcoord_is history' -l since -x -a '250ms 1s 10s 30s 1m 5m 10m 1h' -d 'Only events of the last DUR (by the server\'s clock)'
complete -c rcoord -n '__rcoord_is history' -s f -l follow -d 'Go on printing events as they happen (a blocking read) until Ctrl-C or --wait'
complete -c rcoord -n '__rcoord_is history' -s w -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'With --follow, stop after DUR (or never: forever, the default) and exit 0'
complete -c rcoord -n '__rcoord_wants_name history first' -a '(__rcoord_names any)'
# END GENERATED
