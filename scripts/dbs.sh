#!/usr/bin/env bash
# Throwaway PostgreSQL and MariaDB servers for `isolde record` tests.
#
#   scripts/dbs.sh start [postgres|mariadb]  # start both, or one (installing
#                                            # Debian packages if missing)
#   scripts/dbs.sh stop    # stop both and delete their data and logs
#   scripts/dbs.sh status  # print the URLs of the running ones
#
# Each server listens on loopback only, on its own port, with its data,
# socket and log under $ISOLDE_DBS_DIR (default /tmp/isolde-dbs). `start` is
# idempotent: a server already running there is left alone. For each server
# that runs, `start` prints one line
#
#   ISOLDE_POSTGRES_URL=postgres://postgres@127.0.0.1:54329/postgres
#   ISOLDE_MYSQL_URL=mysql://isolde:isolde@127.0.0.1:33069/isolde
#
# (also written to $ISOLDE_DBS_DIR/urls.env); for one that cannot be started
# it prints `# cannot start <server>: <why>` on stderr and exits 1 after
# trying the other. As root, PostgreSQL runs as the `postgres` user (via
# runuser) and MariaDB as `mysql`.
#
# Environment: ISOLDE_DBS_STOCK=1 starts both with their default settings
# (PostgreSQL as initdb configures it, deadlock_timeout 1 s; MariaDB with
# its compiled-in defaults, innodb_lock_wait_timeout 50 s), as a user's
# server would be, instead of the tuned ones (fsync off, deadlock_timeout
# 50 ms, no log flush per commit): for measuring `isolde record` as users
# see it (scripts/bench-record.sh). ISOLDE_DBS_NO_INSTALL=1 never installs
# packages (the tests' private servers).
set -uo pipefail

dir=${ISOLDE_DBS_DIR:-/tmp/isolde-dbs}
pg_port=${ISOLDE_PG_PORT:-54329}
my_port=${ISOLDE_MYSQL_PORT:-33069}
pg_url="postgres://postgres@127.0.0.1:$pg_port/postgres"
my_url="mysql://isolde:isolde@127.0.0.1:$my_port/isolde"

note() { echo "# $*" >&2; }

as_root() { [ "$(id -u)" = 0 ]; }

apt_install() {
  [ -z "${ISOLDE_DBS_NO_INSTALL:-}" ] || return 1
  command -v apt-get >/dev/null 2>&1 || return 1
  as_root || return 1
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "$@" >"$dir/apt.log" 2>&1 ||
    { apt-get update -q >>"$dir/apt.log" 2>&1 && apt-get install -y -q "$@" >>"$dir/apt.log" 2>&1; }
}

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

# Runs a command as the PostgreSQL owner (postgres when root, else ourselves).
as_pg() {
  if as_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_pg() {
  local bin
  bin=$(pg_bin) || { apt_install postgresql && bin=$(pg_bin); } ||
    { note "cannot start postgresql: no initdb and could not install the postgresql package"; return 1; }
  local data="$dir/pg"
  if as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    echo "ISOLDE_POSTGRES_URL=$pg_url"
    return 0
  fi
  mkdir -p "$dir/pgrun"
  if as_root; then chown postgres "$dir/pgrun"; fi
  if [ ! -f "$data/PG_VERSION" ]; then
    rm -rf "$data"
    mkdir -p "$data"
    if as_root; then chown postgres "$data"; fi
    as_pg "$bin/initdb" -D "$data" -A trust -U postgres >"$dir/pg-initdb.log" 2>&1 ||
      { note "cannot start postgresql: initdb failed (see $dir/pg-initdb.log)"; return 1; }
  fi
  local tuning="-c max_connections=200 -c fsync=off -c deadlock_timeout=50ms"
  [ -n "${ISOLDE_DBS_STOCK:-}" ] && tuning=""
  as_pg "$bin/pg_ctl" -D "$data" -l "$dir/pgrun/pg.log" -w -t 60 \
    -o "-p $pg_port -k $dir/pgrun -c listen_addresses=127.0.0.1 $tuning" \
    start >/dev/null 2>&1 || { note "cannot start postgresql: pg_ctl start failed (see $dir/pgrun/pg.log)"; return 1; }
  echo "ISOLDE_POSTGRES_URL=$pg_url"
}

stop_pg() {
  local bin
  bin=$(pg_bin) || return 0
  [ -d "$dir/pg" ] || return 0
  as_pg "$bin/pg_ctl" -D "$dir/pg" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir/pg" "$dir/pgrun"
}

my_bin() {
  local b
  for b in mariadbd mysqld; do
    command -v "$b" >/dev/null 2>&1 && { command -v "$b"; return 0; }
    [ -x "/usr/sbin/$b" ] && { echo "/usr/sbin/$b"; return 0; }
  done
  return 1
}

my_client() {
  local c
  for c in mariadb mysql; do
    command -v "$c" >/dev/null 2>&1 && { "$c" --no-defaults -uroot --socket="$dir/myrun/my.sock" "$@"; return; }
  done
  return 1
}

my_alive() { my_client -e "SELECT 1" >/dev/null 2>&1; }

start_my() {
  local bin
  bin=$(my_bin) || { apt_install mariadb-server mariadb-client && bin=$(my_bin); } ||
    { note "cannot start mariadb: no mariadbd and could not install the mariadb-server package"; return 1; }
  local data="$dir/my"
  if my_alive; then
    echo "ISOLDE_MYSQL_URL=$my_url"
    return 0
  fi
  local user=()
  if as_root; then user=(--user=mysql); fi
  mkdir -p "$dir/myrun"
  if as_root; then chown mysql "$dir/myrun"; fi
  if [ ! -d "$data/mysql" ]; then
    rm -rf "$data"
    mkdir -p "$data"
    if as_root; then chown mysql "$data"; fi
    local install
    install=$(command -v mariadb-install-db || command -v mysql_install_db) ||
      { note "cannot start mariadb: no mariadb-install-db"; return 1; }
    "$install" --no-defaults --datadir="$data" "${user[@]}" --auth-root-authentication-method=normal \
      --skip-test-db >"$dir/my-install.log" 2>&1 ||
      { note "cannot start mariadb: mariadb-install-db failed (see $dir/my-install.log)"; return 1; }
  fi
  local tuning=(--innodb-flush-log-at-trx-commit=0 --max-connections=200)
  [ -n "${ISOLDE_DBS_STOCK:-}" ] && tuning=()
  setsid "$bin" --no-defaults --datadir="$data" "${user[@]}" --socket="$dir/myrun/my.sock" --port="$my_port" \
    --bind-address=127.0.0.1 --pid-file="$dir/myrun/my.pid" --log-error="$dir/myrun/my.log" \
    "${tuning[@]}" </dev/null >/dev/null 2>&1 &
  local i
  for i in $(seq 1 60); do
    my_alive && break
    sleep 1
  done
  my_alive || { note "cannot start mariadb: no answer after 60s (see $dir/myrun/my.log)"; return 1; }
  my_client -e "CREATE DATABASE IF NOT EXISTS isolde;
    CREATE USER IF NOT EXISTS 'isolde'@'127.0.0.1' IDENTIFIED BY 'isolde';
    GRANT ALL ON isolde.* TO 'isolde'@'127.0.0.1';" ||
    { note "cannot start mariadb: could not create the isolde user"; return 1; }
  echo "ISOLDE_MYSQL_URL=$my_url"
}

stop_my() {
  if [ -f "$dir/myrun/my.pid" ]; then
    local pid
    pid=$(cat "$dir/myrun/my.pid")
    kill "$pid" 2>/dev/null || true
    local i
    for i in $(seq 1 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
  fi
  rm -rf "$dir/my" "$dir/myrun"
}

case "${1:-}" in
  start)
    which=${2:-both}
    case "$which" in
      both | postgres | mariadb) ;;
      *) echo "usage: $0 start [postgres|mariadb]" >&2; exit 2 ;;
    esac
    mkdir -p "$dir"
    chmod 755 "$dir"
    status=0
    out="" out2=""
    if [ "$which" != mariadb ]; then
      out=$(start_pg) || status=1
      [ -n "$out" ] && echo "$out"
    fi
    if [ "$which" != postgres ]; then
      out2=$(start_my) || status=1
      [ -n "$out2" ] && echo "$out2"
    fi
    printf '%s\n' "$out" "$out2" | grep . >"$dir/urls.env" || true
    exit $status
    ;;
  stop)
    stop_pg
    stop_my
    rm -f "$dir/urls.env" "$dir/pg-initdb.log" "$dir/my-install.log" "$dir/apt.log"
    rmdir "$dir" 2>/dev/null || true
    ;;
  status)
    [ -f "$dir/urls.env" ] && cat "$dir/urls.env"
    ;;
  *)
    echo "usage: $0 start [postgres|mariadb] | stop | status" >&2
    exit 2
    ;;
esac
