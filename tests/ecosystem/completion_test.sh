#!/bin/bash
# completion_test.sh COMPLETION_FILE CDPLAN: the generated bash completion,
# sourced, completes commands, subcommands and options the way a shell would
# (COMP_WORDS/COMP_CWORD, then the completion function), and knows every
# command of the binary's own table (`cdplan --commands`).
set -u
comp=$1
bin=$2
fail=0
# shellcheck source=/dev/null
source "$comp" || {
  echo "FAIL: cannot source $comp"
  exit 1
}
fn=$(complete -p cdplan 2>/dev/null | sed -n 's/.*-F \([^ ]*\) cdplan$/\1/p')
[ -n "$fn" ] || {
  echo "FAIL: no completion function registered for cdplan"
  exit 1
}
# expect "WORDS..." "EXPECTED REPLIES (sorted, space-separated)"
expect() {
  local line=$1 want=$2 got
  read -r -a COMP_WORDS <<<"$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  "$fn" cdplan "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' ')
  if [ "$got" != "$want" ]; then
    echo "FAIL: '$line' completes to '$got', expected '$want'"
    fail=1
  fi
}
expect "cdplan val" "validate"
expect "cdplan validate p" "plan"
expect "cdplan validate s" "status submit"
expect "cdplan --db=x.db val" "validate"
expect "cdplan --db x.db hw l" "list"
expect "cdplan kernels select --for" "--format"
expect "cdplan serve --max-conns" "--max-conns --max-conns-per-ip"
expect "cdplan --ver" "--version"
expect "cdplan tok" "token"
# every command in the binary's table completes from its prefix
while IFS= read -r cmd; do
  first=${cmd%% *}
  expect "cdplan ${first:0:-1}" "$(compgen -W "$_cdplan_top" -- "${first:0:-1}" | sort | paste -sd' ')"
  if [ "$first" != "$cmd" ]; then
    sub=${cmd#* }
    got=$(_cdplan_subs "$first")
    [[ " $got " == *" $sub "* ]] || {
      echo "FAIL: '$cmd' is not in the completion's subcommands of $first ($got)"
      fail=1
    }
  fi
  [[ " $_cdplan_top " == *" $first "* ]] || {
    echo "FAIL: '$first' is not among the completion's commands"
    fail=1
  }
done < <("$bin" --commands | cut -f1)
[ "$fail" = 0 ] && echo "ok: completion"
exit $fail
