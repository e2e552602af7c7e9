#!/bin/sh
# gen_completion.sh CDPLAN OUT: writes the bash completion for cdplan from the
# binary's own command table (`cdplan --commands`: a command a line, its long
# options after tabs), so the completion cannot drift from the commands.
set -eu
bin=$1
out=$2
tmp=$out.tmp
"$bin" --commands >"$tmp.list"
{
  echo '# bash completion for cdplan. Generated at build time from `cdplan --commands`'
  echo '# by tools/gen_completion.sh; do not edit.'
  awk -F'\t' '
    { split($1, w, " "); if (!(w[1] in seen)) { seen[w[1]] = 1; top = top (top ? " " : "") w[1] }
      if (w[2] != "") subs[w[1]] = subs[w[1]] (subs[w[1]] ? " " : "") w[2]
      o = ""; for (i = 2; i <= NF; i++) o = o (o ? " " : "") $i
      opts[$1] = o " --help"; order[++n] = $1 }
    END {
      print "_cdplan_top=\"" top " help\""
      print "_cdplan_subs() {\n  case $1 in"
      for (g in subs) print "    " g ") echo \"" subs[g] "\" ;;"
      print "  esac\n}"
      print "_cdplan_opts() {\n  case $1 in"
      for (i = 1; i <= n; i++) print "    \"" order[i] "\") echo \"" opts[order[i]] "\" ;;"
      print "  esac\n}"
    }' "$tmp.list"
  cat <<'FN'
_cdplan() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev= words=() i w
  [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  case $prev in
    --db | --token-file | --out) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --web) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
    --hw | --server | --listen | --module | --scope | --name | --wait | --format | --backend | \
      --rows | --gpus | --steps | --warmup | --threads | --rate | --burst | --timeout) return 0 ;;
  esac
  # the words before the cursor that are not options or option values
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      --db | --hw | --server) i=$((i + 1)) ;;
      -*) ;;
      *) words+=("$w") ;;
    esac
  done
  if [ ${#words[@]} -eq 0 ]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--db --hw --server --help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$_cdplan_top" -- "$cur"))
    fi
    return 0
  fi
  local subs cmd=${words[0]}
  subs=$(_cdplan_subs "$cmd")
  if [ -n "$subs" ]; then
    if [ ${#words[@]} -eq 1 ]; then
      COMPREPLY=($(compgen -W "$subs" -- "$cur"))
      return 0
    fi
    cmd="$cmd ${words[1]}"
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_cdplan_opts "$cmd")" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}
complete -o filenames -F _cdplan cdplan
FN
} >"$tmp"
rm -f "$tmp.list"
mv "$tmp" "$out"
