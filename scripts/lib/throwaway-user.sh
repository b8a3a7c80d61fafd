# shellcheck shell=bash
# A throwaway local user with a random password, for the quick-start demo and the
# benchmarks: created with useradd/chpasswd, given an askpass program that answers
# with its password from a 0600 file (never argv, never the environment), and run
# inside its own scripts/secret-session. `tu_cleanup` removes everything; callers
# install it as an EXIT trap. Needs root, and the keygate binary in $1 of tu_create.

tu_user="" tu_home="" tu_stage="" tu_private="" tu_created=0

tu_say() { printf '%s: %s\n' "${tu_name:-keygate}" "$*"; }

# tu_create KEYGATE_BINARY SECRET_SESSION_SCRIPT
tu_create() {
    local keygate=$1 session=$2 password
    tu_user="kg$(tr -dc 'a-z0-9' </dev/urandom | head -c 8 || true)"
    # World-readable staging: what the user runs must be readable by it (the
    # checkout may sit under a 0700 /root).
    tu_stage=$(mktemp -d /tmp/keygate-user.XXXXXXXX)
    chmod 0755 "$tu_stage"
    install -m 0755 "$session" "$tu_stage/secret-session"
    mkdir -m 0755 "$tu_stage/bin"
    install -m 0755 "$keygate" "$tu_stage/bin/keygate"
    useradd -m -s /bin/bash -c "Keygate throwaway user" "$tu_user"
    tu_created=1
    tu_home=$(getent passwd "$tu_user" | cut -d: -f6)
    password=$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24 || true)
    printf '%s:%s\n' "$tu_user" "$password" | chpasswd
    tu_private="$tu_stage/private"
    mkdir -m 0700 "$tu_private"
    (umask 077; printf '%s\n' "$password" >"$tu_private/password")
    password=""
    printf '#!/bin/sh\n# askpass: the prompt is $1 (ignored); the answer goes to stdout.\nexec cat "%s/password"\n' \
        "$tu_private" >"$tu_private/askpass"
    chmod 0700 "$tu_private/askpass"
    chown -R "$tu_user:" "$tu_private"
}

# tu_run SCRIPT_FILE: runs the script as the user, with no controlling terminal
# (so keygate uses the askpass program), in the user's own private session.
tu_run() {
    local steps=$1
    chmod 0644 "$steps"
    runuser -u "$tu_user" -- env -i HOME="$tu_home" USER="$tu_user" LOGNAME="$tu_user" \
        PATH="$tu_stage/bin:/usr/local/bin:/usr/bin:/bin" KEYGATE_ASKPASS="$tu_private/askpass" \
        setsid -w "$tu_stage/secret-session" bash "$steps" </dev/null
}

# tu_run_at_terminal SCRIPT_FILE: runs the script as the user on a new pseudo-terminal,
# in the user's own private session, with no askpass program: keygate asks for the
# password at the terminal, and type-password types it at each "Password for USER: "
# prompt once echo is off, as a person would. The screen is copied to stdout.
tu_run_at_terminal() {
    local steps=$1
    chmod 0644 "$steps"
    "$(dirname -- "${BASH_SOURCE[0]}")/type-password" "$tu_private/password" "Password for $tu_user: \$" -- \
        runuser -u "$tu_user" -- env -i HOME="$tu_home" USER="$tu_user" LOGNAME="$tu_user" TERM=dumb \
        PATH="$tu_stage/bin:/usr/local/bin:/usr/bin:/bin" "$tu_stage/secret-session" bash "$steps" </dev/null
}

# Every step may fail without stopping the others (callers run under `set -e`, and pkill
# answers 1 when the user has no process left): the user is always removed.
tu_cleanup() {
    if ((tu_created)); then
        runuser -u "$tu_user" -- keyctl clear @u >/dev/null 2>&1 || true
        pkill -KILL -U "$tu_user" >/dev/null 2>&1 || true
        sleep 0.2
        userdel -f -r "$tu_user" >/dev/null 2>&1 || true
        tu_created=0
    fi
    [[ -n "$tu_stage" ]] && rm -rf -- "$tu_stage"
    tu_stage=""
}
