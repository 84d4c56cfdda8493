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
        switch $t
            case --
                return
            case -u --url --password-file --timeout --prefix -o --output --config -h -p -n -a --pass --user -s --ttl --wait --token -E --conflict-exit-code --kill-grace --min-hold --id --count --by
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end

# True when no command has been given yet.
function __rcoord_needs_command
    set -l args (__rcoord_args)
    test (count $args) -eq 0
end

# True when the command is `lock` and no verb has been given yet.
function __rcoord_needs_lock_verb
    set -l args (__rcoord_args)
    test (count $args) -eq 1; and test "$args[1]" = lock
end

# True when the command is $argv[1] and no verb has been given yet.
function __rcoord_needs_verb_of
    set -l args (__rcoord_args)
    test (count $args) -eq 1; and test "$args[1]" = $argv[1]
end

# True when the command is $argv[1] and the verb $argv[2].
function __rcoord_verb_is
    set -l args (__rcoord_args)
    test (count $args) -ge 2; and test "$args[1]" = $argv[1]; and test "$args[2]" = $argv[2]
end

# True when completing the command that `lock run NAME --` (or `elect run`) will run.
function __rcoord_in_child_command
    set -l tokens (commandline -opc)
    contains -- -- $tokens; or return 1
    set -l args (__rcoord_args)
    contains -- "$args[1]" lock elect; and test "$args[2]" = run
end

# Completes the child's command line as if it were typed on its own.
function __rcoord_complete_child
    set -l tokens (commandline -opc) (commandline -ct)
    set -l i (contains -i -- -- $tokens)
    set -l rest $tokens[(math $i + 1)..-1]
    complete -C (string join -- ' ' (string escape -- $rest))
end

complete -c rcoord -f

# Global options, accepted before the command and after the verb.
set -l global 'not __rcoord_in_child_command'
complete -c rcoord -n $global -s u -l url -x -a 'redis:// unix:///' -d 'Redis URL'
complete -c rcoord -n $global -l password-file -r -F -d 'Read the password from FILE'
complete -c rcoord -n $global -l timeout -x -a '500ms 1s 2s 5s 10s' -d 'Connect and reply timeout (default 2s)'
complete -c rcoord -n $global -l prefix -x -d 'Namespace of every key (default rcoord:)'
complete -c rcoord -n $global -s o -l output -x -a 'text json' -d 'Output format'
complete -c rcoord -n $global -l json -d 'Same as -o json'
complete -c rcoord -n $global -s q -l quiet -d 'Print nothing on stdout'
complete -c rcoord -n $global -l config -r -F -d 'TOML file of defaults'
complete -c rcoord -n $global -s h -x -a '(__fish_print_hostnames)' -d 'Server host (as redis-cli)'
complete -c rcoord -n $global -s p -x -a 6379 -d 'Server port (as redis-cli)'
complete -c rcoord -n $global -s n -x -a '0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15' -d 'Database number (as redis-cli)'
complete -c rcoord -n $global -s a -l pass -x -d 'Password (as redis-cli; visible in ps)'
complete -c rcoord -n $global -l user -x -d 'ACL user name (as redis-cli)'
complete -c rcoord -n $global -s s -r -F -d 'Unix socket path (as redis-cli)'
complete -c rcoord -n $global -l help -d 'Print help and exit'
complete -c rcoord -n $global -l version -d 'Print the version and exit'

# Commands.
complete -c rcoord -n __rcoord_needs_command -a lock -d 'Mutual exclusion with a TTL and fencing tokens'
complete -c rcoord -n __rcoord_needs_command -a elect -d 'Leader election with a lease and fencing terms'
complete -c rcoord -n __rcoord_needs_command -a signal -d 'Send and wait for signals on named channels'
complete -c rcoord -n __rcoord_needs_command -a latch -d 'Count-down latches: wait until N parties are done'
complete -c rcoord -n __rcoord_needs_command -a ping -d 'Check the server: version, mode, round-trip time'

# lock verbs.
complete -c rcoord -n __rcoord_needs_lock_verb -a acquire -d 'Take a lock and print its token'
complete -c rcoord -n __rcoord_needs_lock_verb -a release -d 'Release a lock held by TOKEN'
complete -c rcoord -n __rcoord_needs_lock_verb -a extend -d 'Give a held lock a new TTL'
complete -c rcoord -n __rcoord_needs_lock_verb -a status -d 'Show the holder, remaining TTL and fence'
complete -c rcoord -n __rcoord_needs_lock_verb -a break -d 'Delete a lock whoever holds it'
complete -c rcoord -n __rcoord_needs_lock_verb -a run -d 'Run a command while holding the lock'

# lock acquire
set -l acquire '__fish_seen_subcommand_from lock; and __fish_seen_subcommand_from acquire'
complete -c rcoord -n $acquire -l ttl -x -a '10s 30s 1m 5m 10m 1h' -d 'Lease length (default 30s)'
complete -c rcoord -n $acquire -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever)'
complete -c rcoord -n $acquire -l token -x -d "Use this token (the holder's token refreshes the TTL)"

# lock release
set -l release '__fish_seen_subcommand_from lock; and __fish_seen_subcommand_from release'
complete -c rcoord -n $release -l token -x -d "The holder's token (default \$RCOORD_TOKEN)"

# lock extend
set -l extend '__fish_seen_subcommand_from lock; and __fish_seen_subcommand_from extend'
complete -c rcoord -n $extend -l token -x -d "The holder's token (default \$RCOORD_TOKEN)"
complete -c rcoord -n $extend -l ttl -x -a '10s 30s 1m 5m 10m 1h' -d 'New lease length from now (default 30s)'

# lock status and lock break take only the name (and the global options).

# lock run
set -l run '__fish_seen_subcommand_from lock; and __fish_seen_subcommand_from run; and not __rcoord_in_child_command'
complete -c rcoord -n $run -l ttl -x -a '10s 30s 1m 5m 10m 1h' -d 'Lease length, renewed every TTL/3 (default 30s)'
complete -c rcoord -n $run -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever)'
complete -c rcoord -n $run -l token -x -d 'Use this token instead of a random one'
complete -c rcoord -n $run -s E -l conflict-exit-code -x -a '0 1 75' -d 'Exit code when the lock is busy (default 1)'
complete -c rcoord -n $run -l kill-grace -x -a '1s 5s 10s 30s' -d 'On loss, SIGKILL this long after SIGTERM (default 10s)'
complete -c rcoord -n $run -l min-hold -x -a '1m 5m 10m 15m 1h' -d 'Keep the lock until DUR after acquisition'

# elect verbs.
complete -c rcoord -n '__rcoord_needs_verb_of elect' -a campaign -d 'Become leader (or renew) and print the term'
complete -c rcoord -n '__rcoord_needs_verb_of elect' -a status -d 'Show the leader, its term and remaining lease'
complete -c rcoord -n '__rcoord_needs_verb_of elect' -a resign -d 'Step down if ID leads, and wake a candidate'
complete -c rcoord -n '__rcoord_needs_verb_of elect' -a observe -d 'Print the leader now and on every change'
complete -c rcoord -n '__rcoord_needs_verb_of elect' -a run -d 'Run a command while this candidate leads'

# elect campaign
set -l campaign '__rcoord_verb_is elect campaign'
complete -c rcoord -n $campaign -l id -x -a '(hostname)' -d "This candidate's id (unique per process)"
complete -c rcoord -n $campaign -l ttl -x -a '5s 10s 30s 1m' -d 'Lease length (default 10s)'
complete -c rcoord -n $campaign -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) to become leader'

# elect resign
complete -c rcoord -n '__rcoord_verb_is elect resign' -l id -x -a '(hostname)' -d "The leader's id"

# elect observe
complete -c rcoord -n '__rcoord_verb_is elect observe' -l timeout -x -a 'forever 10s 30s 1m 5m 10m 1h' -d 'Observe for DUR, then exit 0'

# elect run
set -l erun '__rcoord_verb_is elect run; and not __rcoord_in_child_command'
complete -c rcoord -n $erun -l id -x -a '(hostname)' -d "This candidate's id (unique per process)"
complete -c rcoord -n $erun -l ttl -x -a '5s 10s 30s 1m' -d 'Lease length, renewed every TTL/3 (default 10s)'
complete -c rcoord -n $erun -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) to become leader'
complete -c rcoord -n $erun -s E -l conflict-exit-code -x -a '0 1 75' -d 'Exit code when another candidate leads (default 1)'
complete -c rcoord -n $erun -l kill-grace -x -a '1s 5s 10s 30s' -d 'On loss, SIGKILL this long after SIGTERM (default 10s)'

# signal verbs.
complete -c rcoord -n '__rcoord_needs_verb_of signal' -a send -d 'Send DATA to the waiters of CHANNEL; print how many'
complete -c rcoord -n '__rcoord_needs_verb_of signal' -a wait -d 'Wait for a message on any CHANNEL; print its data'
complete -c rcoord -n '__rcoord_verb_is signal send' -l one -d 'Deliver to exactly one waiting receiver, chosen at random'
complete -c rcoord -n '__rcoord_verb_is signal wait' -l timeout -x -a 'forever 10s 30s 1m 5m 10m 1h' -d 'Wait up to DUR, then exit 1'
complete -c rcoord -n '__rcoord_verb_is signal wait' -l all -d 'Wait for one message on every channel'

# latch verbs.
complete -c rcoord -n '__rcoord_needs_verb_of latch' -a init -d 'Create a latch with a count (an existing one is kept)'
complete -c rcoord -n '__rcoord_needs_verb_of latch' -a down -d 'Count a latch down; print the count left'
complete -c rcoord -n '__rcoord_needs_verb_of latch' -a wait -d 'Wait until the count is 0 (at once if it is)'
complete -c rcoord -n '__rcoord_needs_verb_of latch' -a status -d 'Show the count left'
complete -c rcoord -n '__rcoord_verb_is latch init' -l count -x -a '1 2 3 4 5 8 10' -d 'The count to start from'
complete -c rcoord -n '__rcoord_verb_is latch init' -l ttl -x -a '1h 6h 24h' -d 'Delete the latch this long after init'
complete -c rcoord -n '__rcoord_verb_is latch down' -l by -x -a '1 2 3' -d 'Count down by K (default 1)'
complete -c rcoord -n '__rcoord_verb_is latch wait' -l timeout -x -a 'forever 10s 30s 1m 5m 10m 1h' -d 'Wait up to DUR, then exit 1'

complete -c rcoord -n __rcoord_in_child_command -x -a '(__rcoord_complete_child)'
