# Sourced by the scripts that install things on a fresh machine.

# retry CMD…: a registry hiccup on a fresh machine should cost a retry, not the whole CI run.
# Three attempts, 5 s and 10 s apart. Wrap single commands only: `set -e` does not apply
# inside a function that runs as the condition of `&&`.
retry() {
  local attempt
  for attempt in 1 2 3; do
    "$@" && return 0
    [ "$attempt" -lt 3 ] || break
    echo "retrying in $((attempt * 5)) s (attempt $attempt failed): $*" >&2
    sleep $((attempt * 5))
  done
  return 1
}

# npm_install DIR: `npm install`, not `npm ci` (the registry lacks some of @napi-rs/cli's
# other-platform optional packages, which `npm ci` refuses); skipped when node_modules is
# newer than the lock file.
npm_install() {
  local dir=$1
  [ -f "$dir/package.json" ] || return 0
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && retry npm install --no-audit --no-fund --loglevel=error)
  fi
}

# apt_install PKG…: Debian packages, as root or through sudo (which would drop an exported
# DEBIAN_FRONTEND, hence `env`).
apt_install() {
  local sudo_=""
  [ "$(id -u)" = 0 ] || sudo_=sudo
  retry $sudo_ apt-get update -qq
  retry $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}
