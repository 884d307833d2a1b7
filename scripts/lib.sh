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
    apt_get update -q
    apt_get install -y -q --no-install-recommends "${missing[@]}"
}

# How long apt_get waits for the package manager's locks, in seconds (PORTAL_AUTH_APT_LOCK_WAIT), and how often it
# looks again (PORTAL_AUTH_APT_LOCK_POLL).
APT_LOCK_WAIT="${PORTAL_AUTH_APT_LOCK_WAIT:-900}"
APT_LOCK_POLL="${PORTAL_AUTH_APT_LOCK_POLL:-5}"

# apt-get "$@" (through sudo when not root, non-interactive, its output shown only when it fails) that waits while
# another package manager holds dpkg's or the package lists' lock — a fresh Debian machine runs its unattended
# upgrades at boot — saying so once, for at most APT_LOCK_WAIT seconds, instead of failing at once. apt-get's own
# DPkg::Lock::Timeout waits for dpkg's lock; a lock it does not wait for (the package lists' during `update`) is
# tried again every APT_LOCK_POLL seconds until the same deadline.
apt_get() {
    local sudo="" output code remaining deadline=$((SECONDS + APT_LOCK_WAIT)) told=false
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    while true; do
        if [ "$told" = false ] && [ -n "$(apt_lock_holders)" ]; then
            log "waiting up to ${APT_LOCK_WAIT} s for the package manager's lock, held by: $(apt_lock_holders)" \
                "(a fresh machine runs its unattended upgrades at boot)"
            told=true
        fi
        code=0
        remaining=$((deadline - SECONDS > 0 ? deadline - SECONDS : 0))
        output="$($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$remaining" "$@" 2>&1)" \
            || code=$?
        [ "$code" -eq 0 ] && return 0
        if grep -qE 'Could not get lock|Unable to lock|Unable to acquire the dpkg frontend lock' <<<"$output"; then
            if [ "$SECONDS" -lt "$deadline" ]; then
                if [ "$told" = false ]; then
                    log "waiting up to ${APT_LOCK_WAIT} s for the package manager's lock:" \
                        "$(grep -m1 -E 'Could not get lock|Unable to' <<<"$output")"
                    told=true
                fi
                sleep "$APT_LOCK_POLL"
                continue
            fi
            printf '%s\n' "$output" >&2
            log "error: apt-get $1: the package manager's lock was still held after ${APT_LOCK_WAIT} s." \
                "Let the other package manager finish (systemctl status unattended-upgrades apt-daily-upgrade)," \
                "or wait longer with PORTAL_AUTH_APT_LOCK_WAIT=SECONDS, then run this again."
            return "$code"
        fi
        printf '%s\n' "$output" >&2
        log "error: apt-get $1 failed (exit $code; its output is above)"
        return "$code"
    done
}

# The processes that may hold the package manager's locks now ("unattended-upgr (1234)"), or nothing.
apt_lock_holders() {
    local pid name holders=()
    for pid in $(pgrep -x 'apt|apt-get|aptitude|dpkg|unattended-upgr' 2>/dev/null || true); do
        name="$(cat "/proc/$pid/comm" 2>/dev/null)" || continue
        holders+=("$name ($pid)")
    done
    echo "${holders[*]}"
}

# Background work a script started (its process IDs, added by the script): stop_background_jobs stops what is still
# running of it, with every process it started, when the script ends early (a failed step, Ctrl-C), so that no build
# goes on using the machine after the run that wanted it is gone. A background job of a script ignores SIGINT, so
# Ctrl-C alone never reaches it.
BACKGROUND_JOBS=()

# Stops the jobs in BACKGROUND_JOBS that still run and everything they started: the whole tree is frozen first
# (SIGSTOP, so that nothing starts another process meanwhile), then sent SIGTERM and let go on to receive it; what
# still runs 10 s later (SIGTERM blocked or ignored) gets SIGKILL.
stop_background_jobs() {
    local pid tree=() living=() tries
    for pid in "${BACKGROUND_JOBS[@]}"; do
        # Still this script's child (a finished job's process ID may belong to another process by now).
        [ "$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null)" = "$$" ] || continue
        kill -STOP "$pid" 2>/dev/null || true
        # shellcheck disable=SC2207
        tree+=($(process_tree "$pid"))
    done
    [ ${#tree[@]} -eq 0 ] && return 0
    log "stopping the background work this run started: ${#tree[@]} processes (${tree[*]})"
    kill -STOP "${tree[@]}" 2>/dev/null || true
    kill -TERM "${tree[@]}" 2>/dev/null || true
    kill -CONT "${tree[@]}" 2>/dev/null || true
    for ((tries = 0; tries < 100; tries++)); do
        living=()
        for pid in "${tree[@]}"; do
            # Gone, or a zombie waiting for its parent: stopped either way.
            [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo Z)" = Z ] || living+=("$pid")
        done
        [ ${#living[@]} -eq 0 ] && return 0
        sleep 0.1
    done
    log "still running 10 s after SIGTERM, killed: ${living[*]}"
    kill -KILL "${living[@]}" 2>/dev/null || true
}

# PID and its descendants, one a line; each is frozen (SIGSTOP) as it is found, so none starts another meanwhile.
process_tree() {
    local child
    echo "$1"
    for child in $(pgrep -P "$1" 2>/dev/null || true); do
        kill -STOP "$child" 2>/dev/null || true
        process_tree "$child"
    done
}
