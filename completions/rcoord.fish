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
            case -u --url --password-file --timeout --prefix -o --output --config -h -p -n -a --pass --user -s --ttl --wait --token -E --conflict-exit-code --kill-grace --min-hold --capacity --error-rate --expansion --score --limit --max
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
function __rcoord_needs_verb
    set -l args (__rcoord_args)
    test (count $args) -eq 1; and test "$args[1]" = $argv[1]
end

# True when the words so far are exactly `$argv[1] $argv[2]` plus at least one more.
function __rcoord_verb_is
    set -l args (__rcoord_args)
    test (count $args) -ge 2; and test "$args[1]" = $argv[1]; and test "$args[2]" = $argv[2]
end

# True when the words are `complete recent` and no sub-verb has been given yet.
function __rcoord_needs_recent_verb
    set -l args (__rcoord_args)
    test (count $args) -eq 2; and test "$args[1]" = complete; and test "$args[2]" = recent
end

# True when the words are `complete recent $argv[1] ...`.
function __rcoord_recent_is
    set -l args (__rcoord_args)
    test (count $args) -ge 3; and test "$args[1]" = complete; and test "$args[2]" = recent; and test "$args[3]" = $argv[1]
end

# True when completing the command that `lock run NAME --` will run.
function __rcoord_in_child_command
    set -l tokens (commandline -opc)
    contains -- -- $tokens; or return 1
    set -l args (__rcoord_args)
    test "$args[1]" = lock; and test "$args[2]" = run
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
complete -c rcoord -n __rcoord_needs_command -a bloom -d 'Scalable Bloom filters: add and test items'
complete -c rcoord -n __rcoord_needs_command -a pf -d 'HyperLogLog: count distinct items in 12 KiB'
complete -c rcoord -n __rcoord_needs_command -a complete -d 'Autocomplete: prefix search and recent items'

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

# bloom
complete -c rcoord -n '__rcoord_needs_verb bloom' -a reserve -d 'Create a filter sized for N items at error rate P'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a add -d 'Add items; print the ones that were new'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a test -d 'Test items; exit 1 if any is definitely absent'
complete -c rcoord -n '__rcoord_needs_verb bloom' -a info -d 'Show size, items, layers and the real fill ratio'
complete -c rcoord -n '__rcoord_verb_is bloom reserve' -l capacity -x -d 'Items the first layer holds at the error rate'
complete -c rcoord -n '__rcoord_verb_is bloom reserve' -l error-rate -x -a '0.1 0.01 0.001' -d 'False-positive rate, e.g. 0.01'
complete -c rcoord -n '__rcoord_verb_is bloom reserve' -l expansion -x -a '1 2 4' -d 'When full, add a layer N times larger (default 2)'
complete -c rcoord -n '__rcoord_verb_is bloom reserve' -l nonscaling -d 'Never add a layer: refuse new items when full'
for verb in add test
    complete -c rcoord -n "__rcoord_verb_is bloom $verb" -s 0 -l null -d 'Stdin items end with a NUL byte'
    complete -c rcoord -n "__rcoord_verb_is bloom $verb" -l summary -d 'Print only the totals at the end'
end

# pf
complete -c rcoord -n '__rcoord_needs_verb pf' -a add -d 'Add items; print whether the estimate changed'
complete -c rcoord -n '__rcoord_needs_verb pf' -a count -d 'Estimate the distinct items of the union of KEYs'
complete -c rcoord -n '__rcoord_needs_verb pf' -a merge -d 'Merge KEYs into DEST'
complete -c rcoord -n '__rcoord_verb_is pf add' -s 0 -l null -d 'Stdin items end with a NUL byte'

# complete
complete -c rcoord -n '__rcoord_needs_verb complete' -a add -d 'Add terms; print the ones that were new'
complete -c rcoord -n '__rcoord_needs_verb complete' -a suggest -d 'Terms that start with PREFIX, ignoring case'
complete -c rcoord -n '__rcoord_needs_verb complete' -a remove -d 'Remove terms (exactly as they were added)'
complete -c rcoord -n '__rcoord_needs_verb complete' -a recent -d 'Most-recent-first lists without duplicates'
complete -c rcoord -n '__rcoord_verb_is complete add' -l score -x -d 'Set the score (with --incr: add it)'
complete -c rcoord -n '__rcoord_verb_is complete add' -l incr -d 'Add 1 (or --score S) to the score'
complete -c rcoord -n '__rcoord_verb_is complete add' -l summary -d 'Print only the totals at the end'
complete -c rcoord -n '__rcoord_verb_is complete add; or __rcoord_verb_is complete remove' -s 0 -l null -d 'Stdin terms end with a NUL byte'
complete -c rcoord -n '__rcoord_verb_is complete suggest; or __rcoord_recent_is suggest' -l limit -x -a '5 10 20' -d 'At most N suggestions (default 10)'
complete -c rcoord -n __rcoord_needs_recent_verb -a push -d 'Put ITEM first in LIST'
complete -c rcoord -n __rcoord_needs_recent_verb -a suggest -d 'Items of LIST that start with PREFIX, newest first'
complete -c rcoord -n '__rcoord_recent_is push' -l max -x -a '10 100 1000' -d 'Keep at most N items (default 100)'
