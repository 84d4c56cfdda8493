# bash completion for rcoord                                    -*- shell-script -*-
# Install as /usr/share/bash-completion/completions/rcoord (cmake --install does), or
# source this file from ~/.bashrc.

_rcoord_global_opts='-u --url --password-file --timeout --prefix -o --output --json -q --quiet
  --config -h -p -n -a --pass --user -s --help --version'

# Options (global or per verb) that take a value in the next word.
_rcoord_opts_with_arg='-u --url --password-file --timeout --prefix -o --output --config -h -p -n
  -a --pass --user -s --ttl --wait --token -E --conflict-exit-code --kill-grace --min-hold
  --id --count --by'

_rcoord_takes_arg() {
  local o
  for o in $_rcoord_opts_with_arg; do
    [[ $1 == "$o" ]] && return 0
  done
  return 1
}

# Sets COMPREPLY to the words of $1 that start with $2.
_rcoord_reply() {
  mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

# Options of each verb, by command and verb (--help is among the global ones).
_rcoord_verb_opts() {
  case $1:$2 in
    lock:acquire) echo '--ttl --wait --token' ;;
    lock:release) echo '--token' ;;
    lock:extend) echo '--token --ttl' ;;
    lock:run) echo '--ttl --wait --token -E --conflict-exit-code --kill-grace --min-hold --' ;;
    elect:campaign) echo '--id --ttl --wait' ;;
    elect:resign) echo '--id' ;;
    elect:observe) echo '--timeout' ;;
    elect:run) echo '--id --ttl --wait -E --conflict-exit-code --kill-grace --' ;;
    signal:send) echo '--one' ;;
    signal:wait) echo '--timeout --all' ;;
    latch:init) echo '--count --ttl' ;;
    latch:down) echo '--by' ;;
    latch:wait) echo '--timeout' ;;
  esac
}

# The verbs of a command.
_rcoord_verbs() {
  case $1 in
    lock) echo 'acquire release extend status break run' ;;
    elect) echo 'campaign status resign observe run' ;;
    signal) echo 'send wait' ;;
    latch) echo 'init down wait status' ;;
  esac
}

_rcoord() {
  local cur prev
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=''
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # `--opt=value`: bash splits the word at '='.
  if [[ $prev == = && $COMP_CWORD -gt 1 ]]; then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == = ]]; then
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cur=''
  fi
  COMPREPLY=()

  # Walk the words before the cursor: find the command, the verb, the positional
  # arguments after the verb, and where the child command of `lock run`/`elect run` starts.
  local i word command='' verb='' nargs=0 cmd_start=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == -- ]]; then
      cmd_start=$((i + 1))
      break
    fi
    if [[ $word == -* ]]; then
      if [[ $word != *=* ]] && _rcoord_takes_arg "$word"; then
        ((i++))
        [[ ${COMP_WORDS[i]} == = ]] && ((i++))
      fi
      continue
    fi
    if [[ -z $command ]]; then
      command=$word
    elif [[ -n $(_rcoord_verbs "$command") && -z $verb ]]; then
      verb=$word
    else
      ((nargs++))
      if [[ ($command == lock || $command == elect) && $verb == run && $nargs -eq 2 ]]; then
        # `lock run NAME CMD...` without `--`: the command starts here.
        cmd_start=$i
        break
      fi
    fi
  done
  if [[ $cmd_start -eq 0 && ($command == lock || $command == elect) && $verb == run && $nargs -eq 1 &&
    $cur != -* ]]; then
    cmd_start=$COMP_CWORD
  fi

  # lock run NAME -- CMD... (or elect run): complete the child's command line.
  if ((cmd_start > 0)); then
    if ((COMP_CWORD == cmd_start)); then
      mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
    elif declare -F _command_offset >/dev/null; then
      _command_offset "$cmd_start"
    else
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
  fi

  # Values of options.
  case $prev in
    -u | --url)
      _rcoord_reply 'redis:// unix:///' "$cur"
      compopt -o nospace 2>/dev/null
      return 0
      ;;
    --password-file | --config)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      return 0
      ;;
    -s)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      return 0
      ;;
    -o | --output)
      _rcoord_reply 'text json' "$cur"
      return 0
      ;;
    -h)
      mapfile -t COMPREPLY < <(compgen -A hostname -- "$cur")
      return 0
      ;;
    -p)
      _rcoord_reply '6379' "$cur"
      return 0
      ;;
    -n)
      _rcoord_reply '0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15' "$cur"
      return 0
      ;;
    --timeout)
      if [[ $verb == wait || $verb == observe ]]; then
        _rcoord_reply 'forever 10s 30s 1m 5m 10m 1h' "$cur"
      else
        _rcoord_reply '500ms 1s 2s 5s 10s' "$cur"
      fi
      return 0
      ;;
    --count | --by)
      _rcoord_reply '1 2 3 4 5 8 10' "$cur"
      return 0
      ;;
    --ttl | --kill-grace | --min-hold)
      _rcoord_reply '10s 30s 1m 5m 10m 1h' "$cur"
      return 0
      ;;
    --wait)
      _rcoord_reply 'forever 10s 30s 1m 5m 10m' "$cur"
      return 0
      ;;
    -E | --conflict-exit-code)
      _rcoord_reply '0 1 75' "$cur"
      return 0
      ;;
    -a | --pass | --user | --prefix | --token | --id)
      return 0
      ;;
  esac

  if [[ $cur == -* ]]; then
    local opts=$_rcoord_global_opts
    [[ -n $verb ]] && opts="$opts $(_rcoord_verb_opts "$command" "$verb")"
    _rcoord_reply "$opts" "$cur"
    return 0
  fi

  if [[ -z $command ]]; then
    _rcoord_reply 'lock elect signal latch ping' "$cur"
  elif [[ -z $verb ]]; then
    _rcoord_reply "$(_rcoord_verbs "$command")" "$cur"
  fi
  return 0
}

complete -F _rcoord rcoord
