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
            case -u --url --password-file --timeout --prefix -o --output --config -h -p -n -a --pass --user -s --ttl --wait --token -E --conflict-exit-code --kill-grace --min-hold --delay --file --count --ack-timeout --max-attempts --attempt --max-messages --idle-exit --retry-delay
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

# True when the command is `queue` and no verb has been given yet.
function __rcoord_needs_queue_verb
    set -l args (__rcoord_args)
    test (count $args) -eq 1; and test "$args[1]" = queue
end

# True when the command is `queue VERB` (VERB one of the arguments).
function __rcoord_queue_verb
    set -l args (__rcoord_args)
    test "$args[1]" = queue; and contains -- "$args[2]" $argv
end

# True when completing the command that `lock run NAME --` or `queue consume Q --` will run.
function __rcoord_in_child_command
    set -l tokens (commandline -opc)
    contains -- -- $tokens; or return 1
    set -l args (__rcoord_args)
    begin
        test "$args[1]" = lock; and test "$args[2]" = run
    end; or begin
        test "$args[1]" = queue; and test "$args[2]" = consume
    end
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
complete -c rcoord -n __rcoord_in_child_command -x -a '(__rcoord_complete_child)'

# queue
complete -c rcoord -n __rcoord_needs_command -a queue -d 'Reliable queues: push, pop, ack, dead letters'
complete -c rcoord -n __rcoord_needs_queue_verb -a push -d 'Push messages (arguments, or stdin one per line)'
complete -c rcoord -n __rcoord_needs_queue_verb -a pop -d 'Take messages (at most once, or leased with --ack-timeout)'
complete -c rcoord -n __rcoord_needs_queue_verb -a ack -d 'Confirm a leased message: it is deleted'
complete -c rcoord -n __rcoord_needs_queue_verb -a nack -d 'Give a leased message back: ready again, or dead'
complete -c rcoord -n __rcoord_needs_queue_verb -a consume -d 'Run a command for each message, with it on stdin'
complete -c rcoord -n __rcoord_needs_queue_verb -a len -d 'Print how many messages wait (ready + delayed)'
complete -c rcoord -n __rcoord_needs_queue_verb -a peek -d 'Show the next ready messages without taking them'
complete -c rcoord -n __rcoord_needs_queue_verb -a stats -d 'Count ready, delayed, in-flight and dead messages'
complete -c rcoord -n __rcoord_needs_queue_verb -a dead -d 'List dead messages'
complete -c rcoord -n __rcoord_needs_queue_verb -a replay -d 'Put dead messages back on the queue'
complete -c rcoord -n __rcoord_needs_queue_verb -a purge -d 'Delete waiting messages, or with --dead the dead ones'

set -l qnul '__rcoord_queue_verb push pop peek dead'
complete -c rcoord -n $qnul -s 0 -l null -d 'Messages end with NUL instead of newline'
complete -c rcoord -n '__rcoord_queue_verb push' -l file -r -F -d 'Push the whole of FILE as one message (- is stdin)'
complete -c rcoord -n '__rcoord_queue_verb push nack' -l delay -x -a '10s 30s 1m 5m 10m 1h' -d 'Ready only after DUR'
complete -c rcoord -n '__rcoord_queue_verb pop' -l wait -x -a 'forever 10s 30s 1m 5m 10m' -d 'Wait up to DUR (or forever) for a message'
complete -c rcoord -n '__rcoord_queue_verb pop peek dead' -l count -x -d 'At most N messages'
complete -c rcoord -n '__rcoord_queue_verb pop' -l lifo -d 'Newest first'
complete -c rcoord -n '__rcoord_queue_verb pop consume; and not __rcoord_in_child_command' -l ack-timeout -x -a '30s 1m 5m 10m' -d 'Lease per message; ack in time or it is delivered again'
complete -c rcoord -n '__rcoord_queue_verb pop consume; and not __rcoord_in_child_command' -l max-attempts -x -a '3 5 10' -d 'Deliver a message at most N times, then it is dead'
complete -c rcoord -n '__rcoord_queue_verb ack nack' -l attempt -x -d "Only if the lease is still that delivery's"
set -l qconsume '__rcoord_queue_verb consume; and not __rcoord_in_child_command'
complete -c rcoord -n $qconsume -l max-messages -x -d 'Exit after N messages'
complete -c rcoord -n $qconsume -l idle-exit -x -a '10s 1m 5m' -d 'Exit 0 when no message came for DUR'
complete -c rcoord -n $qconsume -l retry-delay -x -a '10s 30s 1m 5m' -d 'A failed message is ready again only after DUR'
complete -c rcoord -n $qconsume -l kill-grace -x -a '1s 5s 10s 30s' -d 'On lease loss, SIGKILL this long after SIGTERM'
complete -c rcoord -n '__rcoord_queue_verb purge' -l dead -d 'Delete the dead messages instead'
