# Shared helpers for the project's scripts. Sourced, not run.
set -euo pipefail

PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PROJECT_ROOT
# Runtime state of test services (pids, ports, logs); git-ignored.
RUN_DIR="${PORTAL_AUTH_RUN_DIR:-$PROJECT_ROOT/.run}"
export RUN_DIR
# The Python virtual environment for the test authorization server and the browser driver.
VENV_DIR="${PORTAL_AUTH_VENV:-$PROJECT_ROOT/.venv}"
export VENV_DIR

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Installs the Debian packages given as arguments when any is missing (idempotent).
ensure_debian_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}
