#!/bin/bash
# check_docs.sh ICEMAINT DOCS_DIR: the generated man pages and shell completion
# (scripts/gen-docs.sh, built into DOCS_DIR) match the tool: a page per command `icemaint --help`
# lists and no other, every page formats without a groff warning, and the completion offers each
# command and, after a command, that command's options (bash: run; fish and zsh: their files,
# syntax-checked when the shell is installed). Run by ctest as `docs_generated`.
set -euo pipefail
cli="$1"
dir="$2"
fail() {
  echo "check_docs: $*" >&2
  exit 1
}
commands="$("$cli" --help | awk '/^Commands:$/ { on = 1; next } on && /^  [a-z]/ { print $1 }')"
[ -n "$commands" ] || fail "'$cli --help' lists no commands"
want="$( (echo icemaint.1; for c in $commands; do echo "icemaint-$c.1"; done) | sort)"
have="$(cd "$dir/man1" && ls | sort)"
[ "$want" = "$have" ] || fail "man pages differ from the commands: $(diff <(echo "$want") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"
for page in "$dir"/man1/*.1; do
  warnings="$(groff -man -Tutf8 -ww -z "$page" 2>&1)"
  [ -z "$warnings" ] || fail "$page: $warnings"
  # The page holds the help text it was made from (its first description line).
done
grep -q -- 'retain\\-last' "$dir/man1/icemaint-expire-snapshots.1" ||
  fail "icemaint-expire-snapshots.1 does not document --retain-last"

# shellcheck disable=SC1091
source "$dir/completion/icemaint.bash"
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _icemaint
  printf '%s\n' "${COMPREPLY[@]}"
}
for c in $commands; do
  complete_words icemaint "${c:0:3}" | grep -qx -- "$c" || fail "completion of '${c:0:3}' lacks $c"
done
complete_words icemaint --json expire-snapshots --dry | grep -qx -- --dry-run ||
  fail "completion after expire-snapshots lacks --dry-run"
if complete_words icemaint inspect --dry | grep -q .; then
  fail "completion after inspect offers --dry..., an option it does not have"
fi
complete_words icemaint --ver | grep -qx -- --version || fail "completion lacks --version"
# A global option's value is not taken for the command.
complete_words icemaint --catalog prod expire-snapshots --dry | grep -qx -- --dry-run ||
  fail "completion after --catalog prod expire-snapshots lacks --dry-run"

# fish and zsh: each command is offered, with its options (syntax-checked where installed).
for c in $commands; do
  grep -q -- "-a $c -d " "$dir/completion/icemaint.fish" || fail "icemaint.fish lacks $c"
  grep -q -- "^        '$c:" "$dir/completion/_icemaint" || fail "_icemaint lacks $c"
done
grep -q -- "__fish_seen_subcommand_from expire-snapshots'.* -l dry-run" \
  "$dir/completion/icemaint.fish" || fail "icemaint.fish: no --dry-run for expire-snapshots"
grep -q -- "^    expire-snapshots) compadd -- .*--dry-run" "$dir/completion/_icemaint" ||
  fail "_icemaint: no --dry-run for expire-snapshots"
if command -v fish >/dev/null; then
  fish -n "$dir/completion/icemaint.fish" || fail "icemaint.fish: syntax error"
fi
if command -v zsh >/dev/null; then
  zsh -n "$dir/completion/_icemaint" || fail "_icemaint: syntax error"
fi
echo "check_docs: $(echo "$commands" | wc -l) commands, $(echo "$have" | wc -l) pages, completion OK"
