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

# Puts the calling shell, and so every process it starts from then on, at the lowest CPU priority this machine
# allows, for background work (builds) that must take only the CPU that the tests beside it leave idle. `nice` alone
# does not do it: SwiftPM starts its compilers at nice 0 whatever its own nice value. So, as root with a writable cpu
# cgroup (v1 or v2), it moves the shell into the cgroup "portal-auth-background" with the smallest CPU share (v1
# cpu.shares 2, v2 cpu.weight 1, against 1024 and 100 of everything else), which its children cannot leave; otherwise
# nice 19. Prints which one it got. Call it in a subshell before the work: ( lowest_cpu_priority; exec swift build ... )
lowest_cpu_priority() {
    local group
    renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
    for group in /sys/fs/cgroup/cpu/portal-auth-background /sys/fs/cgroup/portal-auth-background; do
        [ -w "$(dirname "$group")" ] || continue
        mkdir -p "$group" 2>/dev/null || continue
        if [ -f "$group/cpu.shares" ]; then
            echo 2 >"$group/cpu.shares" 2>/dev/null || continue
        elif [ -f "$group/cpu.weight" ]; then
            echo 1 >"$group/cpu.weight" 2>/dev/null || continue
        else
            rmdir "$group" 2>/dev/null || true
            continue
        fi
        if echo "$BASHPID" >"$group/cgroup.procs" 2>/dev/null; then
            echo "lowest CPU priority: cgroup $group"
            return 0
        fi
    done
    echo "lowest CPU priority: nice 19 (no writable cpu cgroup here; SwiftPM's compilers run at nice 0 anyway)"
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
