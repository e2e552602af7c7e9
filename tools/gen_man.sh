#!/bin/sh
# gen_man.sh CDPLAN OUT: writes the cdplan(1) man page with help2man from
# `cdplan --help` and `--version`, plus a COMMANDS section made of every
# command's own `cdplan COMMAND --help` (the commands from `cdplan --commands`).
# The usage list of `cdplan --help` is left to COMMANDS (help2man would run
# its lines together); the SYNOPSIS is written here.
set -eu
bin=$1
out=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# roff-escape: backslash, hyphen, a leading dot or quote
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
{
  echo '[SYNOPSIS]'
  echo '.B cdplan'
  printf '%s\n' '[\fB\-\-db\fR \fIPATH\fR] [\fB\-\-hw\fR \fINAME\fR] [\fB\-\-server\fR \fIURL\fR] \fICOMMAND\fR [\fIARGS\fR...]'
  echo '.br'
  echo '.B cdplan'
  printf '%s\n' '\fB\-\-help\fR | \fB\-\-version\fR | \fICOMMAND\fR \fB\-\-help\fR'
  echo '[COMMANDS]'
  echo '.ad l'
  "$bin" --commands | cut -f1 | while IFS= read -r cmd; do
    # shellcheck disable=SC2086 # the two words of "hw list" are two arguments
    "$bin" $cmd --help >"$dir/cmd"
    echo '.TP'
    # the usage: the lines up to the first blank one, joined
    awk '/^$/ { exit } { sub(/^Usage: /, ""); gsub(/^ +| +$/, ""); u = u (u ? " " : "") $0 }
         END { print u }' "$dir/cmd" | esc | sed 's/^/.B /'
    awk 'f { print } /^$/ { f = 1 }' "$dir/cmd" | esc | sed 's/^$/.br/'
  done
  echo '[ENVIRONMENT]'
  echo '.TP'
  echo '.B CDPLAN_DB'
  printf '%s\n' 'The database when \-\-db is not given (default ./cdplan.db).'
  echo '.TP'
  echo '.B CDPLAN_TOKEN'
  printf '%s\n' 'The Bearer token sent with \-\-server.'
  echo '[SEE ALSO]'
  echo 'README.md and docs/ in the cdplan source tree.'
} >"$dir/inc.h2m"
# help2man runs this wrapper: `cdplan --help` without its usage list
cat >"$dir/cdplan" <<WRAP
#!/bin/sh
if [ "\$1" = --help ]; then
  "$bin" --help | awk '/^Usage:\$/ { skip = 1; next } skip && /^\$/ { skip = 0; next } !skip'
else
  exec "$bin" "\$@"
fi
WRAP
chmod +x "$dir/cdplan"
help2man --no-info --no-discard-stderr --name 'hardware-model co-design planner' \
  --section 1 --include "$dir/inc.h2m" --output "$out.tmp" "$dir/cdplan"
mv "$out.tmp" "$out"
