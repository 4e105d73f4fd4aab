#!/bin/sh
# Compile bot.c and run it. The binary goes to a private temp folder, removed on exit, so the
# bot's own folder is never written (a registered snapshot stays exactly as submitted).
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' INT TERM
cc -O2 -o "$dir/bot" bot.c
"$dir/bot" "$@"
