#!/bin/bash
# install_test.sh SRC_DIR BUILD_DIR: `make install` into a temporary DESTDIR
# puts the binary, the man page and the bash completion under PREFIX; the
# installed binary runs; the man page renders (man -l and groff, no
# warnings) with every command of `cdplan --commands` in it.
set -u
src=$1
build=$2
fail=0
bad() {
  echo "FAIL: $*"
  fail=1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/stage
prefix=/opt/cdplan-test
if ! make -s -C "$src" install BUILD="$build" DESTDIR="$dest" PREFIX="$prefix" >"$tmp/make.log" 2>&1; then
  cat "$tmp/make.log"
  bad "make install failed"
fi
root=$dest$prefix
bin=$root/bin/cdplan
man1=$root/share/man/man1/cdplan.1
comp=$root/share/bash-completion/completions/cdplan
for f in "$bin" "$man1" "$comp"; do [ -s "$f" ] || bad "not installed: $f"; done
[ -x "$bin" ] || bad "$bin is not executable"
# nothing outside DESTDIR: the prefix itself must not have been created
[ -e "$prefix" ] && bad "$prefix exists outside DESTDIR"
"$bin" --version | grep -q '^cdplan [0-9]' || bad "installed cdplan --version"
if [ -s "$man1" ]; then
  LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$man1" >"$tmp/man.txt" 2>"$tmp/man.err" || bad "man -l exit $?"
  [ -s "$tmp/man.err" ] && bad "man -l said: $(head -3 "$tmp/man.err")"
  groff -man -Tutf8 -z "$man1" 2>"$tmp/groff.err" || bad "groff exit $?"
  [ -s "$tmp/groff.err" ] && bad "groff said: $(head -3 "$tmp/groff.err")"
  for section in NAME SYNOPSIS DESCRIPTION COMMANDS ENVIRONMENT; do
    grep -q "^$section" "$tmp/man.txt" || bad "man page has no $section section"
  done
  # every command of the table, with its own --help text's first words
  n=0
  while IFS= read -r cmd; do
    n=$((n + 1))
    grep -Eq "^ *cdplan +${cmd/ / +}( |$)" "$tmp/man.txt" || bad "man page lacks 'cdplan $cmd'"
  done < <("$bin" --commands | cut -f1)
  [ "$n" -ge 20 ] || bad "only $n commands listed by --commands"
  grep -q "Rank Triton GEMM tile configs" "$tmp/man.txt" || bad "man page lacks kernels select's help"
fi
[ "$fail" = 0 ] && echo "ok: installed under DESTDIR, man page renders"
exit $fail
