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

# Puts the calling shell, and so every process it starts from then on, at a lower CPU priority, for background work
# (builds) beside the tests: lower_cpu_priority NAME SHARE, where SHARE is its weight against a normal process's 1024
# (2: only the CPU nothing else wants). `nice` alone does not do it: SwiftPM starts its compilers at nice 0 whatever
# its own nice value. So, as root with a writable cpu cgroup (v1 or v2), it moves the shell into the cgroup
# "portal-auth-NAME" with that weight (v1 cpu.shares; v2 cpu.weight, scaled to its 100), which its children cannot
# leave; otherwise nice 19. Prints which one it got. Call it in a subshell before the work:
# ( lower_cpu_priority app-package 2; exec swift build ... )
lower_cpu_priority() {
    local name="$1" share="$2" group
    renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
    for group in "/sys/fs/cgroup/cpu/portal-auth-$name" "/sys/fs/cgroup/portal-auth-$name"; do
        [ -w "$(dirname "$group")" ] || continue
        mkdir -p "$group" 2>/dev/null || continue
        if [ -f "$group/cpu.shares" ]; then
            echo "$share" >"$group/cpu.shares" 2>/dev/null || continue
        elif [ -f "$group/cpu.weight" ]; then
            echo $(( share * 100 / 1024 > 0 ? share * 100 / 1024 : 1 )) >"$group/cpu.weight" 2>/dev/null || continue
        else
            rmdir "$group" 2>/dev/null || true
            continue
        fi
        if echo "$BASHPID" >"$group/cgroup.procs" 2>/dev/null; then
            echo "lower CPU priority: cgroup $group, weight $share of a normal process's 1024"
            return 0
        fi
    done
    echo "lower CPU priority: nice 19 (no writable cpu cgroup here; SwiftPM's compilers run at nice 0 anyway)"
}

# Runs scripts/authserver for an instance of its own in run directory DIR (so its own port, database and counters),
# without the caller's PORTAL_AUTH_TEST_* settings (those of another instance): authserver_instance DIR start|stop|env.
authserver_instance() {
    local directory="$1" unset=() name
    shift
    for name in $(compgen -e); do [[ "$name" != PORTAL_AUTH_TEST_* ]] || unset+=(-u "$name"); done
    env "${unset[@]}" PORTAL_AUTH_RUN_DIR="$directory" "$PROJECT_ROOT/scripts/authserver" "$@"
}

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
