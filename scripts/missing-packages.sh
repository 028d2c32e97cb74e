# Sourced by scripts/ensure-leveldb and scripts/ensure-demo: `need PACKAGE` collects the
# Debian packages that are missing; `install_missing` installs them with apt-get when we
# are root, otherwise stops and prints the exact command to run.
missing=""
need() { # need PACKAGE: add it to the install list once
  case "$missing " in *" $1 "*) ;; *) missing="$missing $1" ;; esac
}
# need_tools TOOL:PACKAGE...: the package of each tool not on PATH.
need_tools() {
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || need "${pair#*:}"
  done
}
# LevelDB's C API, compiled and linked: libleveldb-dev (1.23 on Debian 12).
need_leveldb_dev() {
  printf '#include <leveldb/c.h>\nint main(void){leveldb_filterpolicy_destroy(leveldb_filterpolicy_create_bloom(10));return 0;}\n' \
    | ${CC:-cc} -x c - -o /dev/null -lleveldb >/dev/null 2>&1 || need libleveldb-dev
}
install_missing() {
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing:$missing" >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2
  else
    echo "error: missing:$missing" >&2
    echo "install them with:  sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
  fi
}
