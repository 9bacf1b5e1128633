# Sourced by the scripts that download (cargo install, apt-get, npm install): a registry
# hiccup on a fresh machine should cost a retry, not the whole CI run. Three attempts, 5 s and
# 10 s apart. Wrap single commands only: `set -e` does not apply inside a function that runs
# as the condition of `&&`.
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
