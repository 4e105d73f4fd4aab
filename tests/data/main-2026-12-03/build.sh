#!/bin/sh
# How tests/data/main-2026-12-03.sqlite was written (see ../README.md), with the code of commit
# 2c160d9 (ARENA/ in the configs stands for its checkout):
#   sh build.sh /path/to/checkout-of-2c160d9 /var/tmp/legacy
# The work folder must be outside /tmp: the sandbox gives bots a fresh /tmp, where they would
# not find their snapshots.
set -e
ARENA=$1
WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH=$ARENA COLUMNS=200
mkdir -p "$WORK/src/rnd" "$WORK/src/heur" "$WORK/src/heur2"
cp "$ARENA/bots/random_bot.py" "$ARENA/bots/arenabot.py" "$WORK/src/rnd/"
cp "$ARENA/bots/random.toml" "$WORK/src/rnd/bot.toml"
cp "$ARENA/bots/xeri_bot.py" "$ARENA/bots/arenabot.py" "$WORK/src/heur/"
cp "$ARENA/bots/xeri_heuristic.toml" "$WORK/src/heur/bot.toml"
cp "$WORK"/src/heur/* "$WORK/src/heur2/"
sed -i 's/^version = "1"/version = "2"/; s/^description = .*/description = "Xeri heuristic, version 2 (a comment changed)."/' "$WORK/src/heur2/bot.toml"
echo "# v2" >> "$WORK/src/heur2/xeri_bot.py"
for f in rr swiss ladder; do sed "s#ARENA/#$ARENA/#g" "$HERE/$f.toml" > "$WORK/$f.toml"; done
chmod -R a+rX "$WORK"
cd "$WORK"
DB=$WORK/legacy.db
A="python -m arena"
$A bot add src/rnd --db "$DB"
$A bot add src/heur --db "$DB"
$A run rr.toml --db "$DB" --executor serial
$A run swiss.toml --db "$DB" --executor serial
$A ladder start ladder.toml --db "$DB" --games 16
$A bot add src/heur2 --db "$DB"                  # a new version: the ladder retires the old one
$A ladder resume ladder.toml --db "$DB" --games 16
$A leaderboard xeri --db "$DB"                   # stores the pooled leaderboard
$A bot remove random@1 --db "$DB"
sqlite3 "$DB" vacuum
